import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LogFields, Logger } from '../../../../shared/src/logging/logger-interface.js';
import type { CachedResponse, ResponseCache, StoredResponse } from '../ports/index.js';
import { createCacheLayer, type CacheLayerOptions } from './cache-layer.js';
import type { CacheHitSource, CacheLabels, CacheObserver, CachePolicy, Produce, ProducedResponse } from './cache-types.js';
import type { CancelSignal, Cancellation } from '../http/index.js';

// ---- fakes --------------------------------------------------------------------------------------

/** A store that expires entries on the test's clock and tells their remaining life, as Redis does. */
class FakeStore implements ResponseCache {
  readonly entries = new Map<string, { value: CachedResponse; ttlSeconds: number; expiresAt: number }>();
  gets = 0;
  sets = 0;
  failGet = false;
  failSet = false;
  /** When set, a get reads the entry at once but answers only when this settles. */
  holdGet: Promise<void> | undefined;
  constructor(private readonly clock: { now(): number }) {}
  async get(key: string): Promise<StoredResponse | undefined> {
    this.gets++;
    if (this.failGet) throw new Error('connection refused');
    const entry = this.entries.get(key);
    const now = this.clock.now();
    const found = entry === undefined || now >= entry.expiresAt ? undefined : { ...entry.value, remainingMs: entry.expiresAt - now };
    if (this.holdGet !== undefined) await this.holdGet;
    return found;
  }
  async set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void> {
    this.sets++;
    if (this.failSet) throw new Error('connection refused');
    this.entries.set(key, { value, ttlSeconds, expiresAt: this.clock.now() + ttlSeconds * 1000 });
  }
}

class RecordingObserver implements CacheObserver {
  readonly events: string[] = [];
  bytesServed = 0;
  computeSavedUs = 0;
  hit(_labels: CacheLabels, served: { bytes: number; computeUs: number; source: CacheHitSource }): void {
    this.events.push(served.source === 'store' ? 'hit' : `hit(${served.source})`);
    this.bytesServed += served.bytes;
    this.computeSavedUs += served.computeUs;
  }
  miss(): void {
    this.events.push('miss');
  }
  bypass(_labels: CacheLabels, reason: string): void {
    this.events.push(`bypass(${reason})`);
  }
  notStored(_labels: CacheLabels, reason: string): void {
    this.events.push(`notStored(${reason})`);
  }
}

