/**
 * The gateway's configuration, as `loadGatewayConfig` returns it: complete (every default filled in),
 * validated and frozen. The file is JSON; every field is optional. Schema (defaults in brackets):
 *
 * ```jsonc
 * {
 *   "port": 8080,                    // [8080] HTTP listen port; `--port` overrides
 *   "host": "0.0.0.0",               // ["0.0.0.0"]
 *   "serverName": "triton",          // ["triton"] the name `GET /v2` answers (Triton's, for its clients)
 *   "adminKeyHash": "<64 hex>",      // sha256(admin key) in hex; env TESSERA_ADMIN_KEY (plaintext) overrides.
 *                                    //   Neither set → the admin API answers 403 (disabled).
 *   "redisUrl": "redis://host:6379", // [none] env REDIS_URL overrides; none → in-process stores (one gateway only)
 *   "keyPrefix": "tessera:",         // ["tessera:"] prefix of every Redis key
 *   "requestTimeoutMs": 30000,       // [30000] deadline of model metadata/config calls to nodes. An infer's
 *                                    //   deadline (admission + upstream) is its tier's queueTimeoutMs; a
 *                                    //   client's `x-tessera-deadline-ms` can only shorten either
 *   "maxBodyBytes": 67108864,        // [64 MiB] largest accepted request body
 *   "maxPipelinedRequests": 32,      // [32] requests one HTTP/1.1 connection may have in progress at once;
 *                                    //   a pipelined request beyond it gets 503 + Connection: close, unprocessed
 *                                    //   (shared/src/http/pipelining-limit.ts). Node entry only: Workers own their sockets
 *   "httpRawReader": true,           // [true] infer requests read by our own strict HTTP/1.1 reader
 *   "grpcRawH2": true,               // [true]  the gRPC port read by our own HTTP/2 reader (every unary call in
 *                                    //   place, ModelStreamInfer relayed to grpc-js on loopback)
 *   "grpcUpstreamRawH2": true,       // deprecated, ignored: every gRPC call to nodes is on our own HTTP/2
 *                                    //   client since node:http2's was retired (issue 17); false is refused
 *                                    //   (shared/src/http/raw-http1) until a request on the connection needs
 *                                    //   node:http; `--http-raw-reader` overrides. Node entry only
 *   "rateLimitLeaseMs": 100,         // [100] with Redis: each rate-limit script call also leases this long of
 *                                    //   the tenant's rate to this gateway, whose next requests are decided
 *                                    //   in memory; 0 = every request decided in Redis. What it bounds:
 *                                    //   adapters/redis/token-leases.ts
 *   "rateLimitKeepWarmMs": 5000,     // [5000] a lease used within this long stays spendable, and is renewed in
 *                                    //   the background once spent from, so a tenant's first request after idle
 *                                    //   does not wait for Redis (no script call while idle); 0 = off
 *   "metrics": { "requireAdminKey": true },   // [true] whether /metrics needs the admin key (Bearer). false only
 *                                    //   where the gateway's port is reachable from a private Prometheus
 *                                    //   network alone: the metrics name tenants, models and nodes
 *   "webhooks": {                     // which job webhook URLs are accepted (core/jobs/webhook-policy.ts)
 *     "allowHttp": false,             // [false] https only; true also accepts http://
 *     "allow": ["hooks.internal", "10.20.0.0/16"]  // [[]] internal receivers (host names or CIDRs) let
 *   },                                //   through although loopback/private/link-local... are refused
 *   "tiers": {                        // premium/standard/free exist by default; an entry with one of those
 *     "free": { "rateLimits": { "requestsPerSecond": 2 } },   // names overrides only the fields it gives;
 *     "gold": { "priority": 1, "queueTimeoutMs": 3000, "queueShare": 0.5,   // a new name needs them all
 *               "rateLimits": { "requestsPerSecond": 100, "burst": 200, "elementsPerSecond": 0, "elementsBurst": 0,
 *                               "bytesPerSecond": 0, "bytesBurst": 0 },   // bytes: optional, [0 = unlimited]
 *               "cacheTtlSeconds": 300, "allowedModels": ["*"],
 *               "maxRequestBytes": 1048576,  // optional: largest request body, 413 above [maxBodyBytes]
 *               "jobs": { "maxPayloadBytes": 1048576, "maxStoredJobs": 100, "resultTtlSeconds": 3600 } }
 *                                  // optional: largest job body and result, most jobs stored per tenant,
 *                                  //   how long a job is kept [maxBodyBytes, 1000, 86400]
 *               "llm": { "tokensPerMinute": 100000, "tokensBurst": 100000, "cacheCompletions": true } }
 *                                  // optional: LLM tokens per minute and completion caching (read-llm-config.ts)
 *   },
 *   "tenants": [                      // [] tenants for small setups (seeded into Redis when it is used)
 *     { "id": "acme", "name": "Acme", "tier": "premium", "allowedModels": ["simple"],
 *       "keys": [ { "id": "acme-1", "hash": "<sha256 hex of the key>" } ] }
 *   ],
 *   "nodes": [ { "id": "n1", "grpc": "10.0.0.5:8001", "http": "10.0.0.5:8000" } ],  // static fleet without Redis
 *                                    //   (optional "llmH2": "host:port", the node's --llm-h2c-port)
 *   "grpcTransport": "http2",        // ["http2"] how the gateway speaks gRPC to nodes: "http2" (our client on
 *                                    //   node:http2, adapters/grpc/h2-transport.ts), the only one left
 *   "nodeRawInferBelowCalls": 64,    // [64] an HTTP client's infer miss goes to a node as one raw HTTP/1.1 write
 *                                    //   while the node has fewer of this gateway's calls in flight, gRPC above
 *                                    //   (adapters/node-http/raw-infer-upstream.ts); 0: always gRPC
 *   "routing": {                      // [p2c, no splits]
 *     "policy": "p2c",                // ["p2c"] or "round-robin"
 *     "models": { "resnet": { "splits": [ { "version": "1", "weight": 90 }, { "version": "2", "weight": 10 } ],
 *                             "stickyHeader": "x-session-id" } }   // versions for requests naming none
 *   },
 *   "llm": { "maxStreamsPerNode": 256, "maxPromptChars": 524288, "chargeEveryTokens": 16 },  // LLM routes
 *                                    //   (config/read-llm-config.ts)
 *   "cache": {
 *     "enabled": true,                // [true] master switch
 *     "maxEntryBytes": 1048576,       // [1 MiB] larger responses are not stored
 *     "localMaxBytes": 67108864,      // [64 MiB] in-process copy (L1) of Redis entries, LRU by bytes; 0 = off.
 *                                     //   Only with Redis (embedded mode's cache is in process already)
 *     "localMaxAgeSeconds": 5,        // [5] an L1 copy is served at most this long (and never past the Redis
 *                                     //   entry's expiry) before Redis is read again: how long a refresh or
 *                                     //   flush made through another gateway can go unseen here
 *     "commandTimeoutMs": 250,        // [250] longest wait for one Redis cache GET or SET (1-60000): past it a
 *                                     //   lookup is a miss and a store is skipped, so a slow Redis costs no more
 *     "models": { "simple": { "enabled": true, "shared": false }, "*": { "enabled": false } }
 *                                     // [{}] per model (or "*" for the rest): enabled [true once listed],
 *                                     //   shared [false]; a model neither listed nor covered by "*" is not cached
 *                                     //   (shared = one entry for all tenants instead of one per tenant)
 *   }
 * }
 * ```
 */
