/**
 * `loadGatewayConfig(text)`: JSON text → a complete, validated, frozen GatewayConfig. It never stops at
 * the first problem: every problem found is listed in one INVALID_ARG error, one per line, each with
 * the JSON path it concerns, so an operator fixes the file in one round.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import { DEFAULT_KEY_PREFIX } from '../../../shared/src/fleet/keys.js';
import { DEFAULT_MAX_PIPELINED_REQUESTS } from '../../../shared/src/http/pipelining-limit.js';
import { allowEntryProblem, type WebhookPolicy } from '../core/jobs/webhook-policy.js';
import type { RateLimits, Tier, TierJobLimits } from '../core/ports/index.js';
import { normalizeRoutingConfig, PICKER_NAMES, type ModelRouting, type PickerName, type RoutingConfig } from '../core/routing/index.js';
import { DEFAULT_TIERS } from './default-tiers.js';
import { readLlmConfig, readTierLlm } from './read-llm-config.js';
import type {
  CacheSettings,
  ConfigApiKey,
  ConfigTenant,
  GatewayConfig,
  GrpcTransportName,
  ModelCacheSettings,
  StaticNodeConfig,
} from './gateway-config.js';
import { GRPC_TRANSPORTS, UPSTREAM_RAW_H2_RETIRED } from './gateway-config.js';

/** Tenant ids, key ids and tier names end up in Redis key names and metric labels: keep them plain. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const HOST_PORT = /^[^\s/]+:\d{1,5}$/;

export const DEFAULT_PORT = 8080;
/** What `GET /v2` names the server: Triton's name, which Triton's clients and tools may check. */
export const DEFAULT_SERVER_NAME = 'triton';
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** On: in turns against main it took 20-30% off the gateway's CPU per HTTP cache hit, misses unchanged within the noise (docs/benchmarks.md, issue 17, 2026-11-27d). */
export const DEFAULT_HTTP_RAW_READER = true;
/** On: in turns against the last stop, ServerLive 0.60x and ModelInfer hits 0.72-0.83x the gateway's CPU; a relayed ModelStreamInfer response within the noise (docs/benchmarks.md, quiet-box reruns after the fourteenth pass). */
export const DEFAULT_GRPC_RAW_H2 = true;
export const DEFAULT_MAX_CACHE_ENTRY_BYTES = 1024 * 1024;
export const DEFAULT_CACHE_LOCAL_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CACHE_LOCAL_MAX_AGE_SECONDS = 5;
/** Rate-limit lease: 100 ms of a tenant's rate per Redis call (adapters/redis/token-leases.ts). */
export const DEFAULT_RATE_LIMIT_LEASE_MS = 100;
/** Raw HTTP/1.1 infer below this many calls in flight to a node (raw-infer-upstream.ts): raw was cheaper at every load measured (docs/benchmarks.md, issue 17); 64 = the idle sockets kept per node, so no connection is opened per call in steady state. */
export const DEFAULT_NODE_RAW_INFER_BELOW_CALLS = 64;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collects problems with their paths; readers return undefined for a wrong value and go on. */
class Checker {
  readonly issues: string[] = [];

  issue(path: string, message: string): undefined {
    this.issues.push(`${path}: ${message}`);
    return undefined;
  }

  object(value: unknown, path: string): Json | undefined {
    if (value === undefined) return undefined;
    return isObject(value) ? value : this.issue(path, `must be an object, got ${describe(value)}`);
  }

