/**
 * Which upstream a node's LLM stream takes (adapters/node-http/llm-upstream-choice.ts), end to end: a real
 * gateway in front of the scripted node double listening on HTTP/1.1 and HTTP/2. Raw HTTP/1.1 writes while
 * the node has fewer than `llm.nodeRawBelowStreams` of the gateway's streams open, HTTP/2 from there on, and
 * raw again once the streams have ended (the count follows each answer's end). Also: one tenant's streams run
 * at once (the eleventh pass read them as admitted one at a time; its test awaited each stream's end).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble } from '../support/sse-node-double.js';

const KEY = 'tsk_upstream-choice';

/** A stream the test opened: its first event has arrived; `ended` gives its whole text once the gateway closed it. */
interface OpenStream {
  readonly ended: Promise<string>;
}

describe('the LLM upstream choice (gateway + node double over HTTP/1.1 and HTTP/2)', () => {
  let double: SseNodeDouble;
  let gateway: RunningGateway;

  beforeAll(async () => {
    // Each answer: a first event, then its end a while later, so streams opened one after another overlap.
    double = await startSseNodeDouble({ pieces: [openAIChunk('a'), openAIChunk('b'), 'data: [DONE]\n\n'], gapMs: 300 }, { h2: true });
    const config = loadGatewayConfig(
      JSON.stringify({
        llm: { nodeRawBelowStreams: 2 },
        tiers: { open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
        tenants: [{ id: 'choice', tier: 'open', keys: [{ id: 'c1', hash: await sha256Hex(KEY) }] }],
      }),
    );
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'double', grpc: null, http: double.address, llmH2: double.h2Address }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await double?.close();
  });

  /**
   * Opens a stream on a connection of its own and waits for its first event. The end comes back inside an
   * object: an async function returning the promise itself would adopt it, and wait for the stream's end.
   */
  const open = async (order: string[] = []): Promise<OpenStream> => {
    const body = JSON.stringify({ model: 'm', prompt: 'go', stream: true });
    const client: Socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
    let text = '';
    const ended = new Promise<string>((resolve) =>
      client.once('close', () => {
        order.push('end');
        resolve(text);
      }),
    );
    let seen = false;
    const first = new Promise<void>((resolve) =>
      client.on('data', (data) => {
        text += data.toString('latin1');
        if (!seen && text.includes('data: ')) {
          seen = true;
          order.push('first');
          resolve();
        }
        if (text.endsWith('0\r\n\r\n')) client.end();
      }),
    );
    client.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await first;
    return { ended };
  };

  it('writes raw below the bound, goes over HTTP/2 at it, and raw again once the streams ended', async () => {
    const before = { ...double.requestsByProtocol };
    const streams = [await open(), await open(), await open()];
    // All three were open at once: two raw, the third (the node then had 2 streams in flight) over HTTP/2.
    expect(double.requestsByProtocol).toEqual({ http1: before.http1 + 2, h2: before.h2 + 1 });
    for (const text of await Promise.all(streams.map((s) => s.ended))) expect(text).toContain('data: [DONE]');
    await (await open()).ended;
    expect(double.requestsByProtocol).toEqual({ http1: before.http1 + 3, h2: before.h2 + 1 });
  });

  it("admits one tenant's streams at once: three opened together all have their first event before any ends", async () => {
    const order: string[] = [];
    const opened = await Promise.all([open(order), open(order), open(order)]);
    for (const text of await Promise.all(opened.map((s) => s.ended))) expect(text).toContain('data: [DONE]');
    // Had the gateway served them one at a time, a stream's first event would come after the one before ended.
    expect(order).toEqual(['first', 'first', 'first', 'end', 'end', 'end']);
  });
});
