/**
 * Where jobs live in Redis. BullMQ's keys are `<bullPrefix>:<queue>:…`; the prefix carries the
 * `{jobs}` hash tag so that every job key (both queues and our tombstones) sits in one Cluster slot,
 * as BullMQ's Lua scripts need. Default prefix `tessera:` → `tessera:{jobs}:infer:…`.
 */
import type { ConnectionOptions } from 'bullmq';

/** The inference jobs. */
export const INFER_QUEUE = 'infer';
/** Webhook deliveries, retried with backoff independently of the job. */
export const WEBHOOK_QUEUE = 'webhooks';

export interface JobKeys {
  /** BullMQ's `prefix` option. */
  readonly bullPrefix: string;
  /** A cancelled job's record (the job itself is removed from BullMQ). */
  tombstone(jobId: string): string;
}

export function jobKeys(keyPrefix = 'tessera:'): JobKeys {
  const bullPrefix = `${keyPrefix.replace(/:$/, '')}:{jobs}`;
  return { bullPrefix, tombstone: (jobId) => `${bullPrefix}:cancelled:${jobId}` };
}

/** BullMQ connection options from a Redis URL (BullMQ opens its own connections, blocking ones included). */
export function bullConnection(redisUrl: string, options: { readonly failFast?: boolean } = {}): ConnectionOptions {
  // failFast (producers): a command fails at once while Redis is away, so a submission answers 503
  // instead of hanging; workers keep BullMQ's defaults and wait for Redis to come back.
  return { url: redisUrl, ...(options.failFast === true ? { enableOfflineQueue: false } : {}) };
}
