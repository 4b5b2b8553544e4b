/**
 * The cache as the infer route uses it, with the in-process copy (L1) on: whose entry a request may
 * get. The key (shared/src/cache-key) carries the tenant unless the model is declared shared; the L1
 * uses that same key, so it must never hand one tenant's response to another.
 */
import { describe, expect, it } from 'vitest';
import { computeCacheKey } from '../../../../shared/src/cache-key/index.js';
import { silentLogger } from '../../../../shared/src/logging/logger-interface.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { DEFAULT_TIERS, loadGatewayConfig } from '../../config/index.js';
import { createCacheLayer } from '../cache/index.js';
import { cancellationOf } from '../http/index.js';
import type { CachedResponse, NodeDirectory, ResponseCache, StoredResponse } from '../ports/index.js';
import type { InferCacheRequest } from './gateway-deps.js';
import { createInferCache } from './infer-cache.js';
import { createVersionChooser } from '../routing/index.js';

/** A shared store (Redis, as it were) that counts its reads. */
class CountingStore implements ResponseCache {
  readonly entries = new Map<string, CachedResponse>();
  gets = 0;
  async get(key: string): Promise<StoredResponse | undefined> {
    this.gets++;
    const value = this.entries.get(key);
    return value === undefined ? undefined : { ...value, remainingMs: 60_000 };
  }
  async set(key: string, value: CachedResponse): Promise<void> {
    this.entries.set(key, value);
  }
}

const directory: NodeDirectory = {
  candidates: () => [],
  all: () => [],
  observe: () => {},
  track: () => () => {},
  close: async () => {},
};

const request: InferRequest = {
  id: '',
  modelName: 'simple',
  modelVersion: '1',
  inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 1], data: new Uint8Array([7, 0, 0, 0]) }],
  parameters: {},
};

function setup(shared: boolean) {
  const config = loadGatewayConfig(JSON.stringify({ cache: { models: { simple: { shared } } } }));
  const store = new CountingStore();
  const layer = createCacheLayer({ store, logger: silentLogger, local: { maxBytes: 1 << 20 } });
  const keys: string[] = [];
  const computeKey: typeof computeCacheKey = (input) => {
    const key = computeCacheKey(input);
    keys.push(key);
    return key;
  };
  const cache = createInferCache({ layer, settings: config.cache, versions: createVersionChooser({ directory, routing: config.routing }), computeKey });
  const produced: string[] = [];
  /** One request of `tenant`; the node's answer names the tenant it was computed for. */
  const run = async (tenantId: string, cacheControl: string | null = null) => {
    const input: InferCacheRequest = {
      tenantId,
      tier: DEFAULT_TIERS.standard,
      request,
      binaryOutputDefault: false,
      headers: { get: (name) => (name === 'cache-control' ? cacheControl : null) },
      cancel: cancellationOf(new AbortController().signal),
      produce: async () => {
        produced.push(tenantId);
        return { body: new TextEncoder().encode(`{"for":"${tenantId}"}`), headers: {}, computeUs: 1, modelVersion: '1' };
      },
    };
    const result = await cache.run(input);
    return { status: result.status, body: new TextDecoder().decode(result.body) };
  };
  return { store, layer, run, produced, keys };
}

describe('infer cache with the in-process copy', () => {
  it("never answers tenant B with tenant A's copy of the same request", async () => {
    const { store, layer, run, produced } = setup(false);
    expect(await run('a')).toEqual({ status: 'MISS', body: '{"for":"a"}' });
    expect(await run('a')).toEqual({ status: 'HIT', body: '{"for":"a"}' });
    expect(store.gets).toBe(1); // A's second request came from A's copy
    expect(await run('b')).toEqual({ status: 'MISS', body: '{"for":"b"}' });
    expect(await run('b')).toEqual({ status: 'HIT', body: '{"for":"b"}' });
    expect(await run('a')).toEqual({ status: 'HIT', body: '{"for":"a"}' });
    expect(produced).toEqual(['a', 'b']);
    expect(layer.local?.entries).toBe(2);
  });

  it('shares one entry between tenants only for a model declared shared', async () => {
    const { run, produced } = setup(true);
    expect((await run('a')).status).toBe('MISS');
    expect(await run('b')).toEqual({ status: 'HIT', body: '{"for":"a"}' });
    expect(produced).toEqual(['a']);
  });

  it('computes the key only when the store is consulted: never for no-store', async () => {
    const { store, run, produced, keys } = setup(false);
    expect((await run('a', 'no-store')).status).toBe('BYPASS');
    expect(keys).toEqual([]);
    expect(store.gets).toBe(0);
    expect((await run('a')).status).toBe('MISS');
    expect((await run('a', 'no-cache')).status).toBe('MISS');
    expect((await run('a')).status).toBe('HIT');
    // One key per request that used the store, the same one each time (the tenant's entry).
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(produced).toEqual(['a', 'a', 'a']);
  });
});

describe('infer cache on a static fleet (no version reports)', () => {
  it('follows a newly deployed version: the remembered one keys the cache but never pins the node, and a newer answer is not stored under it', async () => {
    const config = loadGatewayConfig(JSON.stringify({ cache: { models: { simple: { shared: false } } } }));
    const layer = createCacheLayer({ store: new CountingStore(), logger: silentLogger });
    const cache = createInferCache({ layer, settings: config.cache, versions: createVersionChooser({ directory, routing: config.routing }), computeKey: computeCacheKey });
    let nodeLatest = '1';
    const askedFor: string[] = [];
    const run = async (cacheControl: string | null = null) => {
      const result = await cache.run({
        tenantId: 't',
        tier: DEFAULT_TIERS.standard,
        request: { ...request, modelVersion: '' },
        binaryOutputDefault: false,
        headers: { get: (name) => (name === 'cache-control' ? cacheControl : null) },
        cancel: cancellationOf(new AbortController().signal),
        produce: async (pinned) => {
          askedFor.push(pinned.modelVersion ?? '');
          return { body: new TextEncoder().encode(`{"v":"${nodeLatest}"}`), headers: {}, computeUs: 1, modelVersion: nodeLatest };
        },
      });
      return `${result.status} ${new TextDecoder().decode(result.body)}`;
    };
    expect(await run()).toBe('BYPASS {"v":"1"}'); // no version known yet
    expect(await run()).toBe('MISS {"v":"1"}'); // keyed by the answered version
    expect(await run()).toBe('HIT {"v":"1"}');
    nodeLatest = '2'; // a new version deployed: the cached answer of 1 is served until it expires or is refreshed
    expect(await run()).toBe('HIT {"v":"1"}');
    expect(await run('no-cache')).toBe('MISS {"v":"2"}'); // answered by 2, not stored under 1's key
    expect(await run()).toBe('MISS {"v":"2"}'); // now keyed by 2
    expect(await run()).toBe('HIT {"v":"2"}');
    expect(askedFor).toEqual(['', '', '', '']); // the node always chose its own latest
  });
});
