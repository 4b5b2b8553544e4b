/**
 * An admitted stream starts to its client in the turn the node's head is read (LlmForwardRequest.startStream,
 * LlmUpstreamRequest.onAnswer): forwardLlm over the real raw upstream (llm-raw-upstream.ts) to a real TCP node
 * double that sends its head and first event in one write. Router, limiter and metrics are in-process ports, as
 * in core/llm/llm-forward.test.ts; the whole gateway runs this path in gateway/test/llm (native-llm-relay, e2e).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../core/auth/index.js';
import { forwardLlm, type LlmForwardRequest, type StreamedAnswer } from '../../core/llm/llm-forward.js';
import type { LlmRouter } from '../../core/llm/llm-router.js';
import type { GatewayMetrics, NodeView, RateLimiter, Tier } from '../../core/ports/index.js';
import { directBodyOf } from './h2-direct-body.js';
import { createLlmRawUpstream } from './llm-raw-upstream.js';

const metrics: GatewayMetrics = { request: () => undefined, rateLimited: () => undefined, authRejected: () => undefined, render: async () => ({ contentType: '', body: '' }) };
const limiter: RateLimiter = { take: async () => ({ allowed: true, retryAfterMs: 0, remaining: 1, limit: 1, resetSeconds: 0 }) };
const tier = { name: 't', priority: 1, queueShare: 1 } as unknown as Tier;
const auth = { tenant: { id: 'ten', name: 'ten', tier: 't' }, tier, keyId: 'k' } as AuthContext;

const FIRST_EVENT = 'data: {"choices":[{"index":0,"text":"a","finish_reason":null}]}\n\n';
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** Answers each request with what `answer` says, in one write: a stream's head and first event, or a whole error. */
let answer: 'stream' | 'error' = 'stream';
let server: Server;
let node: NodeView;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => {
      if (answer === 'error') {
        const body = '{"error":{"message":"no such model"}}';
        socket.write(`HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
        return;
      }
      // The stream stays open after its first event: what the test reads is that event's delivery.
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunk(FIRST_EVENT)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  node = { id: 'n1', httpAddress: `127.0.0.1:${address.port}` } as NodeView;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function forward(startStream: (answer: StreamedAnswer) => boolean): { done: Promise<unknown>; client: AbortController } {
  const upstream = createLlmRawUpstream();
  const router = { acquire: async () => ({ node, release: () => undefined }) } as unknown as LlmRouter;
  const client = new AbortController();
  const request: LlmForwardRequest = {
    auth, model: 'm', path: '/v1/completions', body: new TextEncoder().encode('{}'), stream: true, format: 'openai',
    deadline: Date.now() + 10_000, signal: client.signal, abort: () => client.abort(), startStream,
  };
  const done = forwardLlm({ router, upstream, rateLimiter: limiter, metrics, counter: { count: () => 1 }, answerTimeoutMs: 5_000 }, request);
  void done.finally(() => setTimeout(() => upstream.close(), 0)).catch(() => undefined);
  return { done, client };
}

describe('an admitted stream starts at the node\'s head', () => {
  it('is handed to the server in the turn the head is read, and gets its first event before forwardLlm resolves', async () => {
    answer = 'stream';
    const order: string[] = [];
    let events = '';
    const { done, client } = forward((started) => {
      order.push('started');
      // As relay-to-response.ts reads it: the node's body below its Readable, each slice in one call.
      directBodyOf(started.source)!.start((bytes) => {
        const out = started.relay.push(bytes);
        if (out !== undefined) {
          events += Buffer.from(out).toString('utf8');
          order.push('first event');
        }
        return true;
      });
      return true;
    });
    const result = await done;
    order.push('resolved');
    expect(order).toEqual(['started', 'first event', 'resolved']);
    expect(events).toBe(FIRST_EVENT);
    expect((result as StreamedAnswer).kind).toBe('stream');
    expect((result as StreamedAnswer).started).toBe(true);
    (result as StreamedAnswer).relay.cancel(new Error('the test is over'));
    client.abort();
  });

  it('comes back through the promise, not started, when the server does not take it', async () => {
    answer = 'stream';
    let offered: StreamedAnswer | undefined;
    const { done, client } = forward((started) => {
      offered = started;
      return false;
    });
    const result = (await done) as StreamedAnswer;
    expect(result.started).toBeUndefined();
    // The same relay as offered: one per stream, whichever way it goes.
    expect(result.relay).toBe(offered!.relay);
    result.relay.cancel(new Error('the test is over'));
    client.abort();
  });

  it('is never offered an answer that is not a stream (the node\'s own error is read whole)', async () => {
    answer = 'error';
    let offers = 0;
    const { done } = forward(() => {
      offers++;
      return true;
    });
    const result = (await done) as { kind: string; status: number };
    expect(offers).toBe(0);
    expect(result.kind).toBe('whole');
    expect(result.status).toBe(404);
  });
});
