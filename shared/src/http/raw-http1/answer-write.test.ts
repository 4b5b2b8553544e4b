/**
 * A raw HTTP/1.1 connection writes each answer (head, JSON header, outputs) as one socket write, answers pipelined
 * requests in order, serves a pipeline that arrives half-written, and stops reading a client that does not read
 * its answers, so what waits in the socket stays bounded.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GATHERED_ANSWER_MAX_BYTES, renderAnswerHead } from './answer-writer.js';
import { attachRawHttp1, type RawHttp1FrontDoor } from './front-door.js';
import type { RawAnswer, RawRequest } from './connection.js';
import { exchange, rawRequest } from './test-helpers.js';

interface Front {
  readonly server: Server;
  readonly door: RawHttp1FrontDoor;
  readonly port: number;
}

let fronts: Front[] = [];
afterEach(async () => {
  for (const { server, door } of fronts) {
    door.closeAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  fronts = [];
});

/** A front door whose raw handler answers through `serve` (the node's infer handler answers as chunks too). */
async function start(serve: (request: RawRequest, reply: RawAnswer) => void, onSocket?: (socket: Socket) => void): Promise<Front> {
  const server = createServer((_request, response) => response.writeHead(500).end());
  const door = attachRawHttp1(server, { accepts: () => true, serve }, 1024 * 1024);
  // After the front door: the listeners present before it are taken as node:http's.
  if (onSocket !== undefined) server.on('connection', onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const front = { server, door, port: (server.address() as AddressInfo).port };
  fronts.push(front);
  return front;
}

/** Counts the socket's writes (the real socket still writes them). */
function countWrites(socket: Socket, counter: { writes: number }): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    counter.writes++;
    return write(...args);
  }) as typeof socket.write;
}

/** An answer as the node's infer handler gives it: a JSON header and the output's bytes, two chunks. */
function answerInChunks(request: RawRequest, reply: RawAnswer, outputBytes: number): void {
  const json = Buffer.from(`{"target":"${request.head.target}","body":"${Buffer.from(request.body).toString('latin1')}"}`);
  const output = Buffer.alloc(outputBytes, request.head.target.charCodeAt(request.head.target.length - 1));
  setImmediate(() => reply.answer(200, { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': String(json.byteLength) }, [json, output], json.byteLength + output.byteLength));
}

/** Splits what came back into answers: status, the JSON header, and the output's bytes. */
function answersIn(text: string): { status: string; json: string; output: string }[] {
  const answers: { status: string; json: string; output: string }[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    const head = text.slice(at, headEnd);
    const length = Number(/\r\nContent-Length: (\d+)/.exec(head)?.[1]);
    const jsonLength = Number(/\r\nInference-Header-Content-Length: (\d+)/.exec(head)?.[1]);
    const body = text.slice(headEnd + 4, headEnd + 4 + length);
    answers.push({ status: head.slice(0, head.indexOf('\r\n')), json: body.slice(0, jsonLength), output: body.slice(jsonLength) });
    at = headEnd + 4 + length;
  }
  return answers;
}

describe('raw HTTP/1.1 answers: one socket write each', () => {
  it('answers 6 pipelined requests in order, each head, JSON header and output in one socket write', async () => {
    const counter = { writes: 0 };
    const front = await start((request, reply) => answerInChunks(request, reply, 4096), (socket) => countWrites(socket, counter));
    const pipeline = [1, 2, 3, 4, 5, 6].map((n) => rawRequest(n, `b${n}`)).join('');
    const out = await exchange(front.port, [pipeline], { answers: 6 });
    const answers = answersIn(out.text);
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill('HTTP/1.1 200 OK'));
    expect(answers.map((a) => JSON.parse(a.json) as unknown)).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ target: `/raw${n}`, body: `b${n}` })));
    for (const [i, answer] of answers.entries()) expect(answer.output).toBe(String(i + 1).repeat(4096));
    expect(counter.writes).toBe(6);
  });

  it('writes an answer larger than the gathering bound whole and in order, without copying it into one buffer', async () => {
    const big = GATHERED_ANSWER_MAX_BYTES + 1000;
    const front = await start((request, reply) => answerInChunks(request, reply, request.head.target === '/raw2' ? big : 10));
    const out = await exchange(front.port, [rawRequest(1, 'x') + rawRequest(2, 'y') + rawRequest(3, 'z')], { answers: 3 });
    const answers = answersIn(out.text);
    expect(answers.map((a) => a.output.length)).toEqual([10, big, 10]);
    expect(answers[1]?.output).toBe('2'.repeat(big));
  });

  it('serves a pipeline that arrives half-written: the whole requests at once, the cut one when its rest comes', async () => {
    const front = await start((request, reply) => answerInChunks(request, reply, 16));
    const pipeline = rawRequest(1, 'aa') + rawRequest(2, 'bb') + rawRequest(3, 'cc');
    const cut = pipeline.length - 5; // inside the third request's head
    const out = await exchange(front.port, [pipeline.slice(0, cut), pipeline.slice(cut)], { answers: 3, gapMs: 50 });
    expect(answersIn(out.text).map((a) => JSON.parse(a.json) as unknown)).toEqual([1, 2, 3].map((n) => ({ target: `/raw${n}`, body: `${'abc'[n - 1]}`.repeat(2) })));
  });

  it('stops serving a client that does not read its answers: what waits in the socket never passes one answer beyond the high-water mark', async () => {
    const ANSWER_BYTES = 32 * 1024;
    const REQUESTS = 1600; // 52 MB of answers: more than loopback's socket buffers (tcp_rmem max 32 MB here) take
    const waiting: number[] = [];
    let served = 0;
    let serverSocket: Socket | undefined;
    const front = await start(
      (request, reply) => {
        served++;
        waiting.push(serverSocket?.writableLength ?? 0);
        answerInChunks(request, reply, ANSWER_BYTES);
      },
      (socket) => (serverSocket = socket),
    );
    const client = connect(front.port, '127.0.0.1');
    client.pause(); // reads nothing until the server has stopped
    await new Promise<void>((resolve) => client.on('connect', resolve));
    const pipeline = Buffer.from(Array.from({ length: REQUESTS }, (_, i) => rawRequest(i, '')).join(''), 'latin1');
    client.write(pipeline);
    // The server stops when an answer waits in its socket: wait for that, however long the box takes.
    while (!(serverSocket !== undefined && serverSocket.writableLength > 0 && serverSocket.isPaused())) await new Promise((r) => setTimeout(r, 20));
    expect(served).toBeLessThan(REQUESTS);
    expect(Math.max(...waiting)).toBeLessThanOrEqual(serverSocket.writableHighWaterMark);
    // Then the client reads: every answer comes, in order.
    let expected = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const json = `{"target":"/raw${i}","body":""}`.length;
      expected += renderAnswerHead(200, { 'Content-Type': 'application/octet-stream', 'Inference-Header-Content-Length': String(json) }, json + ANSWER_BYTES, 5000).length + json + ANSWER_BYTES;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    await new Promise<void>((resolve) => {
      client.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.byteLength;
        if (bytes >= expected) resolve();
      });
      client.resume();
    });
    const answers = answersIn(Buffer.concat(chunks).toString('latin1'));
    expect(answers.map((a) => (JSON.parse(a.json) as { target: string }).target)).toEqual(Array.from({ length: REQUESTS }, (_, i) => `/raw${i}`));
    client.destroy();
    expect(served).toBe(REQUESTS);
    expect(Math.max(...waiting)).toBeLessThanOrEqual(serverSocket.writableHighWaterMark);
  });
});
