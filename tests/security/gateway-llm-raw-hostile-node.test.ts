/**
 * A node that answers the gateway's raw HTTP/1.1 writes (adapters/node-http/llm-raw-upstream.ts) with
 * bytes that break HTTP/1.1: a real gateway on loopback in front of a TCP server that scripts its
 * answers byte by byte. Each case ends the client's stream (or answer) with the error the other
 * upstreams give, and the gateway destroys that connection instead of reusing it:
 * - a malformed chunk-size line, a chunk-size claim of 100 MB (over the reader's bound: without it the
 *   gateway would wait for the 100 MB forever), a head that never ends (over the head bound);
 * - a node that answers and never ends: the client leaving closes the node's connection;
 * - a second answer nobody asked for, in the same write or later on the idle socket: the next request
 *   gets its own answer on a fresh connection, never the unasked one;
 * - a head one Date value away from the last (the upstream remembers its node's last head, raw-answer-head.ts)
 *   whose value hides a framing line: read afresh and refused, never taken for the remembered head.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { openAIChunk } from '../../gateway/test/support/sse-node-double.js';

const KEY = 'tsk_sec-raw-hostile';
const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const jsonAnswer = (text: string): string => {
  const body = JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  return `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** What the scripted node writes once it has read a whole request (the n-th it has read, counted from 1). */
type Script = (socket: Socket, n: number) => void;

