/**
 * Webhook deliveries: a job's final state POSTed to the URL its client gave, as a BullMQ job of its
 * own (queue `webhooks`), so deliveries survive restarts and are retried with exponential backoff
 * (default 8 attempts from 1 s: about 4 minutes in all) without holding an inference worker.
 *
 * Body: `{"type": "job.succeeded"|"job.failed", "job": <job view>}`. Headers: `Tessera-Signature`
 * (HMAC-SHA256 with the tenant's webhook secret, read at delivery time; core/jobs/webhook-signing.ts),
 * `Tessera-Job-Id`, `Tessera-Delivery-Attempt` (1, 2, …). Any 2xx is delivered; anything else (or no
 * answer within `timeoutMs`) is retried. One delivery per job (its BullMQ id is `wh-<job id>`).
 * The target is checked against the webhook policy again right before connecting (webhook-http.ts);
 * a refused target is never retried.
 */
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { DEFAULT_WEBHOOK_POLICY, signWebhook, SIGNATURE_HEADER, WebhookGuard, type WebhookPolicy } from '../../core/jobs/index.js';
import type { TenantStore } from '../../core/ports/index.js';
import { closeQuietly } from './bullmq-job-queue.js';
import { jobKeys, WEBHOOK_QUEUE } from '../../../../shared/src/fleet/index.js';
import { bullConnection, producerConnection } from './redis-connections.js';
import { postWebhook, WebhookRefusedError, type AddressResolver } from './webhook-http.js';

export interface WebhookDelivery {
  readonly jobId: string;
  readonly tenantId: string;
  readonly url: string;
  /** The JSON body, exactly as signed. */
  readonly body: string;
}

export interface WebhookOptions {
  /** Deliveries tried per webhook; default 8. */
  readonly attempts?: number;
  /** First retry delay, doubled each time; default 1000 ms. */
  readonly backoffMs?: number;
  /** How long one delivery waits for an answer; default 10000 ms. */
  readonly timeoutMs?: number;
  /** Deliveries in flight per process; default 8. */
  readonly concurrency?: number;
  /** Which targets may be reached (core/jobs/webhook-policy.ts); default https only, public addresses only. */
  readonly policy?: WebhookPolicy;
  /** How host names are resolved at delivery; default the system resolver (tests inject one). */
  readonly resolve?: AddressResolver;
}

export interface WebhookSender {
  send(delivery: WebhookDelivery): Promise<void>;
  close(): Promise<void>;
}

export async function createWebhookSender(redisUrl: string, keyPrefix: string | undefined, options: WebhookOptions = {}): Promise<WebhookSender> {
  const connection = await producerConnection(redisUrl);
  const queue = new Queue<WebhookDelivery>(WEBHOOK_QUEUE, { connection, prefix: jobKeys(keyPrefix).bullPrefix });
  queue.on('error', () => {});
  return {
    async send(delivery) {
      await queue.add('deliver', delivery, {
        jobId: `wh-${delivery.jobId}`,
        attempts: options.attempts ?? 8,
        backoff: { type: 'exponential', delay: options.backoffMs ?? 1000 },
        removeOnComplete: { age: 86_400 },
        removeOnFail: { age: 7 * 86_400 },
      });
    },
    async close() {
      await closeQuietly(queue);
      connection.disconnect();
    },
  };
}

export interface WebhookWorkerOptions extends WebhookOptions {
  readonly redisUrl: string;
  readonly keyPrefix?: string;
  readonly tenants: Pick<TenantStore, 'getTenant'>;
  readonly logger: Logger;
  /** Default Date.now (signature timestamps). */
  readonly now?: () => number;
}

export function createWebhookWorker(options: WebhookWorkerOptions): Worker<WebhookDelivery> {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const guard = new WebhookGuard(options.policy ?? DEFAULT_WEBHOOK_POLICY);
  const worker = new Worker<WebhookDelivery>(
    WEBHOOK_QUEUE,
    async (job) => {
      const { jobId, tenantId, url, body } = job.data;
      const tenant = await options.tenants.getTenant(tenantId);
      const secret = tenant?.webhookSecret;
      if (secret === undefined || secret === '') throw new UnrecoverableError(`tenant '${tenantId}' has no webhook secret: not delivered`);
      // Checked again here, right before connecting, on the addresses the socket will use (DNS
      // rebinding); a redirect is not a delivery and is not followed (it must not carry the signature).
      let status: number;
      try {
        status = await postWebhook(
          {
            url,
            body,
            timeoutMs,
            headers: {
              'Content-Type': 'application/json',
              'User-Agent': 'tessera-gateway-webhooks',
              [SIGNATURE_HEADER]: await signWebhook(secret, body, now()),
              'Tessera-Job-Id': jobId,
              'Tessera-Delivery-Attempt': String(job.attemptsMade + 1),
            },
          },
          guard,
          options.resolve,
        );
      } catch (error) {
        if (error instanceof WebhookRefusedError) throw new UnrecoverableError(error.message);
        throw error;
      }
      if (status < 200 || status > 299) throw new Error(`webhook for job ${jobId} answered HTTP ${status}`);
    },
    { connection: bullConnection(options.redisUrl), prefix: jobKeys(options.keyPrefix).bullPrefix, concurrency: options.concurrency ?? 8 },
  );
  worker.on('error', (error) => options.logger.warn('webhook worker error', { error: error.message }));
  worker.on('failed', (job, error) => {
    const final = job !== undefined && (error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1));
    options.logger.warn(final ? 'webhook delivery abandoned' : 'webhook delivery failed; will retry', { job: job?.data.jobId, error: error.message });
  });
  return worker;
}
