/**
 * A streamed answer's start leaves the node in one write: the HTTP/2 response HEADERS frame with the
 * first event's DATA frame (the h2c LLM port), the status line and headers with the first event
 * (HTTP/1.1). The gateway's first-token path then reads the node once (docs/benchmarks.md, issue 20,
 * second pass). Read off raw sockets, one 'data' chunk per read of the socket: on loopback a single
 * write arrives in a single read, two writes (headers first) arrive in two as soon as the reader is
 * waiting for them, as it is here.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { llmRepository, type LlmRepository } from './support.js';

let node: TestNode;
let repo: LlmRepository;

beforeAll(async () => {
  repo = await llmRepository();
  node = await startTestNode(repo.dir, ['--llm-h2c-port', '0']);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

const BODY = JSON.stringify({ model: 'token_stream', prompt: 'a b c d e f', stream: true, max_tokens: 4 });

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** HPACK literals without indexing, new names, no Huffman (all lengths here are under 127). */
function headerBlock(headers: [string, string][]): Buffer {
  return Buffer.concat(headers.map(([name, value]) => Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])));
}

interface ReadFrame {
  readonly type: number;
  readonly stream: number;
  readonly payload: Buffer;
  /** The socket read (chunk number) that completed the frame. */
  readonly read: number;
}

/** Sends one streamed completion over h2c from a raw socket; answers the frames read until the stream's END_STREAM. */
function h2Completion(port: number): Promise<ReadFrame[]> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port, noDelay: true });
    const frames: ReadFrame[] = [];
    let pending = Buffer.alloc(0);
    let reads = 0;
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
          frame(4, 0, 0, Buffer.alloc(0)),
          frame(1, 4, 1, headerBlock([[':method', 'POST'], [':scheme', 'http'], [':authority', '127.0.0.1'], [':path', '/v1/completions'], ['content-type', 'application/json'], ['content-length', String(BODY.length)]])),
          frame(0, 1, 1, Buffer.from(BODY)),
        ]),
      );
    });
    socket.on('data', (chunk: Buffer) => {
      reads += 1;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 9) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < 9 + length) break;
        const type = pending[3]!;
        const flags = pending[4]!;
        const stream = pending.readUInt32BE(5) & 0x7fffffff;
        frames.push({ type, stream, payload: pending.subarray(9, 9 + length), read: reads });
        pending = pending.subarray(9 + length);
        if (type === 4 && (flags & 1) === 0) socket.write(frame(4, 1, 0, Buffer.alloc(0))); // SETTINGS ACK
        if (stream === 1 && (flags & 1) === 1 && (type === 0 || type === 1)) {
          socket.destroy();
          resolve(frames);
        }
        if (type === 3 && stream === 1) reject(new Error('the node reset the stream'));
      }
    });
  });
}

describe('a streamed answer\'s start leaves the node in one write', () => {
  it('HTTP/2: the response HEADERS frame arrives in the same read as the first event\'s DATA frame', async () => {
    const frames = await h2Completion(node.llmH2cPort!);
    const headers = frames.find((f) => f.type === 1 && f.stream === 1);
    const firstData = frames.find((f) => f.type === 0 && f.stream === 1 && f.payload.length > 0);
    expect(headers).toBeDefined();
    expect(firstData?.payload.toString()).toMatch(/^data: \{/);
    expect(firstData!.read).toBe(headers!.read);
  });

  it('HTTP/1.1: the status line and headers arrive in the same read as the first event', async () => {
    const first = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: node.httpPort!, noDelay: true });
      socket.on('error', reject);
      socket.on('connect', () =>
        socket.write(`POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`),
      );
      socket.once('data', (chunk: Buffer) => {
        socket.destroy();
        resolve(chunk.toString());
      });
    });
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toContain('\r\n\r\n');
    expect(first.slice(first.indexOf('\r\n\r\n'))).toContain('data: {');
  });
});