describe('a hostile node behind the raw HTTP/1.1 upstream (gateway + scripted TCP node)', () => {
  let node: Server;
  let gateway: RunningGateway;
  let script: Script = () => undefined;
  const state = { connections: 0, closed: 0, requests: 0 };

  beforeAll(async () => {
    node = createServer((socket) => {
      state.connections += 1;
      socket.once('close', () => (state.closed += 1));
      socket.on('error', () => undefined);
      let held = '';
      socket.on('data', (data) => {
        held += data.toString('latin1');
        for (;;) {
          const end = held.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(held.slice(0, end))?.[1] ?? 0);
          if (held.length < end + 4 + length) return;
          held = held.slice(end + 4 + length);
          state.requests += 1;
          script(socket, state.requests);
        }
      });
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const config = loadGatewayConfig(
      JSON.stringify({
        llm: { nodeRawBelowStreams: 256 },
        tiers: { open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
        tenants: [{ id: 'hostile', tier: 'open', keys: [{ id: 'h1', hash: await sha256Hex(KEY) }] }],
      }),
    );
    const address = `127.0.0.1:${(node.address() as AddressInfo).port}`;
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'hostile', grpc: null, http: address }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await new Promise<void>((resolve) => node?.close(() => resolve()));
  });

  const complete = (stream: boolean, init: RequestInit = {}): Promise<Response> =>
    fetch(`${gateway.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', prompt: 'go', stream }),
      ...init,
    });
  const events = (text: string): string[] => text.split('\n\n').filter((event) => event !== '');
  const errorCodeOf = (event: string): string => (JSON.parse(event.slice(6)) as { error: { code: string } }).error.code;

  /** A stream whose answer breaks after its first event: the client gets that event, the error event, [DONE]; the node's connection is closed. */
  const expectCutStream = async (rest: string): Promise<void> => {
    const closed = state.closed;
    script = (socket) => socket.write(SSE_HEAD + chunk(openAIChunk('first')) + rest);
    const response = await complete(true);
    expect(response.status).toBe(200);
    const got = events(await response.text());
    expect(got[0]).toContain('"first"');
    expect(errorCodeOf(got.at(-2)!)).toBe('upstream_failed');
    expect(got.at(-1)).toBe('data: [DONE]');
    await waitFor(() => state.closed === closed + 1, { what: 'the gateway closes the broken connection', timeoutMs: 10_000 });
  };

  it('ends a stream whose node sends a malformed chunk-size line', async () => {
    await expectCutStream('zz\r\nhello\r\n');
  });

  it('ends a stream whose node claims a 100 MB chunk instead of waiting for it', async () => {
    // The claim, a little of it, then silence with the connection open.
    await expectCutStream(`${(100 * 1024 * 1024).toString(16)}\r\n${openAIChunk('more')}`);
  });

  it('answers an error, not a hang, to a node whose answer head never ends', async () => {
    const closed = state.closed;
    script = (socket) => socket.write(`HTTP/1.1 200 OK\r\nx-pad: ${'a'.repeat(20_000)}`);
    const response = await complete(true);
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/over 16384 bytes/);
    await waitFor(() => state.closed === closed + 1, { what: 'the gateway closes the connection', timeoutMs: 10_000 });
  });

  it('closes the node\'s connection when the client leaves a stream that never ends', async () => {
    const closed = state.closed;
    script = (socket) => socket.write(SSE_HEAD + chunk(openAIChunk('first')));
    const client = new AbortController();
    const response = await complete(true, { signal: client.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('"first"');
    client.abort();
    await waitFor(() => state.closed === closed + 1, { what: 'the node sees its client leave', timeoutMs: 10_000 });
  });

  it('never hands an unasked second answer to the next request, in the same write or later', async () => {
    // First: an answer with another glued to it. Second: an answer, then another one later, on the idle socket.
    const first = state.requests + 1;
    script = (socket, n) => {
      if (n === first) socket.write(jsonAnswer('answer-1') + jsonAnswer('unasked'));
      else if (n === first + 1) {
        socket.write(jsonAnswer('answer-2'));
        setTimeout(() => socket.write(jsonAnswer('unasked')), 50);
      } else socket.write(jsonAnswer('answer-3'));
    };
    const connections = state.connections;
    const closed = state.closed;
    expect(await (await complete(false)).text()).toContain('answer-1');
    await waitFor(() => state.closed === closed + 1, { what: 'the socket with the glued answer destroyed', timeoutMs: 10_000 });
    expect(await (await complete(false)).text()).toContain('answer-2');
    await waitFor(() => state.closed === closed + 2, { what: 'the idle socket that got an unasked answer destroyed', timeoutMs: 10_000 });
    const third = await (await complete(false)).text();
    expect(third).toContain('answer-3');
    expect(third).not.toContain('unasked');
    expect(state.connections).toBe(connections + 3);
  });

  it('reads afresh a head that differs from the last only in a Date value hiding a framing line', async () => {
    const head = (date: string): string => `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nDate: ${date}\r\ntransfer-encoding: chunked\r\n\r\n`;
    // As long as an IMF-fixdate, so the two heads have the same length and the same bytes around the value.
    const smuggling = 'x\r\nContent-Length: 5\r\nY: 1234';
    expect(smuggling.length).toBe('Sat, 28 Nov 2026 01:52:00 GMT'.length);
    const first = state.requests + 1;
    script = (socket, n) => socket.write(head(n === first ? 'Sat, 28 Nov 2026 01:52:00 GMT' : smuggling) + chunk(openAIChunk('first')) + '0\r\n\r\n');
    const good = await complete(true);
    expect(good.status).toBe(200);
    expect(await good.text()).toContain('"first"');
    const closed = state.closed;
    const response = await complete(true);
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/both Transfer-Encoding and Content-Length/);
    await waitFor(() => state.closed === closed + 1, { what: 'the gateway closes the connection', timeoutMs: 10_000 });
  });

  it('answers an error to a node whose answer head carries a bare LF or NUL inside a header value', async () => {
    for (const value of ['a\nset-cookie: stolen=1', 'a\u0000b']) {
      const closed = state.closed;
      script = (socket) => socket.write(`HTTP/1.1 200 OK\r\nx-odd: ${value}\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n`);
      const response = await complete(true);
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/x-odd/);
      await waitFor(() => state.closed === closed + 1, { what: 'the gateway closes the connection', timeoutMs: 10_000 });
    }
  });
});
