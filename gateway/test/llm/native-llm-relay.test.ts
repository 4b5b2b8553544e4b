/**
 * The node:http relay of the LLM routes (adapters/node-http/native-llm.ts, relay-to-response.ts) in a
 * real gateway on loopback, in front of a scripted node double (test/support/sse-node-double.ts): the
 * client gets the node's bytes exactly, however the node's writes split the events; a client going
 * away cancels the node's request; a stream over its token budget ends with the error event and
 * [DONE]; a node ending an OpenAI stream early ends it with an error event. All of it with the node
 * reached over HTTP/1.1 (node:http, and raw writes: llm-raw-upstream.ts) and over HTTP/2 (the double's
 * h2c listener, as a node's --llm-h2c-port); over
 * HTTP/2 also a session torn down mid-stream (GOAWAY, then the connection gone).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble } from '../support/sse-node-double.js';

/**
 * Reads one HTTP/1.1 chunked answer off a raw socket, strictly: every chunk's length line must match
 * its bytes and end with CRLF, and the answer must end with the last chunk. Resolves the decoded body
 * and leaves what follows (the next answer) for the next call.
 */
function readChunkedAnswer(socket: Socket, buffered: { bytes: Buffer }): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const parse = (): boolean => {
      const bytes = buffered.bytes;
      const headEnd = bytes.indexOf('\r\n\r\n');
      if (headEnd < 0) return false;
      const head = bytes.subarray(0, headEnd).toString('latin1');
      if (!/\r\ntransfer-encoding: chunked/i.test(head)) throw new Error(`not chunked: ${head}`);
      const parts: Buffer[] = [];
      let at = headEnd + 4;
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', at);
        if (lineEnd < 0) return false;
        const sizeText = bytes.subarray(at, lineEnd).toString('latin1');
        if (!/^[0-9a-f]+$/.test(sizeText)) throw new Error(`bad chunk size line ${JSON.stringify(sizeText)}`);
        const size = parseInt(sizeText, 16);
        const dataEnd = lineEnd + 2 + size;
        if (bytes.length < dataEnd + 2) return false;
        if (bytes[dataEnd] !== 0x0d || bytes[dataEnd + 1] !== 0x0a) throw new Error(`chunk of ${size} bytes not followed by CRLF`);
        if (size === 0) {
          buffered.bytes = bytes.subarray(dataEnd + 2);
          resolve({ head, body: Buffer.concat(parts).toString('utf8') });
          return true;
        }
        parts.push(bytes.subarray(lineEnd + 2, dataEnd));
        at = dataEnd + 2;
      }
    };
    const onData = (data: Buffer): void => {
      buffered.bytes = Buffer.concat([buffered.bytes, data]);
      try {
        if (parse()) cleanup();
      } catch (error) {
        cleanup();
        reject(error);
      }
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('the connection closed before the answer ended'));
    };
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    onData(Buffer.alloc(0));
  });
}

const OPEN = 'tsk_native-relay-open';
const METERED = 'tsk_native-relay-metered';

