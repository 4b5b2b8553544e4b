// The Redis connections of the job queues (their key names are in shared/src/fleet/keys.ts).
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { TesseraError } from '../../../../shared/src/errors/index.js';

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