function recordingLogger(): Logger & { lines: { level: string; msg: string; fields?: LogFields }[] } {
  const lines: { level: string; msg: string; fields?: LogFields }[] = [];
  const logger = {
    lines,
    info: (msg: string, fields?: LogFields) => lines.push({ level: 'info', msg, fields }),
    warn: (msg: string, fields?: LogFields) => lines.push({ level: 'warn', msg, fields }),
    error: (msg: string, fields?: LogFields) => lines.push({ level: 'error', msg, fields }),
    verbose: () => {},
    child: () => logger,
  };
  return logger;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const labels: CacheLabels = { tenant: 't1', model: 'simple', version: '1' };
const policy: CachePolicy = { ttlSeconds: 60, directive: 'default' };
const response = (text: string, computeUs = 1500): ProducedResponse => ({
  body: new TextEncoder().encode(text),
  headers: { 'Content-Type': 'application/json' },
  computeUs,
});

/** A produce callback that counts its calls and answers with `text`. */
function counting(text = '{"outputs":[]}'): Produce & { calls: number; signals: CancelSignal[] } {
  const fn = Object.assign(
    async (signal: CancelSignal) => {
      fn.calls++;
      fn.signals.push(signal);
      return response(text);
    },
    { calls: 0, signals: [] as CancelSignal[] },
  );
  return fn;
}

function setup(options: Partial<CacheLayerOptions> = {}) {
  const clock = { t: 1_000_000, now() { return this.t; } };
  const store = new FakeStore(clock);
  const observer = new RecordingObserver();
  const logger = recordingLogger();
  const layer = createCacheLayer({ store, observer, logger, clock, ...options });
  return { store, observer, logger, clock, layer };
}

const text = (body: Uint8Array): string => new TextDecoder().decode(body);

// ---- tests --------------------------------------------------------------------------------------

describe('cache layer: hits and misses', () => {
  it('misses, stores with the tier TTL, then hits with the stored body, compute saved and age', async () => {
    const { store, observer, clock, layer } = setup();
    const produce = counting('{"a":1}');
    const first = await layer.run('k', policy, labels, produce);
    expect(first.status).toBe('MISS');
    expect(store.entries.get('k')?.ttlSeconds).toBe(60);
    expect(store.entries.get('k')?.value.storedAt).toBe(1_000_000);
    clock.t += 2500;
    const second = await layer.run('k', policy, labels, produce);
    expect(second).toMatchObject({ status: 'HIT', computeUs: 1500, ageMs: 2500, headers: { 'Content-Type': 'application/json' } });
    expect(text(second.body)).toBe('{"a":1}');
    expect(produce.calls).toBe(1);
    expect(observer.events).toEqual(['miss', 'hit']);
    expect(observer.bytesServed).toBe(7);
    expect(observer.computeSavedUs).toBe(1500);
  });

  it('keeps different keys apart', async () => {
    const { layer } = setup();
    const a = await layer.run('a', policy, labels, counting('A'));
    const b = await layer.run('b', policy, labels, counting('B'));
    expect([a.status, b.status, text(a.body), text(b.body)]).toEqual(['MISS', 'MISS', 'A', 'B']);
  });
});

describe('cache layer: coalescing', () => {
  it('turns N identical concurrent misses into ONE produce call and one store write', async () => {
    const { store, observer, layer } = setup();
    const gate = deferred<ProducedResponse>();
    let calls = 0;
    const produce: Produce = () => {
      calls++;
      return gate.promise;
    };
    const runs = Array.from({ length: 10 }, () => layer.run('k', policy, labels, produce));
    gate.resolve(response('{"x":2}', 700));
    const results = await Promise.all(runs);
    expect(calls).toBe(1);
    expect(store.gets).toBe(1);
    expect(store.sets).toBe(1);
    expect(results.map((r) => r.status)).toEqual(['MISS', ...Array<string>(9).fill('HIT')]);
    expect(results.every((r) => text(r.body) === '{"x":2}')).toBe(true);
    expect(observer.events.filter((e) => e === 'hit(coalesced)')).toHaveLength(9);
    expect(observer.computeSavedUs).toBe(9 * 700);
  });

  it("gives every follower the leader's error, stores nothing, and tries again afterwards", async () => {
    const { store, layer } = setup();
    const gate = deferred<ProducedResponse>();
    let calls = 0;
    const failing: Produce = () => {
      calls++;
      return gate.promise;
    };
    const runs = Array.from({ length: 5 }, () => layer.run('k', policy, labels, failing));
    gate.reject(TesseraError.unavailable('no node has model simple READY'));
    const settled = await Promise.allSettled(runs);
    expect(calls).toBe(1);
    for (const s of settled) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'UNAVAILABLE' });
    }
    expect(store.sets).toBe(0);
    const next = counting();
    expect((await layer.run('k', policy, labels, next)).status).toBe('MISS');
    expect(next.calls).toBe(1);
  });

  it('lets a cancelled leader leave without cancelling the work its followers wait for', async () => {
    const { layer } = setup();
    const gate = deferred<ProducedResponse>();
    const started = deferred<CancelSignal>();
    const produce: Produce = (signal) => {
      started.resolve(signal);
      return gate.promise;
    };
    const leaderAbort = new AbortController();
    const leader = layer.run('k', policy, labels, produce, { signal: leaderAbort.signal });
    const follower = layer.run('k', policy, labels, produce, { signal: new AbortController().signal });
    const workSignal = await started.promise;
    leaderAbort.abort();
    await expect(leader).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(workSignal.aborted).toBe(false);
    gate.resolve(response('done'));
    const result = await follower;
    expect(result.status).toBe('HIT');
    expect(text(result.body)).toBe('done');
  });

  it('aborts the shared work when every waiting request is cancelled, and starts afresh afterwards', async () => {
    const { store, layer } = setup();
    const started = deferred<CancelSignal>();
    const produce: Produce = (signal) => {
      started.resolve(signal);
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    };
    const aborts = [new AbortController(), new AbortController()];
    const runs = aborts.map((a) => layer.run('k', policy, labels, produce, { signal: a.signal }));
    const workSignal = await started.promise;
    aborts[0]!.abort();
    expect(workSignal.aborted).toBe(false);
    aborts[1]!.abort();
    expect(workSignal.aborted).toBe(true);
    for (const run of runs) await expect(run).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(store.sets).toBe(0);
    const fresh = counting('fresh');
    const result = await layer.run('k', policy, labels, fresh);
    expect([result.status, text(result.body), fresh.calls]).toEqual(['MISS', 'fresh', 1]);
  });

  it("reruns a live follower once when the leader's produce failed with the leader's own cancellation", async () => {
    const { layer } = setup();
    const gate = deferred<ProducedResponse>();
    const leaderProduce: Produce = () => gate.promise; // misuses the leader's signal, as it were
    const followerProduce = counting('mine');
    const leader = layer.run('k', policy, labels, leaderProduce);
    const follower = layer.run('k', policy, labels, followerProduce);
    gate.reject(TesseraError.cancelled('client closed the connection'));
    await expect(leader).rejects.toMatchObject({ code: 'CANCELLED' });
    const result = await follower;
    expect([result.status, text(result.body), followerProduce.calls]).toEqual(['MISS', 'mine', 1]);
  });

  it('rejects at once when the request is already cancelled', async () => {
    const { layer } = setup();
    const produce = counting();
    await expect(layer.run('k', policy, labels, produce, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(produce.calls).toBe(0);
  });
});

