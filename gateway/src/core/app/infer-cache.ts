/**
 * Joins the app to the cache layer (core/cache): which version a request will be served by (the cache
 * key needs the resolved version, never "latest"), the key itself (shared/src/cache-key, through the CacheKeyFunction port), and the
 * policy (per-model switch and sharing from the config, TTL from the tier, the client's Cache-Control).
 *
 * Version resolution, before the dispatch, so the key and the upstream call agree:
 * 1. the version in the URL;
 * 2. else the model's traffic split (the same `selectVersion` the dispatcher uses);
 * 3. else the highest version READY in the fleet (Triton's default "latest" policy);
 * 4. else (a static fleet without reports) the version the nodes last answered with for this model.
 * The request is then dispatched pinned to that version. When none can be found (the first request
 * to a model in a static fleet, an unknown model) the request BYPASSes the cache.
 * Caveat of 4: after a new version is deployed on a static fleet, a request naming no version may get
 * an entry of the previous version until its TTL ends.
 */
import { cacheNamespace } from '../../../../shared/src/cache-key/cache-key-input.js';
import { isCacheable } from '../../../../shared/src/cache-key/cacheable.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { modelCacheSettings, type CacheSettings } from '../../config/index.js';
import type { CacheLayer, CacheRunResult } from '../cache/index.js';
import { parseCacheControl } from '../cache/index.js';
import type { HeaderReader } from '../http/index.js';
import type { CacheKeyFunction, NodeDirectory, Tier } from '../ports/index.js';
import { selectVersion, type RoutingConfig } from '../routing/index.js';
import type { GatewayInferCache, InferCacheRequest } from './gateway-deps.js';

export interface InferCacheOptions {
  readonly layer: CacheLayer;
  readonly settings: CacheSettings;
  readonly directory: NodeDirectory;
  readonly routing: RoutingConfig;
  /** shared/src/cache-key's computeCacheKey. */
  readonly computeKey: CacheKeyFunction;
  /** Redis key prefix of cache entries; default "tessera:". */
  readonly keyPrefix?: string;
  /** For unsticky splits; default Math.random. */
  readonly random?: () => number;
}

function compareVersions(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function createInferCache(options: InferCacheOptions): GatewayInferCache {
  const { layer, settings, directory, routing } = options;
  const random = options.random ?? Math.random;
  const answeredVersion = new Map<string, string>();

  function latestReady(model: string): string | undefined {
    let best: string | undefined;
    for (const node of directory.candidates(model)) {
      for (const v of node.models.get(model)?.versions ?? []) {
        if (/^[0-9]+$/.test(v) && (best === undefined || compareVersions(v, best) > 0)) best = v;
      }
    }
    return best;
  }

  function resolveVersion(request: InferRequest, headers: HeaderReader): string | undefined {
    const model = request.modelName;
    if (request.modelVersion !== undefined && request.modelVersion !== '') return request.modelVersion;
    const modelRouting = routing.models?.[model];
    if (modelRouting?.splits !== undefined && modelRouting.splits.length > 0) {
      const sticky = modelRouting.stickyHeader !== undefined ? (headers.get(modelRouting.stickyHeader) ?? undefined) : undefined;
      const chosen = selectVersion(model, modelRouting, sticky, (v) => directory.candidates(model, v).length > 0, random);
      if (chosen !== undefined) return chosen;
    }
    return latestReady(model) ?? answeredVersion.get(model);
  }

  return {
    async run(input: InferCacheRequest): Promise<CacheRunResult> {
      const { request, tenantId, tier } = input;
      const model = request.modelName;
      const version = resolveVersion(request, input.headers);
      const produce = async (signal: AbortSignal) => {
        // Pinned only when produced: the key takes the version on its own, so a hit copies nothing.
        const pinned: InferRequest = version === undefined ? request : { ...request, modelVersion: version };
        const produced = await input.produce(pinned, signal);
        if (produced.modelVersion !== '') answeredVersion.set(model, produced.modelVersion);
        return produced;
      };
      const modelSettings = modelCacheSettings(settings, model);
      if (version === undefined || !modelSettings.enabled || !isCacheable(request)) {
        return { ...(await produce(input.cancel.signal)), status: 'BYPASS' };
      }
      // Computed by the layer only when it reads or writes the store: a no-store miss hashes nothing.
      const key = (): string =>
        options.computeKey({
          namespace: cacheNamespace(input.tenantScope ?? tenantId, modelSettings.shared),
          model,
          version,
          request,
          binaryOutputDefault: input.binaryOutputDefault,
          ...(options.keyPrefix === undefined ? {} : { prefix: options.keyPrefix }),
        });
      const policy = { ttlSeconds: ttlOf(tier), directive: parseCacheControl(input.headers.get('cache-control'), input.headers.get('pragma')) };
      // `input` is the run's options as it is: its `cancel` makes the signal only where one is handed on.
      return layer.run(key, policy, { tenant: tenantId, model, version }, produce, input);
    },
  };
}

function ttlOf(tier: Tier): number {
  return tier.cacheTtlSeconds;
}
