/**
 * The cache and the dispatcher ask one version chooser (core/routing/version-chooser.ts), so the version
 * a cache entry is keyed on is the version that served it, breakers included.
 */
import { describe, expect, it } from 'vitest';
import { computeCacheKey } from '../../../../shared/src/cache-key/index.js';
import { silentLogger } from '../../../../shared/src/logging/logger-interface.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { DEFAULT_TIERS, loadGatewayConfig } from '../../config/index.js';
import { createCacheLayer } from '../cache/index.js';
import { cancellationOf } from '../http/index.js';
import type { CachedResponse, NodeDirectory, NodeTransport, NodeView, ResponseCache, StoredResponse, UpstreamInferResult } from '../ports/index.js';
import { createDispatcher } from '../routing/index.js';
import { testTier } from '../routing/test-tier.js';
import { createInferCache } from './infer-cache.js';

/** Node a serves version 1 only, node b version 2 only. */
function fleet(): NodeDirectory {
  const node = (id: string, version: string): NodeView => ({
    id,
    httpAddress: null,
    grpcAddress: `${id}:8001`,
    draining: false,
    localInflight: 0,
    models: new Map([['m', { queued: 0, inflight: 0, capacity: 4, execTimeEmaMs: null, versions: [version] }]]),
  });
  const nodes = [node('a', '1'), node('b', '2')];
  return {
    candidates: (model, version) => nodes.filter((n) => n.models.get(model)?.versions.some((v) => version === undefined || v === version)),
    all: () => nodes,
    observe: () => {},
    track: () => () => {},
    close: async () => {},
  };
}

/** Answers at once with the version it was asked for, and records which node served which version. */
class AnsweringTransport implements NodeTransport {
  readonly served: { node: string; version: string | undefined }[] = [];
  async infer(node: NodeView, request: InferRequest): Promise<UpstreamInferResult> {
    this.served.push({ node: node.id, version: request.modelVersion });
    return { response: { id: '', modelName: 'm', modelVersion: request.modelVersion ?? '', outputs: [] }, load: { queued: 0, inflight: 0 } };
  }
  async modelConfig(): Promise<unknown> {
    return {};
  }
  async modelMetadata(): Promise<unknown> {
    return {};
  }
  async close() {}
}

/** The shared store (Redis, as it were) as a map. */
class MapStore implements ResponseCache {
  readonly entries = new Map<string, CachedResponse>();
  async get(key: string): Promise<StoredResponse | undefined> {
    const value = this.entries.get(key);
    return value === undefined ? undefined : { ...value, remainingMs: 60_000 };
  }
  async set(key: string, value: CachedResponse): Promise<void> {
    this.entries.set(key, value);
  }
}

const request: InferRequest = {
  id: '',
  modelName: 'm',
  inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 1], data: new Uint8Array([7, 0, 0, 0]) }],
  parameters: {},
};

function setup(open: Set<string>) {
  const config = loadGatewayConfig(
    JSON.stringify({
      cache: { models: { m: { enabled: true } } },
      routing: { models: { m: { splits: [{ version: '1', weight: 50 }, { version: '2', weight: 50 }] } } },
    }),
  );
  const transport = new AnsweringTransport();
  // 0.9 falls in version 2's half of the split whenever both versions are in it.
  const dispatcher = createDispatcher({
    directory: fleet(),
    transport,
    breakers: { isOpen: (id) => open.has(id) },
    routing: config.routing,
    random: () => 0.9,
  });
  const keyed: string[] = [];
  const cache = createInferCache({
    layer: createCacheLayer({ store: new MapStore(), logger: silentLogger }),
    settings: config.cache,
    versions: dispatcher.versions,
    computeKey: (input) => {
      keyed.push(input.version);
      return computeCacheKey(input);
    },
  });
  const run = () =>
    cache.run({
      tenantId: 't',
      tier: DEFAULT_TIERS.standard,
      request,
      binaryOutputDefault: false,
      headers: { get: () => null },
      cancel: cancellationOf(new AbortController().signal),
      produce: async (pinned, signal) => {
        const result = await dispatcher.dispatch(pinned, { tenantId: 't', tier: testTier(200), deadline: Date.now() + 200, signal });
        return { body: new TextEncoder().encode('{}'), headers: {}, computeUs: 1, modelVersion: result.response.modelVersion };
      },
    });
  return { transport, keyed, run, dispatcher };
}

describe('one version chooser for the cache and the dispatch', () => {
  it('keys on the version that serves when the split names a version whose only node has an open breaker', async () => {
    const t = setup(new Set(['b']));
    const result = await t.run();
    expect(result.status).toBe('MISS');
    expect(t.transport.served).toEqual([{ node: 'a', version: '1' }]);
    expect(t.keyed[0]).toBe('1');
    expect(new Set(t.keyed)).toEqual(new Set(['1']));
    await t.dispatcher.close();
  });

  it('follows the split again once the breaker closes, key and served version together', async () => {
    const open = new Set(['b']);
    const t = setup(open);
    await t.run();
    open.delete('b');
    expect((await t.run()).status).toBe('MISS');
    expect(t.transport.served.at(-1)).toEqual({ node: 'b', version: '2' });
    expect(t.keyed.at(-1)).toBe('2');
    await t.dispatcher.close();
  });

  it('keeps its choice when every breaker is open, so cached answers are still served', async () => {
    const open = new Set<string>();
    const t = setup(open);
    expect((await t.run()).status).toBe('MISS');
    open.add('a').add('b');
    expect((await t.run()).status).toBe('HIT');
    expect(t.transport.served).toEqual([{ node: 'b', version: '2' }]);
    expect(new Set(t.keyed)).toEqual(new Set(['2']));
    await t.dispatcher.close();
  });
});
