/**
 * A streamed request is sent to its node while its prompt tokens are decided in Redis
 * (core/llm/admission-overlap.ts), and still refused before any of the node's bytes reach the client.
 * Real parts: redis-server (paused with CLIENT PAUSE to hold a decision), the gateway on loopback, and the
 * scripted SSE node double (which answers its first event at once, so a relay that did not wait would show).
 */
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { fleetKeys, LOAD_REPORT_VERSION, type LoadReport } from '../../shared/src/fleet/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { createRedisRateLimiter } from '../../gateway/src/adapters/redis/redis-rate-limiter.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { bucketOf } from '../../gateway/src/core/llm/token-budget.js';
import type { Tier } from '../../gateway/src/core/ports/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { openAIChunk, startSseNodeDouble, type SseNodeDouble } from '../../gateway/test/support/sse-node-double.js';

const KEY = 'tsk_overlap';
/** A second tenant of the same tier, for the case whose refusal must not touch the first's memory of refusals. */
const KEY2 = 'tsk_overlap_two';
const BURST = 400;
/** How long Redis is held; the node's request must arrive inside it, on a loaded box too (2.86 s seen there). */
const PAUSE_MS = 5_000;

/** One raw HTTP/1.1 exchange with the gateway: the whole text the client received, and when its first byte came. */
function call(port: number, body: string, key = KEY): Promise<{ text: string; firstByteAt: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let firstByteAt = 0;
    socket.on('data', (data) => {
      if (firstByteAt === 0) firstByteAt = Date.now();
      text += data.toString('latin1');
      // Done at a chunked stream's last chunk, or at a whole answer's end (Content-Length).
      const length = /content-length: (\d+)/i.exec(text);
      const head = text.indexOf('\r\n\r\n');
      if (text.endsWith('0\r\n\r\n') || (length !== null && head >= 0 && text.length - head - 4 >= Number(length[1]))) socket.end();
    });
    socket.once('close', () => resolve({ text, firstByteAt }));
    socket.once('error', reject);
    socket.write(`POST /v1/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

describe.each(['raw', 'node-http'] as const)('a stream sent to its node while its tokens are decided (gateway + redis-server + node double, %s front door)', (front) => {
  let redis: RedisServer;
  let control: Redis;
  /** A second client whose PING, sent once Redis is paused, is answered when the pause ends. */
  let watcher: Redis;
  let double: SseNodeDouble;
  let gateway: RunningGateway;
  let port: number;
  const tier = { llm: { tokensPerMinute: 1, tokensBurst: BURST } } as unknown as Tier;
  const stream = JSON.stringify({ model: 'm', prompt: 'tell me a story', stream: true });

  beforeAll(async () => {
    redis = await startRedisServer();
    control = new Redis(redis.url, { lazyConnect: false });
    watcher = new Redis(redis.url, { lazyConnect: false });
    await watcher.ping();
    double = await startSseNodeDouble({ pieces: [openAIChunk('a'), 'data: [DONE]\n\n'], gapMs: 1 });
    // With Redis the fleet comes from the nodes' load reports: the double's, written as a node would.
    const now = Date.now();
    const report: LoadReport = {
      version: LOAD_REPORT_VERSION, nodeId: 'double', httpAddress: double.address, grpcAddress: null, startedAt: now, sentAt: now, seq: 1, ttlMs: 600_000,
      models: [{ name: 'm', versions: ['1'], queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null }], draining: false,
    };
    await control.set(fleetKeys().nodeKey('double'), JSON.stringify(report), 'PX', 600_000);
    const config = loadGatewayConfig(
      JSON.stringify({
        // No leases: every token charge is a script call in Redis, as for a prompt larger than a lease.
        rateLimitLeaseMs: 0,
        llm: { rawFront: front === 'raw' },
        // Read below without a key (the metered tokens).
        metrics: { requireAdminKey: false },
        tiers: {
          metered: {
            priority: 2, queueShare: 1, cacheTtlSeconds: 0, queueTimeoutMs: 10_000, allowedModels: ['*'],
            rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 },
            llm: { tokensPerMinute: 1, tokensBurst: BURST },
          },
        },
        tenants: [
          { id: 'overlap', tier: 'metered', keys: [{ id: 'o1', hash: await sha256Hex(KEY) }] },
          { id: 'overlap-two', tier: 'metered', keys: [{ id: 'o2', hash: await sha256Hex(KEY2) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: null, host: '127.0.0.1', logger: silentLogger });
    await waitFor(() => gateway.directory.candidates('m').length === 1, { what: 'the double in the fleet view', timeoutMs: 20_000 });
    port = Number(new URL(gateway.url).port);
  }, 60_000);

  /** A stream that goes through: the tenant's key is then looked up for seconds without Redis, so below only the token charge waits for it. */
  const warm = async (): Promise<void> => {
    expect((await call(port, stream)).text).toContain('data: [DONE]');
  };

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await double?.close();
    control?.disconnect();
    watcher?.disconnect();
    await redis?.stop();
  });

  /**
   * Holds every Redis client for PAUSE_MS from now; answers when it started, and `over()`: whether Redis has
   * answered a PING sent after the pause began, i.e. the pause has ended (read from Redis, not from a clock).
   */
  const pauseRedis = async (): Promise<{ pausedAt: number; over: () => boolean }> => {
    await control.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
    const pausedAt = Date.now();
    let ended = false;
    void watcher.ping().then(() => (ended = true));
    return { pausedAt, over: () => ended };
  };

  it('the node gets the request while Redis still holds its charge; the client gets nothing until the charge is allowed', async () => {
    await warm();
    const before = double.requestsByProtocol.http1;
    const { pausedAt, over } = await pauseRedis();
    const answer = call(port, stream);
    await waitFor(() => double.requestsByProtocol.http1 > before, { what: "the node's request", timeoutMs: PAUSE_MS * 4 });
    // Sent while the decision was held (before, the request waited for Redis and came after the pause).
    expect(over()).toBe(false);
    const { text, firstByteAt } = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain('data: [DONE]');
    // The node's first event was in by then, but the client's first byte waited for the decision.
    expect(firstByteAt - pausedAt).toBeGreaterThanOrEqual(PAUSE_MS - 50);
  });

  it('a burst from one tenant: one stream goes before its decision, the others wait for theirs', async () => {
    await warm();
    const before = double.requestsByProtocol.http1;
    const { over } = await pauseRedis();
    const answers = [call(port, stream), call(port, stream), call(port, stream)];
    await waitFor(() => double.requestsByProtocol.http1 > before, { what: "the first stream's request", timeoutMs: PAUSE_MS * 4 });
    // Inside the pause, and a moment later still: only one of the three reached the node.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(over()).toBe(false);
    expect(double.requestsByProtocol.http1).toBe(before + 1);
    for (const { text } of await Promise.all(answers)) expect(text).toContain('data: [DONE]');
    expect(double.requestsByProtocol.http1).toBe(before + 3);
  });

  /** Empties a tenant's token bucket from outside the gateway (the same script and key the gateway uses). */
  const emptyBucket = async (tenant: string): Promise<void> => {
    const limiter = createRedisRateLimiter({ redis: control, logger: silentLogger });
    // Taken in halving steps until not one token is left; twice, a moment apart: the warm stream's
    // settlements (given back or charged in the background) land meanwhile.
    for (let round = 0; round < 2; round++) {
      for (let take = BURST; take >= 1; take = Math.floor(take / 2)) while ((await limiter.take(`${tenant}:llm-tokens`, take, bucketOf(tier)!)).allowed);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  /** The gateway's count of completion tokens metered for `tenant` (model m). */
  const tokensOut = async (tenant: string): Promise<number> => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).toContain('llm_tokens_total');
    return Number(new RegExp(`llm_tokens_total\\{tenant="${tenant}",model="m",direction="out"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  };

  it('over budget, and the node ignores stream: true and answers whole before the refusal: a 429, and its tokens are not metered', async () => {
    expect((await call(port, stream, KEY2)).text).toContain('data: [DONE]');
    await emptyBucket('overlap-two');
    // Let the warm stream's own metering land before the count is read.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const outBefore = await tokensOut('overlap-two');
    const before = double.requestsByProtocol.http1;
    const script = double.script;
    double.script = { whole: JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: 'whole', finish_reason: 'stop' }], usage: { prompt_tokens: 4, completion_tokens: 7, total_tokens: 11 } }) };
    const { over } = await pauseRedis();
    const refused = await call(port, stream, KEY2);
    double.script = script;
    expect(refused.text).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused.text).not.toContain('whole');
    // Sent while the decision was held, and answered whole by the node before it came.
    expect(double.requestsByProtocol.http1).toBe(before + 1);
    // Anything metered for that answer would have landed by the end of the pause.
    await waitFor(over, { what: 'the end of the pause', timeoutMs: PAUSE_MS * 4 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await tokensOut('overlap-two')).toBe(outBefore);
  });

  it('over budget: a 429 and no event for the client, the node request cancelled, and the next one decided before sending', async () => {
    await warm();
    await emptyBucket('overlap');
    const before = double.requestsByProtocol.http1;
    const cancelledBefore = double.cancelled;

    // The node takes its time over this one (as a model's generation does): it is still answering when refused.
    const script = double.script;
    double.script = { pieces: [openAIChunk('a'), openAIChunk('b'), 'data: [DONE]\n\n'], gapMs: PAUSE_MS * 4 };
    await pauseRedis();
    const refused = await call(port, stream);
    double.script = script;
    expect(refused.text).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused.text).toContain('rate_limit_exceeded');
    expect(refused.text).not.toContain('data: ');
    // It had reached the node (sent while the charge was decided) and was stopped there.
    expect(double.requestsByProtocol.http1).toBe(before + 1);
    await waitFor(() => double.cancelled > cancelledBefore, { what: "the refused request's cancellation at the node", timeoutMs: 10_000 });

    // Refused lately: the next request waits for its decision before any node sees it.
    await pauseRedis();
    const again = await call(port, stream);
    expect(again.text).toMatch(/^HTTP\/1\.1 429 /);
    expect(again.text).not.toContain('data: ');
    expect(double.requestsByProtocol.http1).toBe(before + 1);
  });
});
