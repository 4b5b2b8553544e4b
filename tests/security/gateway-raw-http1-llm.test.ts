/**
 * The LLM routes on the gateway's raw HTTP/1.1 front door (adapters/node-http/llm-raw-front.ts), against the
 * same routes on node:http (native-llm.ts, `llm.rawFront: false`), with hostile clients: the same bytes for the
 * same stream, a request pipelined behind a stream answered after it, a client that half-closes mid-stream (the
 * node's request is cancelled), a client that floods bytes behind a stream without reading (the gateway stops
 * reading it), a body trickled byte by byte (408), and bodies over the raw bound and over the server's limit (refused 400, as the LLM routes refuse it).
 * A real gateway, a real SSE node double on loopback, raw sockets as clients.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble, type SseScript } from '../../gateway/test/support/sse-node-double.js';

const KEY = 'tsk_sec-raw-llm';
const SHORT: SseScript = { pieces: [openAIChunk('one'), openAIChunk(' two'), 'data: [DONE]\n\n'], gapMs: 20 };
/** Long enough that the test, not the node, ends it. */
const LONG: SseScript = { pieces: Array.from({ length: 400 }, (_, i) => openAIChunk(` w${i}`)), gapMs: 100 };
const MAX_BODY_BYTES = 256 * 1024;

