/**
 * Job workers (in the gateway process with `--jobs-worker`, or in `tessera-jobs`): take inference jobs
 * from the `infer` queue, highest tier first, and run them through the dispatcher (core runInferJob),
 * so a job is admitted, routed and protected by breakers exactly as a synchronous request; then queue
 * the webhook, if any, before the job is marked finished (a crash in between repeats the run, never
 * loses the webhook; deliveries are deduplicated per job).
 *
 * Nothing accepted is lost: a running job holds a lock that the worker renews; when a worker dies the
 * lock expires (`lockDurationMs`) and any worker's stalled check (every `stalledIntervalMs`) puts the
 * job back in the queue. A job that stalls more than `maxStalledCount` times fails ("job stalled more
 * than allowable limit"). Errors that may pass (UNAVAILABLE, DEADLINE_EXCEEDED…) are retried with
 * backoff up to the queue's `attempts`; others fail at once, with the reason as "CODE: message".
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { JobRunError, jobView, runInferJob, type JobRunnerDeps } from '../../core/jobs/index.js';
import type { JobObserver, JobRecord, JobResult } from '../../core/ports/index.js';
import { closeQuietly, type InferJobData } from './bullmq-job-queue.js';
import { INFER_QUEUE, jobKeys } from '../../../../shared/src/fleet/index.js';
import { bullConnection } from './redis-connections.js';
import { createWebhookSender, createWebhookWorker, type WebhookOptions } from './webhook-delivery.js';

export interface JobWorkerSettings {
  /** Jobs run at once by this process; default 4. */
  readonly concurrency?: number;
  /** Run timeout of one attempt; default 300000 ms (core DEFAULT_JOB_RUN_TIMEOUT_MS). */
  readonly runTimeoutMs?: number;
  /** Lock of a running job, renewed at half of it; a dead worker's jobs resume after it; default 30000 ms. */
  readonly lockDurationMs?: number;
  /** How often stalled jobs are looked for; default 30000 ms. */
  readonly stalledIntervalMs?: number;
  /** Stalls a job survives before it fails; default 1. */
  readonly maxStalledCount?: number;
  readonly webhooks?: WebhookOptions;
}

export interface JobWorkersOptions extends JobWorkerSettings {
  readonly redisUrl: string;
  /** Default "tessera:". */
  readonly keyPrefix?: string;
  readonly runner: Omit<JobRunnerDeps, 'runTimeoutMs'>;
  readonly observer?: JobObserver;
  readonly logger: Logger;
}

export interface JobWorkers {
  /** Resolves when both workers are connected and taking jobs. */
  ready(): Promise<void>;
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}

export async function startJobWorkers(options: JobWorkersOptions): Promise<JobWorkers> {
  const { logger, observer } = options;
  const now = options.runner.now ?? Date.now;
  const webhooks = await createWebhookSender(options.redisUrl, options.keyPrefix, options.webhooks);
  const runner: JobRunnerDeps = { ...options.runner, ...(options.runTimeoutMs === undefined ? {} : { runTimeoutMs: options.runTimeoutMs }) };

  async function notify(job: Job<InferJobData, JobResult>, record: JobRecord): Promise<void> {
    const url = job.data.spec.webhookUrl;
    if (url === undefined) return;
    const body = JSON.stringify({ type: `job.${record.state}`, job: jobView(record) });
    await webhooks.send({ jobId: record.id, tenantId: record.spec.tenantId, url, body });
  }

  const worker = new Worker<InferJobData, JobResult>(
    INFER_QUEUE,
    async (job, _token, signal) => {
      const { spec } = job.data;
      const startedAt = job.processedOn ?? now();
      observer?.started(spec.tier.name, spec.model, Math.max(0, startedAt - job.timestamp) / 1000);
      const base = { id: job.id ?? '', spec, startedAt, attempts: job.attemptsStarted };
      try {
        const result = await runInferJob(spec, runner, signal);
        const finishedAt = now();
        await notify(job, { ...base, state: 'succeeded', finishedAt, result });
        observer?.finished('succeeded', spec.tier.name, spec.model, (finishedAt - startedAt) / 1000);
        return result;
      } catch (error) {
        const failure = JobRunError.of(error);
        const final = !failure.retryable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (final) {
          const finishedAt = now();
          await notify(job, { ...base, state: 'failed', finishedAt, error: failure.message });
          observer?.finished('failed', spec.tier.name, spec.model, (finishedAt - startedAt) / 1000);
        } else {
          logger.info('job attempt failed; will retry', { job: job.id, error: failure.message });
        }
        throw failure.retryable ? new Error(failure.message) : new UnrecoverableError(failure.message);
      }
    },
    {
      connection: bullConnection(options.redisUrl),
      prefix: jobKeys(options.keyPrefix).bullPrefix,
      concurrency: options.concurrency ?? 4,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 1,
    },
  );
  worker.on('error', (error) => logger.warn('job worker error', { error: error.message }));
  worker.on('failed', (job, error) => {
    // Stalled-too-often failures never reach the processor: count them here.
    if (job !== undefined && /stalled more than allowable limit/.test(error.message)) {
      observer?.finished('failed', job.data.spec.tier.name, job.data.spec.model);
    }
  });
  const webhookWorker = createWebhookWorker({
    redisUrl: options.redisUrl,
    ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
    tenants: options.runner.tenants,
    logger,
    now,
    ...options.webhooks,
  });

  let closing: Promise<void> | undefined;
  return {
    ready: async () => {
      await Promise.all([worker.waitUntilReady(), webhookWorker.waitUntilReady()]);
    },
    close: () =>
      (closing ??= (async () => {
        await Promise.all([closeQuietly(worker), closeQuietly(webhookWorker)]);
        await webhooks.close();
      })()),
  };
}
