/**
 * The JobQueue port on BullMQ: one queue (`infer`) of inference jobs with the tier as BullMQ priority
 * (1 first), retries with exponential backoff for errors that may pass, and finished jobs kept for
 * `resultTtlSeconds` (BullMQ removes them by age when later jobs finish, so "at least" the TTL).
 *
 * - Idempotency: the core derives the job id from tenant and key; BullMQ's add does nothing when the
 *   id exists, atomically. A nonce in the data tells whether this call created the job.
 * - Cancel: only a job that no worker has locked can be removed (BullMQ refuses to remove a locked,
 *   i.e. running, job: that is our "too late", with no race). The record is kept as a tombstone for
 *   the TTL, so GET answers "cancelled" and an Idempotency-Key replay returns the cancelled job.
 * - Store errors become UNAVAILABLE (503), never 500.
 * - Quotas (the tier's `jobs`): a tenant scope's stored jobs are listed in a sorted set
 *   (shared/src/fleet/keys.ts `jobKeys().stored`) with the time each may be dropped (submission + the tier's result TTL).
 *   A submission first drops the entries past that time (and the BullMQ jobs and tombstones behind
 *   them, whatever BullMQ's own age-based cleanup has not removed yet), then is refused (429) when
 *   the tenant still holds `maxStoredJobs`. With each body and result at most `maxPayloadBytes`,
 *   what a tenant can keep in Redis is bounded by its tier, however much it sends.
 */
import { Job, Queue, type JobsOptions } from 'bullmq';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { CancelOutcome, JobQueue, JobRecord, JobResult, JobSpec, JobState } from '../../core/ports/index.js';
import { INFER_QUEUE, jobKeys } from '../../../../shared/src/fleet/index.js';
import { producerConnection } from './redis-connections.js';

/** What a BullMQ job of ours holds. */
export interface InferJobData {
  readonly spec: JobSpec;
  /** Random per submit call: tells a created job from an existing one with the same id. */
  readonly nonce: string;
}

export interface BullmqJobQueueOptions {
  readonly redisUrl: string;
  /** Default "tessera:" (the gateway's keyPrefix). */
  readonly keyPrefix?: string;
  /** How long finished (and cancelled) jobs and their results are kept; default 86400 s (1 day). */
  readonly resultTtlSeconds?: number;
  /** Runs per job for errors that may pass (UNAVAILABLE, DEADLINE_EXCEEDED…); default 3. */
  readonly attempts?: number;
  /** First retry delay, doubled each time; default 1000 ms. */
  readonly backoffMs?: number;
}

