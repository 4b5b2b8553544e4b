import type { CacheKeyInput } from '../../../../shared/src/cache-key/cache-key-input.js';

/**
 * The response-cache key of a request: shared/src/cache-key's computeCacheKey, passed in by the entry
 * because it hashes with node:crypto (native speed on large tensors), which the core may not import.
 */
export type CacheKeyFunction = (input: CacheKeyInput) => string;
