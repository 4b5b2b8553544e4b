/**
 * Async jobs on Node, put together: the BullMQ queue (JobQueue port), the job metrics, and (when
 * `worker` is set) the inference and webhook workers. The gateway process calls it with its own
 * dispatcher (`--jobs-worker` decides whether it also runs workers); `tessera-jobs` calls it with a
 * dispatcher of its own over the same Redis fleet view.
 */
import type { Registry } from 'prom-client';
import { DEFAULT_KEY_PREFIX } from '../../../../shared/src/fleet/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { JobRunnerDeps } from '../../core/jobs/index.js';
import type { JobObserver } from '../../core/ports/index.js';
import { createBullmqJobQueue, type BullmqJobQueue } from './bullmq-job-queue.js';
import { createJobMetrics } from './job-metrics.js';
import { startJobWorkers, type JobWorkers, type JobWorkerSettings } from './job-worker.js';

export interface JobsSettings extends JobWorkerSettings {
  /** Run job workers in this process; default false for the gateway, true for tessera-jobs. */
  readonly worker?: boolean;
  /** Finished jobs and results are kept this long; default 86400 s. */
  readonly resultTtlSeconds?: number;
  /** Runs per job for errors that may pass; default 3. */
  readonly attempts?: number;
  /** First retry delay, doubled each time; default 1000 ms. */
  readonly backoffMs?: number;
}

export interface StartJobsOptions {
  readonly redisUrl: string;
  /** Default "tessera:". */
  readonly keyPrefix?: string;
  readonly registry: Registry;
  /** Default "tessera_gateway_". */
  readonly metricsPrefix?: string;
  readonly runner: Omit<JobRunnerDeps, 'runTimeoutMs'>;
  readonly logger: Logger;
  readonly settings?: JobsSettings;
}

export interface RunningJobs {
  readonly queue: BullmqJobQueue;
  readonly observer: JobObserver;
  readonly workers: JobWorkers | undefined;
  /** Workers first (running jobs finish), then the queue. */
  close(): Promise<void>;
}

export async function startJobs(options: StartJobsOptions): Promise<RunningJobs> {
  const settings = options.settings ?? {};
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const queue = await createBullmqJobQueue({
    redisUrl: options.redisUrl,
    keyPrefix,
    ...pick(settings, ['resultTtlSeconds', 'attempts', 'backoffMs']),
  });
  const observer = createJobMetrics({
    registry: options.registry,
    ...(options.metricsPrefix === undefined ? {} : { prefix: options.metricsPrefix }),
    counts: () => queue.counts(),
  });
  let workers: JobWorkers | undefined;
  if (settings.worker === true) {
    workers = await startJobWorkers({
      ...pick(settings, ['concurrency', 'runTimeoutMs', 'lockDurationMs', 'stalledIntervalMs', 'maxStalledCount', 'webhooks']),
      redisUrl: options.redisUrl,
      keyPrefix,
      runner: options.runner,
      observer,
      logger: options.logger,
    });
    await workers.ready();
  }
  options.logger.info('async jobs ready', { workers: workers !== undefined, concurrency: workers === undefined ? 0 : (settings.concurrency ?? 4) });
  return {
    queue,
    observer,
    workers,
    close: async () => {
      await workers?.close();
      await queue.close();
    },
  };
}

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Pick<T, K> {
  const out: Partial<T> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out as Pick<T, K>;
}
