// Adapters for Cloudflare Workers: KV tenants and cache, Durable Objects for rate limits, admission
// and the fleet, and the KServe v2 HTTP transport over fetch (gRPC cannot run on Workers).
export * from './workers-bindings.js';
export * from './edge-config.js';
export * from './console-logger.js';
export * from './kv-tenant-store.js';
export * from './kv-response-cache.js';
export * from './http-transport.js';
export * from './snapshot-directory.js';
export * from './fleet-do.js';
export * from './rate-limiter-do.js';
export * from './admission-wire.js';
export * from './admission-do.js';
export * from './edge-dispatcher.js';
export * from './two-tier-dispatcher.js';
export * from './isolate-metrics.js';
export * from './fleet-routes.js';
export * from './llm-fetch-upstream.js';