  unknownKeys(obj: Json, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(obj)) {
      if (!allowed.includes(key)) this.issue(`${path}.${key}`, `unknown field (known: ${allowed.join(', ')})`);
    }
  }

  number(value: unknown, path: string, opts: { min?: number; max?: number; integer?: boolean; exclusiveMin?: boolean } = {}): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.issue(path, `must be a number, got ${describe(value)}`);
    if (opts.integer === true && !Number.isInteger(value)) return this.issue(path, `must be an integer, got ${value}`);
    if (opts.min !== undefined && (opts.exclusiveMin === true ? value <= opts.min : value < opts.min)) {
      return this.issue(path, `must be ${opts.exclusiveMin === true ? '>' : '>='} ${opts.min}, got ${value}`);
    }
    if (opts.max !== undefined && value > opts.max) return this.issue(path, `must be <= ${opts.max}, got ${value}`);
    return value;
  }

  string(value: unknown, path: string, pattern?: RegExp, what?: string): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.issue(path, `must be a string, got ${describe(value)}`);
    if (pattern !== undefined && !pattern.test(value)) return this.issue(path, `must be ${what ?? `like ${pattern}`}, got ${JSON.stringify(value)}`);
    return value;
  }

  boolean(value: unknown, path: string): boolean | undefined {
    if (value === undefined) return undefined;
    return typeof value === 'boolean' ? value : this.issue(path, `must be true or false, got ${describe(value)}`);
  }

  stringList(value: unknown, path: string): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) {
      return this.issue(path, `must be an array of non-empty strings, got ${describe(value)}`);
    }
    return value as string[];
  }

  array(value: unknown, path: string): unknown[] | undefined {
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value : this.issue(path, `must be an array, got ${describe(value)}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

const TOP_KEYS = [
  'port', 'grpcPort', 'host', 'adminKeyHash', 'redisUrl', 'keyPrefix', 'requestTimeoutMs', 'maxBodyBytes', 'maxPipelinedRequests', 'httpRawReader', 'grpcRawH2', 'grpcUpstreamRawH2',
  'rateLimitLeaseMs', 'rateLimitKeepWarmMs', 'metrics', 'webhooks', 'tiers', 'tenants', 'nodes', 'grpcTransport', 'nodeRawInferBelowCalls', 'routing', 'cache', 'serverName', 'llm',
] as const;
const TIER_KEYS = ['priority', 'queueTimeoutMs', 'queueShare', 'rateLimits', 'cacheTtlSeconds', 'allowedModels', 'maxRequestBytes', 'jobs', 'llm'] as const;
const RATE_KEYS = ['requestsPerSecond', 'burst', 'elementsPerSecond', 'elementsBurst'] as const;
/** Optional in every tier (0 = unlimited when a new tier omits them). */
const BYTE_RATE_KEYS = ['bytesPerSecond', 'bytesBurst'] as const;
const JOB_KEYS = ['maxPayloadBytes', 'maxStoredJobs', 'resultTtlSeconds'] as const;
/** Job limits of a tier that names none. */
export const DEFAULT_MAX_STORED_JOBS = 1000;
export const DEFAULT_JOB_RESULT_TTL_SECONDS = 86_400;

/** Parses and validates; throws one INVALID_ARG TesseraError listing every problem. */
export function loadGatewayConfig(text: string): GatewayConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw TesseraError.invalidArg(`invalid gateway config: not valid JSON: ${(error as Error).message}`);
  }
  const c = new Checker();
  const root = isObject(raw) ? raw : (c.issue('$', `must be a JSON object, got ${describe(raw)}`) ?? {});
  c.unknownKeys(root, TOP_KEYS, '$');

  const port = c.number(root.port, '$.port', { min: 0, max: 65535, integer: true }) ?? DEFAULT_PORT;
  const host = c.string(root.host, '$.host') ?? '0.0.0.0';
  const grpcPort = c.number(root.grpcPort, '$.grpcPort', { min: 0, max: 65535, integer: true }) ?? null;
  const serverName = c.string(root.serverName, '$.serverName', /^[\x20-\x7e]{1,64}$/, '1 to 64 printable ASCII characters') ?? DEFAULT_SERVER_NAME;
  const adminKeyHash = c.string(root.adminKeyHash, '$.adminKeyHash', SHA256_HEX, 'a lowercase sha256 hex digest (64 characters)') ?? null;
  const redisUrl = c.string(root.redisUrl, '$.redisUrl', /^rediss?:\/\//, 'a redis:// or rediss:// URL') ?? null;
  const keyPrefix = c.string(root.keyPrefix, '$.keyPrefix', /^[A-Za-z0-9._:-]{0,64}$/, 'letters, digits, ".", "_", ":" or "-" (no braces)') ?? DEFAULT_KEY_PREFIX;
  const requestTimeoutMs = c.number(root.requestTimeoutMs, '$.requestTimeoutMs', { min: 1, integer: true }) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBodyBytes = c.number(root.maxBodyBytes, '$.maxBodyBytes', { min: 1, integer: true }) ?? DEFAULT_MAX_BODY_BYTES;
  const maxPipelinedRequests =
    c.number(root.maxPipelinedRequests, '$.maxPipelinedRequests', { min: 1, integer: true }) ?? DEFAULT_MAX_PIPELINED_REQUESTS;
  const httpRawReader = c.boolean(root.httpRawReader, '$.httpRawReader') ?? DEFAULT_HTTP_RAW_READER;
  const grpcRawH2 = c.boolean(root.grpcRawH2, '$.grpcRawH2') ?? DEFAULT_GRPC_RAW_H2;
  // Deprecated: `true` (what every gateway now does) is still accepted; `false` asked for a client that is gone.
  if (c.boolean(root.grpcUpstreamRawH2, '$.grpcUpstreamRawH2') === false) c.issue('$.grpcUpstreamRawH2', `false is no longer supported: ${UPSTREAM_RAW_H2_RETIRED}`);
  const rateLimitLeaseMs =
    c.number(root.rateLimitLeaseMs, '$.rateLimitLeaseMs', { min: 0, max: 10_000, integer: true }) ?? DEFAULT_RATE_LIMIT_LEASE_MS;
  const rateLimitKeepWarmMs = c.number(root.rateLimitKeepWarmMs, '$.rateLimitKeepWarmMs', { min: 0, max: 3_600_000, integer: true });

  const metricsObj = c.object(root.metrics, '$.metrics') ?? {};
  c.unknownKeys(metricsObj, ['requireAdminKey'], '$.metrics');
  // Behind the admin key unless the operator says the port is private (a Prometheus network).
  const metrics = { requireAdminKey: c.boolean(metricsObj.requireAdminKey, '$.metrics.requireAdminKey') ?? true };
  const webhooks = readWebhooks(c, root.webhooks);

  const tiers = readTiers(c, root.tiers, maxBodyBytes);
  const tenants = readTenants(c, root.tenants, tiers);
  const nodes = readNodes(c, root.nodes);
  const grpcTransport = readGrpcTransport(c, root.grpcTransport);
  const nodeRawInferBelowCalls =
    c.number(root.nodeRawInferBelowCalls, '$.nodeRawInferBelowCalls', { min: 0, max: 65536, integer: true }) ?? DEFAULT_NODE_RAW_INFER_BELOW_CALLS;
  const routing = readRouting(c, root.routing);
  const cache = readCache(c, root.cache);
  const llm = readLlmConfig(c, root.llm);

  if (c.issues.length > 0) {
    const n = c.issues.length;
    throw TesseraError.invalidArg(`invalid gateway config (${n} problem${n === 1 ? '' : 's'}):\n  - ${c.issues.join('\n  - ')}`);
  }
  return deepFreeze({
    port, grpcPort, host, serverName, adminKeyHash, redisUrl, keyPrefix, requestTimeoutMs, maxBodyBytes, maxPipelinedRequests, httpRawReader, grpcRawH2, rateLimitLeaseMs, metrics,
    ...(rateLimitKeepWarmMs === undefined ? {} : { rateLimitKeepWarmMs }),
    webhooks, tiers, tenants, nodes, grpcTransport, nodeRawInferBelowCalls, routing, cache, llm,
  });
}

function readRateLimits(c: Checker, value: unknown, path: string, base: RateLimits | undefined): RateLimits | undefined {
  const obj = c.object(value, path);
  if (obj === undefined && value !== undefined) return undefined;
  const o = obj ?? {};
  c.unknownKeys(o, [...RATE_KEYS, ...BYTE_RATE_KEYS], path);
  const out: Partial<Record<(typeof RATE_KEYS)[number], number>> = {};
  let complete = true;
  for (const key of RATE_KEYS) {
    const v = c.number(o[key], `${path}.${key}`, { min: 0 }) ?? base?.[key];
    if (v === undefined) {
      if (o[key] === undefined) c.issue(`${path}.${key}`, 'is required for a new tier');
      complete = false;
    }
    out[key] = v;
  }
  const bytes: Partial<Record<(typeof BYTE_RATE_KEYS)[number], number>> = {};
  for (const key of BYTE_RATE_KEYS) bytes[key] = c.number(o[key], `${path}.${key}`, { min: 0 }) ?? base?.[key] ?? 0;
  if (!complete) return undefined;
  const limits = { ...(out as RateLimits), ...bytes } as RateLimits;
  if (limits.requestsPerSecond > 0 && limits.burst < 1) c.issue(`${path}.burst`, 'must be >= 1 when requestsPerSecond is set');
  if (limits.elementsPerSecond > 0 && limits.elementsBurst < 1) c.issue(`${path}.elementsBurst`, 'must be >= 1 when elementsPerSecond is set');
  if ((limits.bytesPerSecond ?? 0) > 0 && (limits.bytesBurst ?? 0) < 1) c.issue(`${path}.bytesBurst`, 'must be >= 1 when bytesPerSecond is set');
  return limits;
}

function readTiers(c: Checker, value: unknown, maxBodyBytes: number): Record<string, Tier> {
  const tiers: Record<string, Tier> = { ...DEFAULT_TIERS };
  const obj = c.object(value, '$.tiers');
  if (obj === undefined) return tiers;
  for (const [name, entry] of Object.entries(obj)) {
    const path = `$.tiers.${name}`;
    if (!IDENTIFIER_PATTERN.test(name)) c.issue(path, 'a tier name must be 1-64 letters, digits, ".", "_" or "-"');
    const t = c.object(entry, path);
    if (t === undefined) continue;
    c.unknownKeys(t, TIER_KEYS, path);
    const base = Object.hasOwn(DEFAULT_TIERS, name) ? DEFAULT_TIERS[name as keyof typeof DEFAULT_TIERS] : undefined;
    const need = <T>(v: T | undefined, key: string, raw: unknown): T | undefined => {
      if (v === undefined && raw === undefined) c.issue(`${path}.${key}`, 'is required for a new tier');
      return v;
    };
    const priority = need(c.number(t.priority, `${path}.priority`, { min: 1, integer: true }) ?? base?.priority, 'priority', t.priority);
    const queueTimeoutMs = need(c.number(t.queueTimeoutMs, `${path}.queueTimeoutMs`, { min: 1, integer: true }) ?? base?.queueTimeoutMs, 'queueTimeoutMs', t.queueTimeoutMs);
    const queueShare = need(c.number(t.queueShare, `${path}.queueShare`, { min: 0, max: 1, exclusiveMin: true }) ?? base?.queueShare, 'queueShare', t.queueShare);
    const rateLimits = readRateLimits(c, t.rateLimits, `${path}.rateLimits`, base?.rateLimits);
    const cacheTtlSeconds = need(c.number(t.cacheTtlSeconds, `${path}.cacheTtlSeconds`, { min: 0, integer: true }) ?? base?.cacheTtlSeconds, 'cacheTtlSeconds', t.cacheTtlSeconds);
    const allowedModels = need(c.stringList(t.allowedModels, `${path}.allowedModels`) ?? base?.allowedModels, 'allowedModels', t.allowedModels);
    const maxRequestBytes = c.number(t.maxRequestBytes, `${path}.maxRequestBytes`, { min: 1, integer: true }) ?? base?.maxRequestBytes;
    const jobs = readTierJobs(c, t.jobs, `${path}.jobs`, base?.jobs, maxBodyBytes);
    const llm = readTierLlm(c, t.llm, `${path}.llm`, base?.llm);
    if (priority !== undefined && queueTimeoutMs !== undefined && queueShare !== undefined && rateLimits !== undefined &&
        cacheTtlSeconds !== undefined && allowedModels !== undefined && jobs !== undefined) {
      tiers[name] = {
        name, priority, queueTimeoutMs, queueShare, rateLimits, cacheTtlSeconds, allowedModels: [...allowedModels],
        ...(maxRequestBytes === undefined ? {} : { maxRequestBytes }), jobs, ...(llm === undefined ? {} : { llm }),
      };
    }
  }
  return tiers;
}

function readTierJobs(c: Checker, value: unknown, path: string, base: TierJobLimits | undefined, maxBodyBytes: number): TierJobLimits | undefined {
  const obj = c.object(value, path);
  if (obj === undefined && value !== undefined) return undefined;
  const o = obj ?? {};
  c.unknownKeys(o, JOB_KEYS, path);
  return {
    maxPayloadBytes: c.number(o.maxPayloadBytes, `${path}.maxPayloadBytes`, { min: 1, integer: true }) ?? base?.maxPayloadBytes ?? maxBodyBytes,
    maxStoredJobs: c.number(o.maxStoredJobs, `${path}.maxStoredJobs`, { min: 1, integer: true }) ?? base?.maxStoredJobs ?? DEFAULT_MAX_STORED_JOBS,
    resultTtlSeconds:
      c.number(o.resultTtlSeconds, `${path}.resultTtlSeconds`, { min: 1, integer: true }) ?? base?.resultTtlSeconds ?? DEFAULT_JOB_RESULT_TTL_SECONDS,
  };
}

function readWebhooks(c: Checker, value: unknown): WebhookPolicy {
  const obj = c.object(value, '$.webhooks') ?? {};
  c.unknownKeys(obj, ['allowHttp', 'allow'], '$.webhooks');
  const allowHttp = c.boolean(obj.allowHttp, '$.webhooks.allowHttp') ?? false;
  const allow = c.stringList(obj.allow, '$.webhooks.allow') ?? [];
  allow.forEach((entry, i) => {
    const problem = allowEntryProblem(entry);
    if (problem !== undefined) c.issue(`$.webhooks.allow[${i}]`, problem);
  });
  return { allowHttp, allow: [...allow] };
}

function readTenants(c: Checker, value: unknown, tiers: Record<string, Tier>): ConfigTenant[] {
  const list = c.array(value, '$.tenants') ?? [];
  const tenants: ConfigTenant[] = [];
  const tenantIds = new Set<string>();
  const keyIds = new Set<string>();
  const hashes = new Set<string>();
  list.forEach((entry, i) => {
    const path = `$.tenants[${i}]`;
    const t = c.object(entry, path);
    if (t === undefined) return;
    c.unknownKeys(t, ['id', 'name', 'tier', 'allowedModels', 'keys'], path);
    const id = c.string(t.id, `${path}.id`, IDENTIFIER_PATTERN, '1-64 letters, digits, ".", "_" or "-"');
    if (t.id === undefined) c.issue(`${path}.id`, 'is required');
    if (id !== undefined && tenantIds.has(id)) c.issue(`${path}.id`, `duplicate tenant id '${id}'`);
    if (id !== undefined) tenantIds.add(id);
    const name = c.string(t.name, `${path}.name`) ?? id ?? '';
    const tier = c.string(t.tier, `${path}.tier`);
    if (t.tier === undefined) c.issue(`${path}.tier`, 'is required');
    if (tier !== undefined && !Object.hasOwn(tiers, tier)) {
      c.issue(`${path}.tier`, `unknown tier '${tier}' (known: ${Object.keys(tiers).join(', ')})`);
    }
    const allowedModels = c.stringList(t.allowedModels, `${path}.allowedModels`);
    const keys: ConfigApiKey[] = [];
    (c.array(t.keys, `${path}.keys`) ?? []).forEach((k, j) => {
      const kp = `${path}.keys[${j}]`;
      const ko = c.object(k, kp);
      if (ko === undefined) return;
      c.unknownKeys(ko, ['id', 'hash'], kp);
      const keyId = c.string(ko.id, `${kp}.id`, IDENTIFIER_PATTERN, '1-64 letters, digits, ".", "_" or "-"');
      if (ko.id === undefined) c.issue(`${kp}.id`, 'is required');
      const hash = c.string(ko.hash, `${kp}.hash`, SHA256_HEX, 'a lowercase sha256 hex digest of the key (never the key itself)');
      if (ko.hash === undefined) c.issue(`${kp}.hash`, 'is required');
      if (keyId !== undefined && keyIds.has(keyId)) c.issue(`${kp}.id`, `duplicate key id '${keyId}'`);
      if (hash !== undefined && hashes.has(hash)) c.issue(`${kp}.hash`, 'the same key hash appears twice');
      if (keyId !== undefined) keyIds.add(keyId);
      if (hash !== undefined) hashes.add(hash);
      if (keyId !== undefined && hash !== undefined) keys.push({ id: keyId, hash });
    });
    if (id !== undefined && tier !== undefined) {
      tenants.push({ id, name, tier, keys, ...(allowedModels === undefined ? {} : { allowedModels }) });
    }
  });
  return tenants;
}

function readNodes(c: Checker, value: unknown): StaticNodeConfig[] {
  const nodes: StaticNodeConfig[] = [];
  const ids = new Set<string>();
  (c.array(value, '$.nodes') ?? []).forEach((entry, i) => {
    const path = `$.nodes[${i}]`;
    const n = c.object(entry, path);
    if (n === undefined) return;
    c.unknownKeys(n, ['id', 'grpc', 'http', 'llmH2'], path);
    const grpc = c.string(n.grpc, `${path}.grpc`, HOST_PORT, '"host:port"') ?? null;
    const http = c.string(n.http, `${path}.http`, HOST_PORT, '"host:port"') ?? null;
    const llmH2 = c.string(n.llmH2, `${path}.llmH2`, HOST_PORT, '"host:port"');
    if (n.grpc === undefined && n.http === undefined) c.issue(path, 'needs "grpc" or "http" (host:port)');
    const id = c.string(n.id, `${path}.id`, /^[A-Za-z0-9._:-]{1,128}$/, 'a node id') ?? grpc ?? http ?? `node-${i}`;
    if (ids.has(id)) c.issue(`${path}.id`, `duplicate node id '${id}'`);
    ids.add(id);
    nodes.push({ id, grpc, http, ...(llmH2 === undefined ? {} : { llmH2 }) });
  });
  return nodes;
}

function readGrpcTransport(c: Checker, value: unknown): GrpcTransportName {
  const name = c.string(value, '$.grpcTransport');
  if (name === undefined) return 'http2';
  if ((GRPC_TRANSPORTS as readonly string[]).includes(name)) return name as GrpcTransportName;
  c.issue('$.grpcTransport', `must be one of ${GRPC_TRANSPORTS.join(', ')}, got ${JSON.stringify(name)}`);
  return 'http2';
}

function readRouting(c: Checker, value: unknown): RoutingConfig {
  const obj = c.object(value, '$.routing') ?? {};
  c.unknownKeys(obj, ['policy', 'models'], '$.routing');
  const policy = c.string(obj.policy, '$.routing.policy');
  if (policy !== undefined && !(PICKER_NAMES as readonly string[]).includes(policy)) {
    c.issue('$.routing.policy', `must be one of ${PICKER_NAMES.join(', ')}, got ${JSON.stringify(policy)}`);
  }
  const models: Record<string, ModelRouting> = {};
  for (const [model, routing] of Object.entries(c.object(obj.models, '$.routing.models') ?? {})) {
    const path = `$.routing.models.${model}`;
    const r = c.object(routing, path);
    if (r === undefined) continue;
    c.unknownKeys(r, ['splits', 'stickyHeader'], path);
    c.array(r.splits, `${path}.splits`);
    try {
      // The routing module owns the meaning of a split; it reports the first problem per model.
      normalizeRoutingConfig({ models: { [model]: r as ModelRouting } });
      models[model] = r as ModelRouting;
    } catch (error) {
      c.issue(path, (error as Error).message.replace(/^invalid routing config: /, ''));
    }
  }
  return normalizeRoutingConfig({ ...(policy !== undefined && (PICKER_NAMES as readonly string[]).includes(policy) ? { policy: policy as PickerName } : {}), models });
}

function readCache(c: Checker, value: unknown): CacheSettings {
  const obj = c.object(value, '$.cache') ?? {};
  c.unknownKeys(obj, ['enabled', 'maxEntryBytes', 'localMaxBytes', 'localMaxAgeSeconds', 'commandTimeoutMs', 'models'], '$.cache');
  const enabled = c.boolean(obj.enabled, '$.cache.enabled') ?? true;
  const maxEntryBytes = c.number(obj.maxEntryBytes, '$.cache.maxEntryBytes', { min: 1, integer: true }) ?? DEFAULT_MAX_CACHE_ENTRY_BYTES;
  const localMaxBytes = c.number(obj.localMaxBytes, '$.cache.localMaxBytes', { min: 0, integer: true }) ?? DEFAULT_CACHE_LOCAL_MAX_BYTES;
  const localMaxAgeSeconds =
    c.number(obj.localMaxAgeSeconds, '$.cache.localMaxAgeSeconds', { min: 0, exclusiveMin: true }) ?? DEFAULT_CACHE_LOCAL_MAX_AGE_SECONDS;
  // Absent: the Redis cache's own default (adapters/cache/redis-response-cache.ts).
  const commandTimeoutMs = c.number(obj.commandTimeoutMs, '$.cache.commandTimeoutMs', { min: 1, max: 60_000, integer: true });
  const models: Record<string, ModelCacheSettings> = {};
  const m = c.object(obj.models, '$.cache.models') ?? {};
  for (const [model, settings] of Object.entries(m)) {
    const path = `$.cache.models.${model}`;
    const s = c.object(settings, path);
    if (s === undefined) continue;
    c.unknownKeys(s, ['enabled', 'shared'], path);
    models[model] = {
      enabled: c.boolean(s.enabled, `${path}.enabled`) ?? true,
      shared: c.boolean(s.shared, `${path}.shared`) ?? false,
    };
  }
  return { enabled, maxEntryBytes, localMaxBytes, localMaxAgeSeconds, ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }), models };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
