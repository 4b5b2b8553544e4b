/**
 * The few Cloudflare Workers runtime shapes the edge adapters use, declared structurally.
 *
 * Why not `@cloudflare/workers-types`: its globals (Request, Response, fetch, caches...) clash with
 * the Node types the rest of the repository type-checks against (one tsconfig, `types: ["node"]`).
 * These interfaces are the exact subset we call; the real workerd objects satisfy them.
 */

/** Workers KV (a namespace binding), the calls used here. */
export interface KvNamespace {
  get(key: string, type: 'text'): Promise<string | null>;
  get(key: string, type: 'arrayBuffer'): Promise<ArrayBuffer | null>;
  put(key: string, value: string | ArrayBuffer | Uint8Array, options?: { expirationTtl?: number; metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<{
    keys: { name: string }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}

/** A Durable Object stub: we talk to our objects over `fetch` (plain HTTP, no RPC types needed). */
export interface DurableObjectStubLike {
  fetch(input: string | Request, init?: RequestInit): Promise<Response>;
}

export interface DurableObjectIdLike {
  toString(): string;
}

export interface DurableObjectNamespaceLike {
  idFromName(name: string): DurableObjectIdLike;
  get(id: DurableObjectIdLike): DurableObjectStubLike;
}

/** What a Durable Object class receives as its first constructor argument (the parts we use). */
export interface DurableObjectStateLike {
  /** Runs `callback` with no other event delivered to the object until it settles (init). */
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  /** The object's durable storage (values are structured-cloned). */
  readonly storage: {
    get<T>(key: string): Promise<T | undefined>;
    put<T>(key: string, value: T): Promise<void>;
    delete(key: string): Promise<boolean>;
    list<T>(options?: { prefix?: string }): Promise<Map<string, T>>;
  };
}

export interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException?(): void;
}

/**
 * The Worker's environment (wrangler.toml bindings, vars and secrets). Every var is optional;
 * defaults are given in `edge-config.ts`.
 */
export interface EdgeEnv {
  /** KV: tenants, API-key hashes (binding TENANTS). */
  readonly TENANTS: KvNamespace;
  /** KV: the response cache (binding CACHE). Absent → every infer is a cache BYPASS. */
  readonly CACHE?: KvNamespace;
  /** Durable Objects: one token bucket per tenant. */
  readonly RATE_LIMITER: DurableObjectNamespaceLike;
  /** Durable Objects: one priority admission queue per model, global for the account. */
  readonly ADMISSION: DurableObjectNamespaceLike;
  /** Durable Objects: the fleet (one object named "fleet"). */
  readonly FLEET: DurableObjectNamespaceLike;
  /** The gateway config file's JSON text (same schema as on Node); default: every default. */
  readonly GATEWAY_CONFIG?: string;
  /** Admin key in plaintext (a secret); overrides the config's adminKeyHash. */
  readonly TESSERA_ADMIN_KEY?: string;
  /** Token nodes present to POST load reports (a secret). Unset → reports are refused (403). */
  readonly TESSERA_FLEET_TOKEN?: string;
  /** Scheme used to reach a node's reported httpAddress: "http" (default) or "https". */
  readonly NODE_URL_SCHEME?: string;
  /** Period in ms at which isolates and admission objects re-read the fleet; default "1000". */
  readonly FLEET_REFRESH_MS?: string;
  /** Two-tier mode: comma-separated base URLs of Node gateways; unset/empty → direct mode (default). */
  readonly UPSTREAM_GATEWAYS?: string;
  /** Two-tier mode: key for metadata/config calls to the Node gateways (a secret); default none. */
  readonly UPSTREAM_API_KEY?: string;
}
