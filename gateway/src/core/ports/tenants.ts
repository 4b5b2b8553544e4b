/**
 * Tenants, API keys and tiers. Keys are stored only as hashes (SHA-256 of the key, hex); the plaintext
 * exists once, in the answer to the admin call that created it.
 */
export interface RateLimits {
  /** Sustained requests per second; 0 means unlimited. */
  readonly requestsPerSecond: number;
  /** Bucket size for requests (burst). */
  readonly burst: number;
  /** Sustained tensor elements per second across all inputs; 0 means unlimited. */
  readonly elementsPerSecond: number;
  /** Bucket size for elements. */
  readonly elementsBurst: number;
  /** Sustained request-body bytes per second (infer and job submissions); 0 or absent means unlimited. */
  readonly bytesPerSecond?: number;
  /** Bucket size for bytes. */
  readonly bytesBurst?: number;
}

/** What a tier may keep in the job store (async jobs). */
export interface TierJobLimits {
  /** Largest job body (the infer request) and largest job result, in bytes. */
  readonly maxPayloadBytes: number;
  /** Most jobs (queued, running or finished, until their result TTL) one tenant may have stored. */
  readonly maxStoredJobs: number;
  /** How long a job (its result included) is kept after submission, in seconds. */
  readonly resultTtlSeconds: number;
}

/** A tier's LLM limits (core/llm): tokens per minute, prompt and completion tokens together. */
export interface TierLlmLimits {
  /** Sustained tokens per minute; 0 means unlimited. */
  readonly tokensPerMinute: number;
  /** Bucket size in tokens (the most one burst may spend); default tokensPerMinute. */
  readonly tokensBurst: number;
  /** Whether deterministic completions (temperature 0) are cached for this tier (exact match, per tenant). */
  readonly cacheCompletions: boolean;
}

export interface Tier {
  readonly name: string;
  /** Triton-style priority: 1 is the highest; larger numbers are served later. */
  readonly priority: number;
  /** Longest time a request may wait in the gateway's admission queue, in ms. */
  readonly queueTimeoutMs: number;
  /** Largest fraction (0..1] of a model's admission queue this tier may occupy. */
  readonly queueShare: number;
  readonly rateLimits: RateLimits;
  /** Response-cache TTL in seconds for this tier's entries; 0 disables caching for the tier. */
  readonly cacheTtlSeconds: number;
  /** Model names this tier may use; ['*'] means all. */
  readonly allowedModels: readonly string[];
  /** Largest request body (infer or job submission) in bytes: larger ones get 413. Absent: only maxBodyBytes. */
  readonly maxRequestBytes?: number;
  /** Job store limits; absent: the gateway's job defaults (adapters/bullmq). */
  readonly jobs?: TierJobLimits;
  /** LLM token limits and completion caching; absent: no token limit, no completion cache. */
  readonly llm?: TierLlmLimits;
}

export interface Tenant {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  /** Narrows the tier's allowed models when present. */
  readonly allowedModels?: readonly string[];
  /** Secret for signing webhooks (async jobs); never returned by the API after creation. */
  readonly webhookSecret?: string;
  readonly disabled?: boolean;
  /**
   * Random, set when the tenant is created (admin API or config seeding). Every per-tenant key the
   * gateway writes (cache entries, jobs, idempotency keys, sequence bindings) is scoped by id AND
   * generation (core/auth/tenant-scope.ts), so a tenant deleted and re-created under the same id
   * inherits nothing. Absent on tenants stored before generations existed: their scope is the id.
   */
  readonly generation?: string;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly tenantId: string;
  /** sha256(key) in hex. */
  readonly hash: string;
  readonly createdAt: number;
  readonly revoked: boolean;
}

export interface TenantStore {
  /** The tenant owning a non-revoked key with this hash, or undefined. */
  findByKeyHash(hash: string): Promise<{ readonly tenant: Tenant; readonly key: ApiKeyRecord } | undefined>;
  getTenant(id: string): Promise<Tenant | undefined>;
  listTenants(): Promise<readonly Tenant[]>;
  putTenant(tenant: Tenant): Promise<void>;
  deleteTenant(id: string): Promise<void>;
  putKey(record: ApiKeyRecord): Promise<void>;
  revokeKey(keyId: string): Promise<boolean>;
  listKeys(tenantId: string): Promise<readonly ApiKeyRecord[]>;
}
