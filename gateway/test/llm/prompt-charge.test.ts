import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCl100kCounter } from '../../../shared/src/llm/cl100k-counter.js';
import type { TokenCounter } from '../../../shared/src/llm/token-counter.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, type RedisServer } from '../../../shared/test/support/index.js';
import { createMemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { createRedisRateLimiter } from '../../src/adapters/redis/redis-rate-limiter.js';
import type { AuthContext } from '../../src/core/auth/index.js';
import type { GatewayMetrics, RateLimiter, Tier } from '../../src/core/ports/index.js';
import { admitPrompt } from '../../src/core/llm/prompt-charge.js';
import { bucketKey, bucketOf } from '../../src/core/llm/token-budget.js';

const BURST = 1000;
const tier = { name: 't', priority: 1, queueShare: 1, llm: { tokensPerMinute: 1, tokensBurst: BURST } } as unknown as Tier;
const auth = { tenant: { id: 'ten', name: 'ten', tier: 't' }, tier, keyId: 'k' } as AuthContext;
const limits = bucketOf(tier)!;

function meteredIn(): { metrics: GatewayMetrics; tokensIn: () => number } {
  let total = 0;
  const metrics: GatewayMetrics = {
    request: () => undefined,
    rateLimited: () => undefined,
    authRejected: () => undefined,
    render: async () => ({ contentType: '', body: '' }),
    llmTokens: (_tenant, _model, direction, tokens) => {
      if (direction === 'in') total += tokens;
    },
  };
  return { metrics, tokensIn: () => total };
}

/** The real cl100k counter, with its calls to `count` recorded. */
function countingCalls(counter: TokenCounter): TokenCounter & { counted: number } {
  const spy = {
    counted: 0,
    count: (text: string) => {
      spy.counted++;
      return counter.count(text);
    },
    upperBound: (text: string) => counter.upperBound!(text),
  };
  return spy;
}

/** What the tenant's bucket holds now: the largest take it allows (then given back). */
async function bucketHolds(limiter: RateLimiter): Promise<number> {
  let low = 0;
  let high = BURST + 1;
  while (high - low > 1) {
    const probe = Math.floor((low + high) / 2);
    const decision = await limiter.take(bucketKey(auth), probe, limits);
    if (decision.allowed) {
      await limiter.take(bucketKey(auth), -probe, limits);
      low = probe;
    } else high = probe;
  }
  return low;
}

const PROMPT = 'tell me a story about a gateway, in English prose of some length';

// A frozen clock: the bucket never refills, so every charge shows in what it holds.
const frozen = (): number => 1_000_000;

describe('admitPrompt: a bound at admission, the exact count at settlement (in-process limiter)', () => {
  it('admits without counting, charges the bound, and settles to the exact count once', async () => {
    const cl100k = await loadCl100kCounter();
    const counter = countingCalls(cl100k);
    const limiter = createMemoryRateLimiter({ now: frozen });
    const { metrics, tokensIn } = meteredIn();
    const exact = cl100k.count(PROMPT);
    const bound = cl100k.upperBound!(PROMPT);
    expect(bound).toBeGreaterThan(exact);

    const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter, setHeaders: () => undefined }, PROMPT);
    expect(counter.counted).toBe(0);
    expect(await bucketHolds(limiter)).toBe(BURST - bound);

    charge.settle();
    charge.settle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(counter.counted).toBe(1);
    expect(await bucketHolds(limiter)).toBe(BURST - exact);
    expect(tokensIn()).toBe(exact);
  });

  it('counts before dispatch when the bucket refuses the bound but holds the prompt', async () => {
    const cl100k = await loadCl100kCounter();
    const counter = countingCalls(cl100k);
    const limiter = createMemoryRateLimiter({ now: frozen });
    const { metrics } = meteredIn();
    const exact = cl100k.count(PROMPT);
    const bound = cl100k.upperBound!(PROMPT);
    // Leave room for the prompt but not for its bound.
    await limiter.take(bucketKey(auth), BURST - exact - 1, limits);

    const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter, setHeaders: () => undefined }, PROMPT);
    expect(counter.counted).toBe(1);
    expect(bound).toBeGreaterThan(exact + 1);
    expect(await bucketHolds(limiter)).toBe(1);
    charge.settle();
    expect(await bucketHolds(limiter)).toBe(1);
  });

  it('refuses with 429 when the exact count does not fit either', async () => {
    const cl100k = await loadCl100kCounter();
    const limiter = createMemoryRateLimiter({ now: frozen });
    const { metrics } = meteredIn();
    await limiter.take(bucketKey(auth), BURST - 2, limits);
    await expect(admitPrompt({ limiter, metrics, auth, model: 'm', counter: cl100k, setHeaders: () => undefined }, PROMPT)).rejects.toMatchObject({ status: 429 });
    expect(await bucketHolds(limiter)).toBe(2);
  });

  it('counts exactly when the bound exceeds the bucket, and admits a prompt that fits', async () => {
    const cl100k = await loadCl100kCounter();
    const counter = countingCalls(cl100k);
    const limiter = createMemoryRateLimiter({ now: frozen });
    const { metrics } = meteredIn();
    const text = 'word '.repeat(300);
    expect(cl100k.upperBound!(text)).toBeGreaterThan(BURST);
    const exact = cl100k.count(text);
    expect(exact).toBeLessThan(BURST);
    await admitPrompt({ limiter, metrics, auth, model: 'm', counter, setHeaders: () => undefined }, text);
    expect(counter.counted).toBe(1);
    expect(await bucketHolds(limiter)).toBe(BURST - exact);
  });

  it('charges the difference when a counter\'s bound is below its count (never under-charges)', async () => {
    // A counter whose bound is wrong stands in for a tokenizer without a proof: settlement still charges the count.
    const lying: TokenCounter = { count: () => 50, upperBound: () => 10 };
    const limiter = createMemoryRateLimiter({ now: frozen });
    const { metrics } = meteredIn();
    const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter: lying, setHeaders: () => undefined }, 'x');
    expect(await bucketHolds(limiter)).toBe(BURST - 10);
    charge.settle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await bucketHolds(limiter)).toBe(BURST - 50);
  });
});

describe('admitPrompt on the Redis limiter (leases on)', () => {
  let server: RedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url, { lazyConnect: false });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it('settles the bound back to the exact count in the shared bucket', async () => {
    const cl100k = await loadCl100kCounter();
    const limiter = createRedisRateLimiter({ redis, logger: silentLogger, leaseMs: 100, keepWarmMs: 0, prefix: `pc-${Date.now()}:` });
    const { metrics } = meteredIn();
    const exact = cl100k.count(PROMPT);
    const charge = await admitPrompt({ limiter, metrics, auth, model: 'm', counter: cl100k, setHeaders: () => undefined }, PROMPT);
    charge.settle();
    // The give-back may be in flight; the next take of the key is decided after it (one batcher per key).
    const after = await bucketHolds(limiter);
    // The bucket refills at 1 token a minute while the test runs: at least the exact charge is gone.
    expect(after).toBeLessThanOrEqual(BURST - exact);
    expect(after).toBeGreaterThan(BURST - cl100k.upperBound!(PROMPT));
  });
});