import type { WebhookPolicy } from '../core/jobs/webhook-policy.js';
import type { RateLimits, Tier } from '../core/ports/index.js';
import type { RoutingConfig } from '../core/routing/index.js';
import type { LlmConfig } from './read-llm-config.js';

/** The gRPC clients the gateway can reach nodes with (adapters/grpc). */
/** Why `grpcUpstreamRawH2: false` / `--grpc-upstream-raw-h2 false` is refused: nothing is left for it to choose. */
export const UPSTREAM_RAW_H2_RETIRED = "node:http2's upstream client was retired (issue 17): every gRPC call to nodes runs on the gateway's own HTTP/2 client; remove the setting";
export const GRPC_TRANSPORTS = ['http2'] as const;
export type GrpcTransportName = (typeof GRPC_TRANSPORTS)[number];

export interface StaticNodeConfig {
  readonly id: string;
  /** `host:port` of the node's gRPC endpoint. */
  readonly grpc: string | null;
  /** `host:port` of the node's HTTP endpoint. */
  readonly http: string | null;
  /** `host:port` of the node's LLM routes over HTTP/2 (its --llm-h2c-port); absent: HTTP/1.1 at `http`. */
  readonly llmH2?: string;
}

export interface ConfigApiKey {
  readonly id: string;
  /** sha256 of the key, lowercase hex. */
  readonly hash: string;
}