describe.each(['http1', 'h2', 'raw'] as const)('the native LLM relay (gateway + scripted node double over %s)', (upstream) => {
  let double: SseNodeDouble;
  let gateway: RunningGateway;

  beforeAll(async () => {
    double = await startSseNodeDouble({}, { h2: upstream === 'h2' });
    const unlimited = { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 };
    const config = loadGatewayConfig(
      JSON.stringify({
        // 'raw': every stream over raw HTTP/1.1 writes (llm-raw-upstream.ts); the others never.
        llm: { chargeEveryTokens: 2, nodeRawBelowStreams: upstream === 'raw' ? 256 : 0 },
        tiers: {
          open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: unlimited },
          metered: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: unlimited, llm: { tokensPerMinute: 60, tokensBurst: 10 } },
        },
        tenants: [
          { id: 'open', tier: 'open', keys: [{ id: 'o1', hash: await sha256Hex(OPEN) }] },
          { id: 'metered', tier: 'metered', keys: [{ id: 'm1', hash: await sha256Hex(METERED) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'double', grpc: null, http: double.address, ...(upstream === 'h2' ? { llmH2: double.h2Address } : {}) }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await double?.close();
  });

  beforeEach(() => {
    double.script = {};
  });

  const post = (key: string, path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) });

  it('relays the node\'s bytes exactly, events split anywhere across its writes (escapes, multi-byte text)', async () => {
    const events = [openAIChunk('Hello'), openAIChunk(' wörld'), openAIChunk(' "quoted"\n'), openAIChunk(' 🙂'), `data: ${JSON.stringify({ choices: [{ index: 0, text: '', finish_reason: 'stop' }] })}\n\n`, 'data: [DONE]\n\n'];
    const whole = events.join('');
    const bytes = Buffer.from(whole);
    // Cut points inside events, inside the blank line, inside a multi-byte character.
    const cuts = [3, 40, bytes.indexOf('\n\n') + 1, bytes.indexOf(Buffer.from('🙂')) + 2, bytes.length - 5];
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (const cut of [...cuts, bytes.length]) {
      pieces.push(bytes.subarray(from, cut));
      from = cut;
    }
    double.script = { pieces, gapMs: 5 };
    const response = await post(OPEN, '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('cancels the node\'s request when the client goes away mid-stream', async () => {
    double.script = { endless: true };
    const before = double.cancelled;
    const client = new AbortController();
    const response = await post(OPEN, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }, client.signal);
    const reader = response.body!.getReader();
    await reader.read();
    client.abort();
    await waitFor(() => double.cancelled === before + 1, { what: 'the node double sees its request closed', timeoutMs: 10_000 });
  });

  it('ends a stream over its token budget with the rate-limit error event and [DONE], and cancels the node\'s request', async () => {
    const before = double.cancelled;
    double.script = { pieces: Array.from({ length: 200 }, () => openAIChunk(' word')), gapMs: 2 };
    const response = await post(METERED, '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    expect(response.status).toBe(200);
    const events = (await response.text()).split('\n\n').filter((e) => e !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    const error = JSON.parse(events.at(-2)!.slice(6)) as { error: { code: string; type: string } };
    expect(error.error.code).toBe('rate_limit_exceeded');
    // Cut within a few charge steps of the 10-token bucket, never after the node's 200 events.
    expect(events.length).toBeLessThan(40);
    await waitFor(() => double.cancelled === before + 1, { what: 'the node double sees its request closed', timeoutMs: 10_000 });
  });

  it('ends an OpenAI stream the node left without [DONE] with an error event, then [DONE]', async () => {
    double.script = { pieces: [openAIChunk('one'), openAIChunk(' two')] };
    const response = await post(OPEN, '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    const text = await response.text();
    expect(text.startsWith(openAIChunk('one') + openAIChunk(' two'))).toBe(true);
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(JSON.parse(events.at(-2)!.slice(6)).error.code).toBe('upstream_failed');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('relays generate_stream in Triton\'s framing (no [DONE]) on versioned and plain paths', async () => {
    const events = ['a', ' b', ' c'].map((t) => `data: ${JSON.stringify({ model_name: 'm', model_version: '1', text_output: t })}\n\n`);
    for (const path of ['/v2/models/m/generate_stream', '/v2/models/m/versions/1/generate_stream']) {
      double.script = { pieces: events };
      const response = await post(OPEN, path, { text_input: 'hi' });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(events.join(''));
    }
  });

  it.runIf(upstream === 'h2')('ends a stream whose HTTP/2 session is torn down mid-answer with an error event and [DONE]; the next stream opens a new session', async () => {
    double.script = { pieces: Array.from({ length: 100 }, () => openAIChunk(' word')), gapMs: 10 };
    const response = await post(OPEN, '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    const reader = response.body!.getReader();
    await reader.read();
    double.dropH2Sessions();
    let text = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
    const events = text.split('\n\n').filter((e) => e !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events.at(-2)!.slice(6)).error.code).toBe('upstream_failed');
    expect(events.length).toBeLessThan(100);

    double.script = { pieces: [openAIChunk('again'), 'data: [DONE]\n\n'] };
    const next = await post(OPEN, '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    expect(next.status).toBe(200);
    expect(await next.text()).toBe(openAIChunk('again') + 'data: [DONE]\n\n');
  });

  it('answers errors before the node as the Hono routes do: OpenAI shape on /v1, Triton shape on generate', async () => {
    const bad = await post('tsk_nobody', '/v1/completions', { model: 'm', prompt: 'hi', stream: true });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBeTruthy();
    const badGenerate = await post(OPEN, '/v2/models/m/generate_stream', [1, 2]);
    expect(badGenerate.status).toBe(400);
    expect(typeof ((await badGenerate.json()) as { error: unknown }).error).toBe('string');
  });

  it('frames each event as a well-formed HTTP/1.1 chunk and keeps the connection for the next stream (whole and cut answers)', async () => {
    const events = [openAIChunk('one'), openAIChunk(' two'), openAIChunk(' three'), 'data: [DONE]\n\n'];
    const url = new URL(gateway.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const buffered = { bytes: Buffer.alloc(0) };
    const request = (body: string): string =>
      `POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${OPEN}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    try {
      const body = JSON.stringify({ model: 'm', prompt: 'hi', stream: true });
      for (let i = 0; i < 2; i++) {
        double.script = { pieces: events, gapMs: 3 };
        socket.write(request(body));
        const answer = await readChunkedAnswer(socket, buffered);
        expect(answer.head.startsWith('HTTP/1.1 200')).toBe(true);
        expect(answer.body).toBe(events.join(''));
      }
      // Cut by the node (no [DONE]): the error event goes out in the last write, still framed.
      double.script = { pieces: [openAIChunk('one'), openAIChunk(' two')], gapMs: 3 };
      socket.write(request(body));
      const cut = await readChunkedAnswer(socket, buffered);
      const cutEvents = cut.body.split('\n\n').filter((e) => e !== '');
      expect(cut.body.startsWith(openAIChunk('one') + openAIChunk(' two'))).toBe(true);
      expect(JSON.parse(cutEvents.at(-2)!.slice(6)).error.code).toBe('upstream_failed');
      expect(cutEvents.at(-1)).toBe('data: [DONE]');
      // Still usable afterwards.
      double.script = { pieces: events };
      socket.write(request(body));
      expect((await readChunkedAnswer(socket, buffered)).body).toBe(events.join(''));
    } finally {
      socket.destroy();
    }
  });

  it('holds a stream back while the client reads nothing and relays all of it, in order, once it reads again', async () => {
    // ~1 KB events (a long id, one short token each), 8 MiB in all: more than loopback's socket buffers hold.
    const event = (i: number): string => `data: ${JSON.stringify({ id: `cmpl-${'x'.repeat(1000)}`, object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: ` t${i % 10}`, finish_reason: null }] })}\n\n`;
    const pieces = Array.from({ length: 128 }, (_, p) => Array.from({ length: 64 }, (_, i) => event(p * 64 + i)).join(''));
    pieces.push('data: [DONE]\n\n');
    double.script = { pieces, gapMs: 0 };
    const url = new URL(gateway.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    try {
      socket.pause();
      const body = JSON.stringify({ model: 'm', prompt: 'hi', stream: true });
      socket.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${OPEN}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const answer = readChunkedAnswer(socket, { bytes: Buffer.alloc(0) });
      socket.resume();
      expect((await answer).body).toBe(pieces.join(''));
    } finally {
      socket.destroy();
    }
  }, 30_000);
});