describe('cache layer: directives and limits', () => {
  it('no-cache produces even when an entry exists, and refreshes it', async () => {
    const { store, layer } = setup();
    await layer.run('k', policy, labels, counting('old'));
    const fresh = counting('new');
    const result = await layer.run('k', { ttlSeconds: 30, directive: 'no-cache' }, labels, fresh);
    expect([result.status, text(result.body), fresh.calls]).toEqual(['MISS', 'new', 1]);
    expect(text(store.entries.get('k')!.value.body)).toBe('new');
    expect(store.entries.get('k')!.ttlSeconds).toBe(30);
    expect(text((await layer.run('k', policy, labels, counting('other'))).body)).toBe('new');
  });

  it('no-store produces without reading or writing: BYPASS', async () => {
    const { store, observer, layer } = setup();
    await layer.run('k', policy, labels, counting('cached'));
    const [gets, sets] = [store.gets, store.sets];
    const produce = counting('fresh');
    const result = await layer.run('k', { ttlSeconds: 60, directive: 'no-store' }, labels, produce);
    expect([result.status, text(result.body), produce.calls]).toEqual(['BYPASS', 'fresh', 1]);
    expect([store.gets, store.sets]).toEqual([gets, sets]);
    expect(observer.events.at(-1)).toBe('bypass(no-store)');
  });

  it('TTL 0 (the tier disables caching) bypasses without touching the store', async () => {
    const { store, observer, layer } = setup();
    const result = await layer.run('k', { ttlSeconds: 0, directive: 'default' }, labels, counting());
    expect(result.status).toBe('BYPASS');
    expect([store.gets, store.sets]).toEqual([0, 0]);
    expect(observer.events).toEqual(['bypass(ttl-zero)']);
  });

  it('serves but does not store a body over maxEntryBytes, nor one marked uncacheable', async () => {
    const { store, observer, layer } = setup({ maxEntryBytes: 4 });
    const big = await layer.run('k', policy, labels, counting('12345'));
    expect([big.status, text(big.body), store.sets]).toEqual(['MISS', '12345', 0]);
    expect(observer.events).toEqual(['notStored(too-large)', 'miss']);
    const exact = await layer.run('k2', policy, labels, counting('1234'));
    expect([exact.status, store.sets]).toEqual(['MISS', 1]);
    const partial: Produce = async () => ({ ...response('{}'), cacheable: false });
    expect((await layer.run('k3', policy, labels, partial)).status).toBe('MISS');
    expect(store.entries.has('k3')).toBe(false);
  });

  it('refuses a bad maxEntryBytes', () => {
    expect(() => setup({ maxEntryBytes: 0 })).toThrow(/maxEntryBytes must be a positive integer/);
  });
});

