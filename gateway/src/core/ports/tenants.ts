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
