import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LogFields, Logger } from '../../../../shared/src/logging/index.js';
import type { CachedResponse, ResponseCache } from '../ports/index.js';
import { createCacheLayer, type CacheLayerOptions } from './cache-layer.js';
import type { CacheLabels, CacheObserver, CachePolicy, Produce, ProducedResponse } from './cache-types.js';

// ---- fakes --------------------------------------------------------------------------------------

class FakeStore implements ResponseCache {
  readonly entries = new Map<string, { value: CachedResponse; ttlSeconds: number }>();
  gets = 0;
  sets = 0;
  failGet = false;
  failSet = false;
  async get(key: string): Promise<CachedResponse | undefined> {
    this.gets++;
    if (this.failGet) throw new Error('connection refused');
    return this.entries.get(key)?.value;
  }
  async set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void> {
    this.sets++;
    if (this.failSet) throw new Error('connection refused');
    this.entries.set(key, { value, ttlSeconds });
  }
}

class RecordingObserver implements CacheObserver {
  readonly events: string[] = [];
  bytesServed = 0;
  computeSavedUs = 0;
  hit(_labels: CacheLabels, served: { bytes: number; computeUs: number; coalesced: boolean }): void {
    this.events.push(served.coalesced ? 'hit(coalesced)' : 'hit');
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
function counting(text = '{"outputs":[]}'): Produce & { calls: number; signals: AbortSignal[] } {
  const fn = Object.assign(
    async (signal: AbortSignal) => {
      fn.calls++;
      fn.signals.push(signal);
      return response(text);
    },
    { calls: 0, signals: [] as AbortSignal[] },
  );
  return fn;
}

function setup(options: Partial<CacheLayerOptions> = {}) {
  const store = new FakeStore();
  const observer = new RecordingObserver();
  const logger = recordingLogger();
  const clock = { t: 1_000_000, now() { return this.t; } };
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
    const started = deferred<AbortSignal>();
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
    const started = deferred<AbortSignal>();
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