describe('cache layer: store failures', () => {
  it('bypasses and still serves when get throws; logs once per outage; probes once per interval; recovers', async () => {
    const { store, observer, logger, clock, layer } = setup({ outageProbeIntervalMs: 1000 });
    store.failGet = true;
    const produce = counting('served');
    const first = await layer.run('k', policy, labels, produce);
    expect([first.status, text(first.body)]).toEqual(['BYPASS', 'served']);
    expect(layer.storeInOutage).toBe(true);
    const second = await layer.run('k', policy, labels, produce);
    expect(second.status).toBe('BYPASS');
    expect(store.gets).toBe(1); // inside the probe interval the store is not touched
    expect(store.sets).toBe(0);
    clock.t += 1000;
    await layer.run('k', policy, labels, produce); // the probe, still failing
    expect(store.gets).toBe(2);
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(logger.lines[0]!.fields).toMatchObject({ operation: 'get', error: 'connection refused' });

    store.failGet = false;
    clock.t += 1000;
    const recovered = await layer.run('k', policy, labels, produce);
    expect(recovered.status).toBe('MISS');
    expect(layer.storeInOutage).toBe(false);
    expect(logger.lines.at(-1)).toMatchObject({ level: 'info', msg: expect.stringMatching(/reachable again/) });
    expect((await layer.run('k', policy, labels, produce)).status).toBe('HIT');
    expect(produce.calls).toBe(4);
    expect(observer.events.filter((e) => e === 'bypass(store-unavailable)')).toHaveLength(3);
  });

  it('bypasses and still serves when set throws, also for no-cache', async () => {
    const { store, logger, layer } = setup({ outageProbeIntervalMs: 0 });
    store.failSet = true;
    const result = await layer.run('k', policy, labels, counting('ok'));
    expect([result.status, text(result.body)]).toEqual(['BYPASS', 'ok']);
    const refresh = await layer.run('k', { ttlSeconds: 5, directive: 'no-cache' }, labels, counting('ok2'));
    expect(refresh.status).toBe('BYPASS');
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(logger.lines[0]!.fields).toMatchObject({ operation: 'set' });
  });

  it('coalesces during an outage too: one produce for N identical requests', async () => {
    const { store, layer } = setup();
    store.failGet = true;
    const gate = deferred<ProducedResponse>();
    let calls = 0;
    const runs = Array.from({ length: 4 }, () =>
      layer.run('k', policy, labels, () => {
        calls++;
        return gate.promise;
      }),
    );
    gate.resolve(response('x'));
    const results = await Promise.all(runs);
    expect(calls).toBe(1);
    expect(results.map((r) => r.status)).toEqual(['BYPASS', 'BYPASS', 'BYPASS', 'BYPASS']);
  });
});