export interface ConfigTenant {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  readonly allowedModels?: readonly string[];
  readonly keys: readonly ConfigApiKey[];
}

export interface ModelCacheSettings {
  readonly enabled: boolean;
  readonly shared: boolean;
}

export interface CacheSettings {
  readonly enabled: boolean;
  readonly maxEntryBytes: number;
  /** Byte budget of the in-process copy (L1) in front of Redis; 0 turns it off. */
  readonly localMaxBytes: number;
  /** Longest life of an L1 copy before Redis is read again, in seconds (> 0). */
  readonly localMaxAgeSeconds: number;
  /** Longest wait for one Redis cache command (GET/SET), in ms: past it a lookup is a miss and a store is skipped. */
  readonly commandTimeoutMs?: number;
  /** Per model; the entry "*" applies to models not listed. */
  readonly models: Readonly<Record<string, ModelCacheSettings>>;
}

export interface GatewayConfig {
  readonly port: number;
  readonly host: string;
  /** The gRPC front door's port (inference.GRPCInferenceService, same host); null (default) = no gRPC listener. */
  readonly grpcPort: number | null;
  /** The server name `GET /v2` reports; default "triton". */
  readonly serverName: string;
  readonly adminKeyHash: string | null;
  readonly redisUrl: string | null;
  readonly keyPrefix: string;
  readonly requestTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly maxPipelinedRequests: number;
  /** Infer requests read by the raw HTTP/1.1 reader (adapters/node-http/raw-infer-front.ts); Node entry only. */
  readonly httpRawReader: boolean;
  /** The gRPC front door on the raw HTTP/2 reader (adapters/grpc-front, shared/src/http/raw-http2); Node entry only. */
  readonly grpcRawH2: boolean;
  readonly rateLimitLeaseMs: number;
  /** Renew leases used within this long ahead of time (0: let them expire); absent: the default. */
  readonly rateLimitKeepWarmMs?: number;
  readonly metrics: { readonly requireAdminKey: boolean };
  /** Which webhook targets jobs may name (core/jobs/webhook-policy.ts). */
  readonly webhooks: WebhookPolicy;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly tenants: readonly ConfigTenant[];
  readonly nodes: readonly StaticNodeConfig[];
  readonly grpcTransport: GrpcTransportName;
  /** HTTP clients' infer misses go to a node as raw HTTP/1.1 while it has fewer of this gateway's calls in flight; 0: always gRPC. */
  readonly nodeRawInferBelowCalls: number;
  /** Validated by the routing module (core/routing/version-splits.ts). */
  readonly routing: RoutingConfig;
  readonly cache: CacheSettings;
  /** LLM routes: streams per node, prompt length, charge step (config/read-llm-config.ts). */
  readonly llm: LlmConfig;
}

export type { RateLimits, Tier };

/** The cache settings that apply to one model: its own entry, else "*", else disabled. */
export function modelCacheSettings(cache: CacheSettings, model: string): ModelCacheSettings {
  if (!cache.enabled) return { enabled: false, shared: false };
  return cache.models[model] ?? cache.models['*'] ?? { enabled: false, shared: false };
}
