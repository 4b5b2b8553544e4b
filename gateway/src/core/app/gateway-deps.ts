/**
 * What `createGatewayApp` needs: ports only (docs/architecture.md), plus the frozen config. The
 * dispatcher and the cache layer are described structurally here (the shapes this app calls), so the
 * app depends on what it uses, not on how admission, routing or the cache are built.
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import type { Tracer } from '../../../../shared/src/tracing/index.js';
import type { GatewayConfig } from '../../config/index.js';
import type { CacheRunResult, ProducedResponse } from '../cache/index.js';
import type { CancelSignal, Cancellation, HeaderReader } from '../http/index.js';
import type { TenantStats } from './tenant-stats.js';
import type { HostResolver } from '../jobs/webhook-policy.js';
import type { LlmDeps } from '../llm/llm-deps.js';
import type {
  DispatchContext,
  GatewayMetrics,
  JobObserver,
  JobQueue,
  MetadataContext,
  RateLimiter,
  TenantStore,
  Tier,
  UpstreamInferResult,
} from '../ports/index.js';

// Re-exported for the app's callers; declared once in the ports.
export type { DispatchContext, MetadataContext } from '../ports/index.js';

export interface GatewayDispatcher {
  dispatch(request: InferRequest, ctx: DispatchContext): Promise<UpstreamInferResult>;
  modelConfig(model: string, version: string | undefined, ctx: MetadataContext): Promise<unknown>;
  modelMetadata(model: string, version: string | undefined, ctx: MetadataContext): Promise<unknown>;
  modelReady(model: string, version?: string): boolean;
  /** Models the fleet serves, with each version's readiness, for the repository index; default none. */
  models?(): readonly { readonly name: string; readonly versions: readonly { readonly version: string; readonly ready: boolean }[] }[];
}

/** What the app's `produce` gives the cache: the layer's ProducedResponse and the version that answered. */
export interface AnsweredResponse extends ProducedResponse {
  /** The version that answered ('' when unknown). */
  readonly modelVersion: string;
}

/** One inference through the cache: the app describes the request, the cache decides HIT/MISS/BYPASS. */
export interface InferCacheRequest {
  readonly tenantId: string;
  /** The tenant's scope (id + generation, core/auth/tenant-scope.ts): the cache namespace; default tenantId. */
  readonly tenantScope?: string;
  readonly tier: Tier;
  readonly request: InferRequest;
  readonly binaryOutputDefault: boolean;
  /** The client's headers (Cache-Control, a sticky-version header). */
  readonly headers: HeaderReader;
  /** The client's disconnect; its signal is made only where it is handed on (never for a hit). */
  readonly cancel: Cancellation;
  /**
   * Runs the request upstream (pinned to the resolved version) and encodes the answer without its id.
   * `signal` is the one to cancel the upstream call with (shared work aborts only when all waiters left).
   */
  readonly produce: (request: InferRequest, signal: CancelSignal) => Promise<AnsweredResponse>;
}

export interface GatewayInferCache {
  run(input: InferCacheRequest): Promise<CacheRunResult>;
}

export interface GatewayAppDeps {
  readonly config: GatewayConfig;
  readonly tenants: TenantStore;
  readonly rateLimiter: RateLimiter;
  readonly dispatcher: GatewayDispatcher;
  /** Absent → every inference is a BYPASS. */
  readonly cache?: GatewayInferCache;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** /v2/health/ready: true when the gateway can route (default: always). */
  readonly isReady?: () => boolean;
  /** Clock for deadlines and latency; default Date.now. */
  readonly now?: () => number;
  /** Version of the gateway for server metadata; default "0.1.0". */
  readonly version?: string;
  /** Spans of every request (gateway.request, auth, rate_limit, cache...); default noopTracer (off). */
  readonly tracer?: Tracer;
  /** Async jobs (/v1/jobs, `Prefer: respond-async`); absent (no Redis) → job routes answer 503. */
  readonly jobs?: JobQueue;
  /** Job metrics (submitted, cancelled); default none. */
  readonly jobObserver?: JobObserver;
  /** Per-tenant model statistics (/v2/models/stats); default a fresh in-process one. */
  readonly stats?: TenantStats;
  /**
   * Resolves a webhook host to its addresses, so a job's webhook is refused at submission when it
   * points at loopback, private or link-local addresses (core/jobs/webhook-policy.ts). Default none:
   * only IP literals are judged at submission, names at delivery.
   */
  readonly resolveHost?: HostResolver;
  /** The LLM routes (/v1 OpenAI API, generate); absent: not served. */
  readonly llm?: LlmDeps;
}
