/**
 * Where jobs live in Redis. BullMQ's keys are `<bullPrefix>:<queue>:…`; the prefix carries the
 * `{jobs}` hash tag so that every job key (both queues and our tombstones) sits in one Cluster slot,
 * as BullMQ's Lua scripts need. Default prefix `tessera:` → `tessera:{jobs}:infer:…`.
 */
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { TesseraError } from '../../../../shared/src/errors/index.js';

/** The inference jobs. */
export const INFER_QUEUE = 'infer';
/** Webhook deliveries, retried with backoff independently of the job. */
export const WEBHOOK_QUEUE = 'webhooks';

export interface JobKeys {
  /** BullMQ's `prefix` option. */
  readonly bullPrefix: string;
  /** A cancelled job's record (the job itself is removed from BullMQ). */
  tombstone(jobId: string): string;
  /** Sorted set of one tenant scope's stored jobs: job id → when it may be dropped (ms). */
  stored(tenantScope: string): string;
}

export function jobKeys(keyPrefix = 'tessera:'): JobKeys {
  const bullPrefix = `${keyPrefix.replace(/:$/, '')}:{jobs}`;
  return {
    bullPrefix,
    tombstone: (jobId) => `${bullPrefix}:cancelled:${jobId}`,
    stored: (tenantScope) => `${bullPrefix}:stored:${encodeURIComponent(tenantScope)}`,
  };
}

/** BullMQ connection options for workers: BullMQ opens its connections (blocking ones included) and waits out outages. */
export function bullConnection(redisUrl: string): ConnectionOptions {
  return { url: redisUrl };
}

/**
 * A connected client of our own for a producer Queue (BullMQ then shares it and never closes it):
 * commands fail at once while Redis is away (a submission answers 503 instead of hanging), and
 * closing is a plain disconnect, which BullMQ's own close cannot promise while a client reconnects.
 */
export async function producerConnection(redisUrl: string): Promise<Redis> {
  const client = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  client.on('error', () => {}); // failed commands carry the error; reconnects are ioredis's business
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw TesseraError.unavailable(`cannot connect to Redis for async jobs: ${(error as Error).message}`);
  }
  return client;
}
