/**
 * Async jobs (POST /v1/jobs, `Prefer: respond-async`): the durable queue behind them. BullMQ on Node
 * (adapters/bullmq); none on Workers yet, where job routes answer 503.
 *
 * The core makes job ids (random, or derived from the tenant and its Idempotency-Key) and checks
 * tenants; the queue keeps specs, states and results, and never shows one tenant's job to another:
 * every read and cancel names the tenant, and a job of another tenant is simply not found.
 */
import type { Tier } from './tenants.js';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** What a job runs: one KServe v2 inference, as the client sent it, with its tenant's tier. */
export interface JobSpec {
  readonly tenantId: string;
  /**
   * The tenant's scope when the job was accepted (id + generation, core/auth/tenant-scope.ts); the
   * job belongs to that scope only, so a deleted and re-created tenant never sees it. Absent on jobs
   * accepted before scopes existed: the scope is then `tenantId`.
   */
  readonly tenantScope?: string;
  /** The tier when the job was accepted: priority (BullMQ priority), queue share and limits. */
  readonly tier: Tier;
  readonly model: string;
  /** Undefined: the model's traffic split or latest version, decided when the job runs. */
  readonly version?: string;
  /** The infer body (JSON, or JSON + binary tensors), base64. */
  readonly body: string;
  /** The request's `Inference-Header-Content-Length`, or null. */
  readonly headerLength: string | null;
  /** Where to POST the signed outcome; absent: no webhook. */
  readonly webhookUrl?: string;
  /** sha256 (hex) of model, version and body: an Idempotency-Key reused with another request is refused. */
  readonly fingerprint: string;
  /** ms since the epoch. */
  readonly submittedAt: number;
}

/** A finished job's answer: the infer response exactly as the synchronous route would send it. */
export interface JobResult {
  /** base64 */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly modelVersion: string;
}

export interface JobRecord {
  readonly id: string;
  readonly state: JobState;
  readonly spec: JobSpec;
  /** ms since the epoch, when known. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** Runs started so far (a retry or a run resumed after a crashed worker counts again). */
  readonly attempts: number;
  /** Why it failed: "CODE: message". */
  readonly error?: string;
  readonly result?: JobResult;
}

export type CancelOutcome =
  | { readonly outcome: 'cancelled'; readonly record: JobRecord }
  /** Running or finished: nothing to cancel. */
  | { readonly outcome: 'too_late'; readonly record: JobRecord };

export interface JobQueue {
  /**
   * Enqueues under `id` unless a job with that id exists (an Idempotency-Key replay): then that job
   * is returned with `created: false` and nothing is enqueued. Throws UNAVAILABLE when the store is away.
   */
  submit(id: string, spec: JobSpec): Promise<{ readonly record: JobRecord; readonly created: boolean }>;
  /** The job of the tenant scope (core/auth/tenant-scope.ts), or undefined (unknown, expired, or another scope's). */
  get(tenantScope: string, id: string): Promise<JobRecord | undefined>;
  /** Cancels a job that has not started; undefined when `get` would be. */
  cancel(tenantScope: string, id: string): Promise<CancelOutcome | undefined>;
}

/** What jobs tell metrics; the adapter implements it with prom-client. */
export interface JobObserver {
  /** A job entered the queue (`spilled`: from an infer request refused at admission). */
  submitted(tier: string, model: string, spilled: boolean): void;
  /** A job left the queue for a worker after `waitSeconds`. */
  started(tier: string, model: string, waitSeconds: number): void;
  /** A job reached a final state; `runSeconds` for jobs that ran. */
  finished(state: 'succeeded' | 'failed' | 'cancelled', tier: string, model: string, runSeconds?: number): void;
}