export interface BullmqJobQueue extends JobQueue {
  /** Jobs per BullMQ state, for the `jobs` gauge. */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export const DEFAULT_RESULT_TTL_SECONDS = 86_400;
export const DEFAULT_JOB_ATTEMPTS = 3;
export const DEFAULT_JOB_BACKOFF_MS = 1000;
/** BullMQ's largest priority. */
const MAX_PRIORITY = 2 ** 21;

/**
 * Reserves a stored-job slot: drops entries past their time (returned, for cleanup), then adds the job
 * unless the scope already holds ARGV[4] jobs. KEYS[1] the scope's set; ARGV: now, job id, drop-at, max.
 * Returns {admitted (1/0), held after the call, dropped ids...}. A job id already in the set (a replay)
 * is admitted without taking a second slot.
 */
const RESERVE_SLOT = `
local dropped = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #dropped > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1]) end
local held = redis.call('ZCARD', KEYS[1])
local admitted = 0
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  admitted = 1
elseif held < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  held = held + 1
  admitted = 1
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], last[2]) end
local reply = {admitted, held}
for _, id in ipairs(dropped) do reply[#reply + 1] = id end
return reply
`;

/** Stored jobs per tenant scope when the tier names no limit. */
const FALLBACK_MAX_STORED_JOBS = 1000;

export async function createBullmqJobQueue(options: BullmqJobQueueOptions): Promise<BullmqJobQueue> {
  const keys = jobKeys(options.keyPrefix);
  const ttl = options.resultTtlSeconds ?? DEFAULT_RESULT_TTL_SECONDS;
  const attempts = options.attempts ?? DEFAULT_JOB_ATTEMPTS;
  const backoffMs = options.backoffMs ?? DEFAULT_JOB_BACKOFF_MS;
  for (const [name, value] of [['resultTtlSeconds', ttl], ['attempts', attempts], ['backoffMs', backoffMs]] as const) {
    if (!Number.isSafeInteger(value) || value < (name === 'backoffMs' ? 0 : 1)) throw TesseraError.invalidArg(`jobs ${name} must be a positive integer, got ${value}`);
  }
  // One fail-fast client for the queue and the tombstones.
  const redis = await producerConnection(options.redisUrl);
  const queue = new Queue<InferJobData, JobResult>(INFER_QUEUE, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', () => {}); // connection errors surface as failed commands (503); BullMQ also emits them here
  await store(() => queue.waitUntilReady());

  async function tombstone(scope: string, id: string): Promise<JobRecord | undefined> {
    const raw = await store(() => redis.get(keys.tombstone(id)));
    if (raw === null) return undefined;
    const record = JSON.parse(raw) as JobRecord;
    return specScope(record.spec) === scope ? record : undefined;
  }

  async function load(scope: string, id: string): Promise<{ job: Job<InferJobData, JobResult>; record: JobRecord } | undefined> {
    // State first, then the job: a job read after its state is at least as far along, so a
    // "succeeded" record always has its result (the other order could pair "completed" with the
    // data of a job still running).
    const state = await store(() => queue.getJobState(id));
    if (state === 'unknown') return undefined;
    const job = (await store(() => Job.fromId<InferJobData, JobResult>(queue, id))) ?? undefined;
    if (job === undefined || job.data?.spec === undefined || specScope(job.data.spec) !== scope) return undefined;
    return { job, record: recordOf(job, toJobState(state)) };
  }

  /** Takes a stored-job slot of the spec's scope, or throws RESOURCE_EXHAUSTED (429). */
  async function reserveSlot(id: string, spec: JobSpec, jobTtl: number): Promise<void> {
    const max = spec.tier.jobs?.maxStoredJobs ?? FALLBACK_MAX_STORED_JOBS;
    const now = Date.now();
    const reply = (await store(() =>
      redis.eval(RESERVE_SLOT, 1, keys.stored(specScope(spec)), String(now), id, String(now + jobTtl * 1000), String(max)),
    )) as [number, number, ...string[]];
    const [admitted, , ...dropped] = reply;
    // What BullMQ's own age-based cleanup has not removed yet goes now: the set is the bound.
    for (const old of dropped) {
      await queue.remove(old).catch(() => 0);
      await redis.del(keys.tombstone(old)).catch(() => 0);
    }
    if (admitted !== 1) {
      throw new TesseraError(
        'RESOURCE_EXHAUSTED',
        `tenant '${spec.tenantId}' already has ${max} stored jobs, the most tier '${spec.tier.name}' keeps; fetch or cancel some, or wait for their results to expire (after ${jobTtl} s)`,
        { retryAfterMs: Math.min(jobTtl * 1000, 60_000) },
      );
    }
  }

  return {
    async submit(id, spec) {
      const replayed = await tombstone(specScope(spec), id);
      if (replayed !== undefined) return { record: replayed, created: false };
      const jobTtl = spec.tier.jobs?.resultTtlSeconds ?? ttl;
      await reserveSlot(id, spec, jobTtl);
      const nonce = crypto.randomUUID();
      const opts: JobsOptions = {
        jobId: id,
        priority: Math.min(MAX_PRIORITY, Math.max(1, Math.floor(spec.tier.priority))),
        attempts,
        backoff: { type: 'exponential', delay: backoffMs },
        removeOnComplete: { age: jobTtl },
        removeOnFail: { age: jobTtl },
      };
      await store(() => queue.add('infer', { spec, nonce }, opts));
      const found = await load(specScope(spec), id);
      if (found === undefined) {
        // Same id, other tenant: impossible with ids derived from the tenant, unless a hash collides.
        throw TesseraError.internal(`job '${id}' could not be read back after it was queued`);
      }
      return { record: found.record, created: found.job.data.nonce === nonce };
    },

    async get(tenantId, id) {
      return (await load(tenantId, id))?.record ?? (await tombstone(tenantId, id));
    },

    async cancel(tenantId, id): Promise<CancelOutcome | undefined> {
      const found = await load(tenantId, id);
      if (found === undefined) {
        const gone = await tombstone(tenantId, id);
        return gone === undefined ? undefined : { outcome: 'too_late', record: gone };
      }
      if (found.record.state !== 'queued') return { outcome: 'too_late', record: found.record };
      const cancelled: JobRecord = { ...found.record, state: 'cancelled', finishedAt: Date.now() };
      // The tombstone first: GET reads the live job before it, so it shows only once the job is gone.
      await store(() => redis.set(keys.tombstone(id), JSON.stringify(cancelled), 'EX', found.record.spec.tier.jobs?.resultTtlSeconds ?? ttl));
      try {
        await found.job.remove();
      } catch (error) {
        await redis.del(keys.tombstone(id)).catch(() => {});
        const now = await load(tenantId, id);
        if (now !== undefined && now.record.state !== 'queued') return { outcome: 'too_late', record: now.record };
        throw storeError(error);
      }
      return { outcome: 'cancelled', record: cancelled };
    },

    async counts() {
      return store(() => queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'));
    },

    async close() {
      await closeQuietly(queue);
      redis.disconnect();
    },
  };
}

/** The tenant scope a job belongs to (JobSpec.tenantScope). */
export function specScope(spec: JobSpec): string {
  return spec.tenantScope ?? spec.tenantId;
}

export function toJobState(state: string): JobState {
  switch (state) {
    case 'active':
      return 'running';
    case 'completed':
      return 'succeeded';
    case 'failed':
      return 'failed';
    default:
      return 'queued'; // waiting, prioritized, delayed (a retry's backoff), waiting-children
  }
}

/**
 * The record of `job` in `state`. The state is read before the job (see load()), so a worker may have
 * taken the job in between, and a retry waiting for its backoff keeps its last attempt's processedOn:
 * a queued record shows no start time either way, so that no answer says "queued" and "started" at once.
 */
export function recordOf(job: Job<InferJobData, JobResult>, state: JobState): JobRecord {
  return {
    id: job.id ?? '',
    state,
    spec: job.data.spec,
    ...(job.processedOn && state !== 'queued' ? { startedAt: job.processedOn } : {}),
    ...(job.finishedOn && (state === 'succeeded' || state === 'failed') ? { finishedAt: job.finishedOn } : {}),
    attempts: job.attemptsStarted ?? job.attemptsMade,
    ...(state === 'failed' && job.failedReason ? { error: job.failedReason } : {}),
    ...(state === 'succeeded' && job.returnvalue ? { result: job.returnvalue } : {}),
  };
}

function storeError(error: unknown): TesseraError {
  if (error instanceof TesseraError) return error;
  return new TesseraError('UNAVAILABLE', `the job store (Redis) is unavailable: ${(error as Error)?.message ?? String(error)}`, { retryAfterMs: 1000 });
}

async function store<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storeError(error);
  }
}

/**
 * Closes a BullMQ queue or worker without letting Redis fail or stall shutdown: errors are dropped, and
 * after `timeoutMs` (default 10000) we stop waiting (BullMQ's close can wait forever on a client that
 * is reconnecting).
 */
export async function closeQuietly(closable: { close(): Promise<void> }, timeoutMs = 10_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    closable.close().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref?.();
    }),
  ]);
  clearTimeout(timer);
}