function streamRequest(prompt = 'go', extraHeaders = ''): string {
  const body = JSON.stringify({ model: 'm', prompt, stream: true });
  return `POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\n${extraHeaders}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

async function open(gateway: RunningGateway): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.on('data', (chunk: Buffer) => void (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return { socket, received: () => text };
}

/** The answer with what differs per request taken out: the date, the request id, the chunk sizes' line of it. */
function normalized(answer: string): string {
  return answer.replace(/\r\nDate: [^\r]*/i, '\r\nDate: -').replace(/\r\nx-request-id: [^\r]*/i, '\r\nx-request-id: -');
}

/** Ends of chunked answers seen so far (each stream ends with the last chunk). */
const lastChunks = (text: string): number => text.split('\r\n0\r\n\r\n').length - 1;

describe('LLM routes on the raw HTTP/1.1 front door, against node:http (gateway + SSE node double)', () => {
  let double: SseNodeDouble;
  const gateways: Record<'raw' | 'nodeHttp', RunningGateway> = {} as Record<'raw' | 'nodeHttp', RunningGateway>;

  beforeAll(async () => {
    double = await startSseNodeDouble(SHORT);
    for (const side of ['raw', 'nodeHttp'] as const) {
      const config = loadGatewayConfig(
        JSON.stringify({
          maxBodyBytes: MAX_BODY_BYTES,
          llm: { nodeRawBelowStreams: 256, rawFront: side === 'raw' },
          tiers: { open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
          tenants: [{ id: 'raw-llm', tier: 'open', keys: [{ id: 'k1', hash: await sha256Hex(KEY) }] }],
        }),
      );
      gateways[side] = await startGateway({
        config, redisUrl: null, nodes: [{ id: 'double', grpc: null, http: double.address }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger,
        serverTimeouts: { headersTimeoutMs: 800, requestTimeoutMs: 1_000 },
      });
    }
  }, 60_000);

  afterAll(async () => {
    for (const gateway of Object.values(gateways)) await gateway?.close({ graceMs: 500 });
    await double?.close();
  });

  it('writes the same bytes for the same stream as node:http does, and keeps the connection on the raw path', async () => {
    double.script = SHORT;
    const answers: Record<string, string> = {};
    for (const side of ['raw', 'nodeHttp'] as const) {
      const client = await open(gateways[side]);
      client.socket.write(streamRequest());
      await waitFor(() => lastChunks(client.received()) === 1, { what: `the ${side} stream's end`, timeoutMs: 10_000 });
      answers[side] = normalized(client.received());
      // Kept alive after a streamed answer: on the raw path the connection is still the front door's.
      expect(gateways[side].rawHttp1?.size).toBe(side === 'raw' ? 1 : 0);
      client.socket.destroy();
    }
    expect(answers.raw).toContain('Transfer-Encoding: chunked\r\n');
    expect(answers.raw).toContain('data: [DONE]');
    expect(answers.raw).toBe(answers.nodeHttp);
  });

  it('answers a request pipelined behind a stream after the stream, in order, on both', async () => {
    double.script = SHORT;
    for (const side of ['raw', 'nodeHttp'] as const) {
      const client = await open(gateways[side]);
      client.socket.write(streamRequest('first') + streamRequest('second'));
      await waitFor(() => lastChunks(client.received()) === 2, { what: `both ${side} streams`, timeoutMs: 10_000 });
      const text = client.received();
      expect(text.match(/^HTTP\/1\.1 200 OK\r\n/gm)?.length).toBe(2);
      // The second answer's head comes after the first answer's last chunk.
      expect(text.indexOf('HTTP/1.1 200', 1)).toBeGreaterThan(text.indexOf('\r\n0\r\n\r\n'));
      client.socket.destroy();
    }
  });

  it('cancels the node\'s request when the client half-closes mid-stream, on both', async () => {
    double.script = LONG;
    for (const side of ['raw', 'nodeHttp'] as const) {
      const before = double.cancelled;
      const client = await open(gateways[side]);
      client.socket.write(streamRequest());
      await waitFor(() => client.received().includes(' w1'), { what: `the ${side} stream's second event`, timeoutMs: 10_000 });
      client.socket.end(); // FIN: the client sends nothing more (node:http treats it as gone too)
      await waitFor(() => double.cancelled === before + 1, { what: `the node double to see the ${side} stream closed`, timeoutMs: 10_000 });
      client.socket.destroy();
    }
  });

  it('stops reading a client that floods bytes behind its stream without reading, and cancels on close', async () => {
    double.script = LONG;
    const before = double.cancelled;
    const client = await open(gateways.raw);
    client.socket.write(streamRequest());
    await waitFor(() => client.received().includes(' w0'), { what: 'the stream\'s first event', timeoutMs: 10_000 });
    // 64 MiB behind the stream in 64 KiB writes: far above what the loopback sockets hold. A reader that took it
    // all would let every write complete; one that stops at its bound leaves most of them waiting on the client.
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let accepted = 0;
    // One write at a time, the next once the kernel took the last: `accepted` is what the gateway's side let in.
    const next = (): void => {
      if (accepted < 64 * 1024 * 1024 && !client.socket.destroyed) client.socket.write(piece, () => ((accepted += piece.byteLength), next()));
    };
    next();
    let last = -1;
    let stable = 0;
    while (stable < 3 && accepted < 64 * 1024 * 1024) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      stable = accepted === last ? stable + 1 : 0;
      last = accepted;
    }
    expect(accepted).toBeLessThan(32 * 1024 * 1024);
    client.socket.destroy();
    await waitFor(() => double.cancelled === before + 1, { what: 'the node double to see the stream closed', timeoutMs: 10_000 });
  });

  it('answers 408 to a body trickled slower than requestTimeout, and closes', async () => {
    const client = await open(gateways.raw);
    const request = streamRequest();
    client.socket.write(request.slice(0, request.indexOf('\r\n\r\n') + 6));
    const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    const trickle = setInterval(() => client.socket.writable && client.socket.write(' '), 100);
    await closed;
    clearInterval(trickle);
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(double.requestsByProtocol.http1).toBeGreaterThan(0); // (the double saw earlier tests, never this one)
  });

  it('serves a body over the raw bound through node:http, and refuses one over the server\'s limit', async () => {
    double.script = SHORT;
    const client = await open(gateways.raw);
    client.socket.write(streamRequest('x'.repeat(100 * 1024)));
    await waitFor(() => lastChunks(client.received()) === 1, { what: 'the stream of a 100 KiB request', timeoutMs: 10_000 });
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(gateways.raw.rawHttp1?.size).toBe(0); // handed to node:http at that request
    client.socket.destroy();

    const over = await open(gateways.raw);
    over.socket.write(streamRequest('x'.repeat(MAX_BODY_BYTES)));
    await waitFor(() => /\r\n\r\n[\s\S]*\}/.test(over.received()), { what: 'the refusal', timeoutMs: 10_000 });
    // The LLM routes' own refusal of a body over the limit (an OpenAI-style error), as on node:http before.
    expect(over.received()).toMatch(/^HTTP\/1\.1 400 /);
    expect(over.received()).toContain(`exceeds the gateway's limit of ${MAX_BODY_BYTES} bytes`);
    over.socket.destroy();
  });
});
