/**
 * The slow-reader bound of gateway-llm-slow-reader.test.ts with the node reached over HTTP/2
 * (adapters/node-http/llm-h2-upstream.ts): a client that never reads makes the relay pause its stream,
 * the stream's flow-control window stays shut, and the node's writes wait after a bounded amount.
 * Over HTTP/2 one session carries every stream of the node, so the stalled stream must not hold up its
 * neighbours either: a second stream through the same session still completes. Closing the client then
 * resets the stream, which the node sees as its request cancelled.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble } from '../../gateway/test/support/sse-node-double.js';

const KEY = 'tsk_sec-h2-slow-reader';
/** Far above one stream's flow-control window plus the client socket's buffers, far below unbounded growth. */
const BOUND_BYTES = 64 * 1024 * 1024;

describe('a slow-reading LLM client, node reached over HTTP/2 (gateway + endless node double)', () => {
  let double: SseNodeDouble;
  let gateway: RunningGateway;

  beforeAll(async () => {
    double = await startSseNodeDouble({ endless: true }, { h2: true });
    const config = loadGatewayConfig(
      JSON.stringify({
        llm: { nodeRawBelowStreams: 0 }, // every stream over HTTP/2: the session's sharing is the point
        tiers: { open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
        tenants: [{ id: 'slow', tier: 'open', keys: [{ id: 's1', hash: await sha256Hex(KEY) }] }],
      }),
    );
    // The HTTP/1.1 address answers too, so a fallback would pass the bound check: the neighbour check below tells them apart.
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'double', grpc: null, http: double.address, llmH2: double.h2Address }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await double?.close();
  });

  it('pauses the node\'s stream while the client reads nothing, keeps the session serving others, and resets it when the client goes', async () => {
    const body = JSON.stringify({ model: 'm', prompt: 'go', stream: true });
    const port = Number(new URL(gateway.url).port);
    const client: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.pause(); // reads nothing, ever
    client.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

    let settledAt: number | undefined;
    let last = -1;
    while (settledAt === undefined && double.endlessBytes < BOUND_BYTES) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = double.endlessBytes;
      if (now === last && double.waitingForDrain === 1) settledAt = now;
      last = now;
    }
    expect(double.endlessBytes).toBeLessThan(BOUND_BYTES);
    expect(settledAt).toBe(double.endlessBytes);

    // A neighbour on the same session: its events arrive although the stalled stream holds its window.
    double.script = { pieces: [openAIChunk('hello'), openAIChunk(' there'), 'data: [DONE]\n\n'] };
    const res = await fetch(`${gateway.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', prompt: 'next', stream: true }),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toContain('"text":"hello"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);

    client.destroy();
    await waitFor(() => double.cancelled === 1, { what: 'the node double sees its stream reset', timeoutMs: 10_000 });
  });
});
