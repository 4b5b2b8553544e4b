// What a response-cache key is computed from, apart from the hashing (./cache-key.ts), which needs
// node:crypto: the gateway core imports this module and receives computeCacheKey through a port.
import type { InferRequest, RequestedOutput } from '../tensors/index.js';

/** Whose entry this is: one tenant's, or everyone's for a model declared shared across tenants. */
export type CacheNamespace = { readonly tenant: string } | 'shared';

export interface CacheKeyInput {
  readonly namespace: CacheNamespace;
  readonly model: string;
  /** The version that will actually serve the request (resolved from "latest"); non-empty. */
  readonly version: string;
  readonly request: InferRequest;
  /** The outputs the client asked for, with their binary flags; default `request.outputs`. */
  readonly outputs?: readonly RequestedOutput[];
  /** Request-level `binary_data_output` (true for raw binary requests). */
  readonly binaryOutputDefault: boolean;
  /** Key prefix; default `tessera:` (the fleet keys' prefix). No braces, glob characters or whitespace. */
  readonly prefix?: string;
}

/** The namespace for a tenant's request to a model: 'shared' when the model is shared across tenants. */
export function cacheNamespace(tenantId: string, sharedAcrossTenants: boolean): CacheNamespace {
  return sharedAcrossTenants ? 'shared' : { tenant: tenantId };
}