describe('cache layer: in-process copy (L1)', () => {
  const withLocal = (local: CacheLayerOptions['local'] = { maxBytes: 1 << 20 }, options: Partial<CacheLayerOptions> = {}) => setup({ local, ...options });

  it('answers a repeated request from its copy, without the store, as a HIT with the same body, age and compute saved', async () => {
    const { store, observer, clock, layer } = withLocal();
    const produce = counting('{"a":1}');
    expect((await layer.run('k', policy, labels, produce)).status).toBe('MISS');
    clock.t += 1200;
    const hit = await layer.run('k', policy, labels, produce);
    expect(hit).toMatchObject({ status: 'HIT', computeUs: 1500, ageMs: 1200, headers: { 'Content-Type': 'application/json' } });
    expect(text(hit.body)).toBe('{"a":1}');
    expect([store.gets, store.sets, produce.calls]).toEqual([1, 1, 1]);
    expect(observer.events).toEqual(['miss', 'hit(local)']);
    expect(observer.computeSavedUs).toBe(1500);
    expect(layer.local?.entries).toBe(1);
  });

  it("copies an entry found in the store (another gateway's), and keeps it no longer than the store does", async () => {
    const { store, observer, clock, layer } = withLocal();
    await store.set('k', { ...response('theirs'), storedAt: clock.t }, 2); // 2 s left in the store
    store.sets = 0;
    clock.t += 500;
    const produce = counting('mine');
    expect((await layer.run('k', policy, labels, produce)).status).toBe('HIT');
    clock.t += 1499; // 1 ms before the store's expiry
    expect(text((await layer.run('k', policy, labels, produce)).body)).toBe('theirs');
    expect(store.gets).toBe(1);
    clock.t += 1; // the store's entry is gone now, and so is the copy
    const after = await layer.run('k', policy, labels, produce);
    expect([after.status, text(after.body), store.gets, produce.calls]).toEqual(['MISS', 'mine', 2, 1]);
    expect(observer.events).toEqual(['hit', 'hit(local)', 'miss']);
  });

  it('reads the store again after maxAgeMs, however long the store keeps the entry', async () => {
    const { store, observer, clock, layer } = withLocal({ maxBytes: 1 << 20, maxAgeMs: 5000 });
    const produce = counting('v1');
    await layer.run('k', policy, labels, produce); // stored for 60 s
    clock.t += 4999;
    await layer.run('k', policy, labels, produce);
    expect(store.gets).toBe(1);
    // Another gateway refreshed the entry meanwhile: seen here once the copy is 5 s old.
    store.entries.get('k')!.value = { ...response('v2'), storedAt: clock.t };
    clock.t += 1;
    const fresh = await layer.run('k', policy, labels, produce);
    expect([fresh.status, text(fresh.body), store.gets]).toEqual(['HIT', 'v2', 2]);
    expect(text((await layer.run('k', policy, labels, produce)).body)).toBe('v2');
    expect(observer.events).toEqual(['miss', 'hit(local)', 'hit', 'hit(local)']);
  });

  it('no-cache never reads the copy and replaces it once the store took the fresh response', async () => {
    const { store, layer } = withLocal();
    await layer.run('k', policy, labels, counting('old'));
    const fresh = counting('new');
    const refreshed = await layer.run('k', { ttlSeconds: 30, directive: 'no-cache' }, labels, fresh);
    expect([refreshed.status, text(refreshed.body), fresh.calls]).toEqual(['MISS', 'new', 1]);
    const next = await layer.run('k', policy, labels, counting('other'));
    expect([next.status, text(next.body), store.gets]).toEqual(['HIT', 'new', 1]);
  });

  it('no-store and TTL 0 neither read nor fill the copy', async () => {
    const { store, observer, layer } = withLocal();
    await layer.run('k', policy, labels, counting('cached'));
    const bypass = await layer.run('k', { ttlSeconds: 60, directive: 'no-store' }, labels, counting('fresh'));
    const zero = await layer.run('k', { ttlSeconds: 0, directive: 'default' }, labels, counting('zero'));
    expect([bypass.status, text(bypass.body), zero.status, text(zero.body)]).toEqual(['BYPASS', 'fresh', 'BYPASS', 'zero']);
    expect(text((await layer.run('k', policy, labels, counting('x'))).body)).toBe('cached');
    await layer.run('n', { ttlSeconds: 60, directive: 'no-store' }, labels, counting('n'));
    expect(layer.local?.entries).toBe(1);
    expect([store.gets, store.sets]).toEqual([1, 1]);
    expect(observer.events).toEqual(['miss', 'bypass(no-store)', 'bypass(ttl-zero)', 'hit(local)', 'bypass(no-store)']);
  });

  it('never copies what the store did not take: too large, uncacheable, or a failed write', async () => {
    const { store, layer } = withLocal(undefined, { maxEntryBytes: 4 });
    const big = counting('12345');
    await layer.run('big', policy, labels, big);
    expect((await layer.run('big', policy, labels, big)).status).toBe('MISS');
    expect(big.calls).toBe(2);
    const partial: Produce = async () => ({ ...response('{}'), cacheable: false });
    await layer.run('partial', policy, labels, partial);
    expect((await layer.run('partial', policy, labels, partial)).status).toBe('MISS');
    store.failSet = true;
    await layer.run('unset', policy, labels, counting('ok'));
    expect(layer.local?.entries).toBe(0);
  });

  it('keeps serving its copies while the store is down, and adds none meanwhile', async () => {
    const { store, observer, layer } = withLocal(undefined, { outageProbeIntervalMs: 0 });
    await layer.run('k', policy, labels, counting('kept'));
    store.failGet = true;
    store.failSet = true;
    const during = await layer.run('k', policy, labels, counting('unused'));
    expect([during.status, text(during.body)]).toEqual(['HIT', 'kept']);
    const other = counting('other');
    expect((await layer.run('k2', policy, labels, other)).status).toBe('BYPASS');
    expect((await layer.run('k2', policy, labels, other)).status).toBe('BYPASS');
    expect([other.calls, layer.local?.entries, layer.storeInOutage]).toEqual([2, 1, true]);
    expect(observer.events).toEqual(['miss', 'hit(local)', 'bypass(store-unavailable)', 'bypass(store-unavailable)']);
  });

  it('does not put back an older response read from the store after this gateway refreshed the entry', async () => {
    const { store, clock, layer } = withLocal({ maxBytes: 1 << 20, maxAgeMs: 60_000 });
    await store.set('k', { ...response('old'), storedAt: clock.t }, 60);
    let release!: () => void;
    store.holdGet = new Promise<void>((r) => (release = r));
    const slowRead = layer.run('k', policy, labels, counting('unused')); // reads "old", answers later
    clock.t += 10;
    store.holdGet = undefined;
    await layer.run('k', { ttlSeconds: 60, directive: 'no-cache' }, labels, counting('new'));
    release();
    expect(text((await slowRead).body)).toBe('old');
    const next = await layer.run('k', policy, labels, counting('unused'));
    expect([next.status, text(next.body)]).toEqual(['HIT', 'new']);
  });

  it('still coalesces identical concurrent misses into one produce and one store write', async () => {
    const { store, observer, layer } = withLocal();
    const gate = deferred<ProducedResponse>();
    let calls = 0;
    const runs = Array.from({ length: 5 }, () =>
      layer.run('k', policy, labels, () => {
        calls++;
        return gate.promise;
      }),
    );
    gate.resolve(response('once'));
    expect((await Promise.all(runs)).map((r) => r.status)).toEqual(['MISS', 'HIT', 'HIT', 'HIT', 'HIT']);
    expect([calls, store.gets, store.sets]).toEqual([1, 1, 1]);
    expect((await layer.run('k', policy, labels, counting())).status).toBe('HIT');
    expect(observer.events).toEqual(['miss', ...Array<string>(4).fill('hit(coalesced)'), 'hit(local)']);
  });

  it('evicts the least recently used copies over its budget (a read refreshes recency), and skips entries bigger than it', async () => {
    // Each copy is charged ~390 bytes (200 of body, key, headers, overhead): two fit in 800.
    const { store, layer } = withLocal({ maxBytes: 800 });
    const body = (key: string) => key.repeat(200);
    for (const key of ['a', 'b', 'c']) await layer.run(key, policy, labels, counting(body(key))); // a is evicted by c
    expect([store.gets, layer.local!.entries]).toEqual([3, 2]);
    expect(text((await layer.run('b', policy, labels, counting('unused'))).body)).toBe(body('b'));
    expect(store.gets).toBe(3); // b from its copy, and b is now more recent than c
    expect(text((await layer.run('a', policy, labels, counting('unused'))).body)).toBe(body('a'));
    expect(store.gets).toBe(4); // a from the store, copied again: c is evicted, b stays
    await layer.run('b', policy, labels, counting('unused'));
    expect(store.gets).toBe(4);
    await layer.run('c', policy, labels, counting('unused'));
    expect(store.gets).toBe(5);
    expect(layer.local!.bytes).toBeLessThanOrEqual(800);
    await layer.run('huge', policy, labels, counting('h'.repeat(2000)));
    expect((await layer.run('huge', policy, labels, counting('unused'))).status).toBe('HIT');
    expect(store.gets).toBe(7); // served by the store each time
  });

  it('rejects a request already cancelled, even when it has a copy', async () => {
    const { layer } = withLocal();
    await layer.run('k', policy, labels, counting());
    await expect(layer.run('k', policy, labels, counting(), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('is off with maxBytes 0, and refuses bad options', () => {
    expect(withLocal({ maxBytes: 0 }).layer.local).toBeUndefined();
    expect(setup().layer.local).toBeUndefined();
    expect(() => withLocal({ maxBytes: -1 })).toThrow(/local.maxBytes/);
    expect(() => withLocal({ maxBytes: 10, maxAgeMs: 0 })).toThrow(/local.maxAgeMs/);
  });
});

describe('cache layer: a Cancellation instead of a signal', () => {
  /** A Cancellation that counts how often its signal was made, as the node:http fast path's does. */
  const lazyCancellation = () => {
    const controller = new AbortController();
    const state = { made: 0, gone: false };
    const cancel: Cancellation = {
      get aborted() {
        return state.gone;
      },
      get signal() {
        state.made++;
        if (state.gone) controller.abort();
        return controller.signal;
      },
    };
    return { cancel, state, leave: () => ((state.gone = true), controller.abort()) };
  };

  it('answers a hit on the in-process copy without making the signal', async () => {
    const { layer } = setup({ local: { maxBytes: 1 << 20 } });
    await layer.run('k', policy, labels, counting('x'));
    const { cancel, state } = lazyCancellation();
    const hit = await layer.run('k', policy, labels, counting('y'), { cancel });
    expect([hit.status, text(hit.body), state.made]).toEqual(['HIT', 'x', 0]);
  });

  it('refuses a copy to a request whose client already left, as it would without the copy', async () => {
    const { layer } = setup({ local: { maxBytes: 1 << 20 } });
    await layer.run('k', policy, labels, counting('x'));
    const { cancel, leave } = lazyCancellation();
    leave();
    await expect(layer.run('k', policy, labels, counting('y'), { cancel })).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('hands its signal to the work of a miss, and the client leaving cancels it', async () => {
    const { layer } = setup();
    const { cancel, state, leave } = lazyCancellation();
    const started = deferred<CancelSignal>();
    const produce: Produce = (signal) => {
      started.resolve(signal);
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    };
    const run = layer.run('k', policy, labels, produce, { cancel });
    const workSignal = await started.promise;
    expect(state.made).toBeGreaterThan(0);
    leave();
    expect(workSignal.aborted).toBe(true);
    await expect(run).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('gives a no-store request the signal itself', async () => {
    const { layer } = setup();
    const { cancel, state } = lazyCancellation();
    let given: CancelSignal | undefined;
    await layer.run('k', { ttlSeconds: 5, directive: 'no-store' }, labels, async (signal) => {
      given = signal;
      return response('z');
    }, { cancel });
    expect(state.made).toBe(1);
    expect(given).toBe(cancel.signal);
  });
});
