/**
 * A client that opens a stream and never reads it must not make the gateway buffer the node's answer
 * without bound: the LLM relay (adapters/node-http/relay-to-response.ts) stops reading the node when
 * the client's socket is full, so TCP pushes back on the node, whose writes then wait for a drain. The
 * node double here writes an endless stream as fast as its socket takes it (gateway/test/support/
 * sse-node-double.ts): with back-pressure it ends up waiting, having written a bounded amount; without,
 * the gateway would read on and hold everything. Closing the client then cancels the node's request.
 * Both with node:http to the node and with the raw HTTP/1.1 upstream (llm-raw-upstream.ts), whose answer
 * body pauses the node's socket itself. Each with the client read by the raw HTTP/1.1 front door (llm-raw-front.ts)
 * and by node:http (native-llm.ts).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { startSseNodeDouble, type SseNodeDouble } from '../../gateway/test/support/sse-node-double.js';

const KEY = 'tsk_sec-slow-reader';
/** Far above what the loopback sockets on both sides can hold, far below an unbounded buffer's growth. */
const BOUND_BYTES = 64 * 1024 * 1024;

const CASES = (['http1', 'raw'] as const).flatMap((upstream) => (['raw', 'node-http'] as const).map((front) => [upstream, front] as const));

describe.each(CASES)('a slow-reading LLM client (gateway + endless node double over %s, %s front door)', (upstream, front) => {
  let double: SseNodeDouble;
  let gateway: RunningGateway;

  beforeAll(async () => {
    double = await startSseNodeDouble({ endless: true });
    const config = loadGatewayConfig(
      JSON.stringify({
        llm: { nodeRawBelowStreams: upstream === 'raw' ? 256 : 0, rawFront: front === 'raw' },
        tiers: { open: { priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'], rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 } } },
        tenants: [{ id: 'slow', tier: 'open', keys: [{ id: 's1', hash: await sha256Hex(KEY) }] }],
      }),
    );
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'double', grpc: null, http: double.address }], port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await double?.close();
  });

  it('stops reading the node while the client reads nothing, and cancels it when the client goes', async () => {
    const body = JSON.stringify({ model: 'm', prompt: 'go', stream: true });
    const port = Number(new URL(gateway.url).port);
    const client: Socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.pause(); // reads nothing, ever
    client.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

    // The kernel's socket buffers grow for a while (autotuning); then the node must stay blocked, having
    // written a bounded amount. Without back-pressure it never settles and passes the bound within seconds.
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

    client.destroy();
    await waitFor(() => double.cancelled === 1, { what: 'the node double sees its request closed', timeoutMs: 10_000 });
  });
});
