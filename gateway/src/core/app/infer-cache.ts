/**
 * Joins the app to the cache layer (core/cache): which version a request will be served by (the cache
 * key needs the resolved version, never "latest"), the key itself (shared/src/cache-key, through the CacheKeyFunction port), and the
 * policy (per-model switch and sharing from the config, TTL from the tier, the client's Cache-Control).
 *
 * Version resolution, before the dispatch, so the key and the upstream call agree: the dispatcher's own
 * version chooser (core/routing/version-chooser.ts: the URL's, else the split, else the latest READY on
 * a node whose breaker is not open), else (a static fleet without reports) the version the nodes last
 * answered with for this model. A chosen version pins the dispatch; a remembered one only keys the cache:
 * the node still picks its own latest, and an answer from another version (a new one deployed on a
 * static fleet) is served but not stored under the old key, and is remembered for the next request.
 * When none can be found (the first request to a model in a static fleet, an unknown model) the
 * request BYPASSes the cache.
 */
import { cancelSignalOf, type CancelSignal } from '../http/index.js';
import { cacheNamespace } from '../../../../shared/src/cache-key/cache-key-input.js';
import { isCacheable } from '../../../../shared/src/cache-key/cacheable.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { modelCacheSettings, type CacheSettings } from '../../config/index.js';
import type { CacheLayer, CacheRunResult } from '../cache/index.js';
import { bypassRunOf, parseCacheControl } from '../cache/index.js';
import type { CacheKeyFunction, Tier } from '../ports/index.js';
import type { VersionChooser } from '../routing/index.js';
import type { GatewayInferCache, InferCacheRequest } from './gateway-deps.js';

export interface InferCacheOptions {
  readonly layer: CacheLayer;
  readonly settings: CacheSettings;
  /** The dispatcher's chooser (Dispatcher.versions), or one over the same directory and routing. */
  readonly versions: VersionChooser;
  /** shared/src/cache-key's computeCacheKey. */
  readonly computeKey: CacheKeyFunction;
  /** Redis key prefix of cache entries; default "tessera:". */
  readonly keyPrefix?: string;
}

export function createInferCache(options: InferCacheOptions): GatewayInferCache {
  const { layer, settings, versions } = options;
  const answeredVersion = new Map<string, string>();

  return {
    async run(input: InferCacheRequest): Promise<CacheRunResult> {
      const { request, tenantId, tier } = input;
      const model = request.modelName;
      const chosen = versions.choose(model, request.modelVersion, input.headers);
      const version = chosen ?? answeredVersion.get(model);
      const produce = async (signal: CancelSignal) => {
        // Pinned only when produced: the key takes the version on its own, so a hit copies nothing.
        const pinned: InferRequest = chosen === undefined ? request : { ...request, modelVersion: chosen };
        const produced = await input.produce(pinned, signal);
        if (produced.modelVersion === '') return produced;
        answeredVersion.set(model, produced.modelVersion);
        // Keyed by a remembered version the node no longer answers with: never stored under that key.
        return version === undefined || produced.modelVersion === version ? produced
          : // Named fields, not a spread: `produced` may be an EncodedOnRead, whose body is a getter.
            { body: produced.body, headers: produced.headers, computeUs: produced.computeUs, modelVersion: produced.modelVersion, cacheable: false };
      };
      const modelSettings = modelCacheSettings(settings, model);
      if (version === undefined || !modelSettings.enabled || !isCacheable(request)) {
        return bypassRunOf(await produce(cancelSignalOf(input.cancel)));
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
