/**
 * `tessera-jobs`: async-job workers in a process of their own, so inference jobs can be scaled (and
 * restarted) apart from the gateways. It needs Redis (REDIS_URL or the config's redisUrl) and reads
 * the same config file as the gateway (key prefix, tiers for nothing but validation, routing).
 *
 *   tessera-jobs [--config FILE] [--concurrency N] [--metrics-port N] [--metrics-host H]
 *
 * - `--concurrency N`   jobs run at once (default 4).
 * - `--metrics-port N`  serve Prometheus metrics on GET /metrics (default: none; 0 picks a free port).
 * Environment: REDIS_URL; TESSERA_JOBS_LOCK_MS and TESSERA_JOBS_STALLED_INTERVAL_MS (how soon a dead
 * worker's jobs resume; default 30000 each).
 *
 * It builds what a gateway builds to reach nodes (the Redis fleet view, the gRPC transport with its
 * breakers, the dispatcher with the config's routing), so jobs go through the same routing. SIGTERM or
 * SIGINT: stop taking jobs, let running ones finish, exit 0. A SIGKILL loses nothing: the running jobs'
 * locks expire and another worker (or this one, restarted) runs them again.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { TesseraError } from '../../shared/src/errors/index.js';
import { createLogger, type Logger } from '../../shared/src/logging/index.js';
import { startJobs, type JobsSettings, type RunningJobs } from './adapters/bullmq/index.js';
import { createRedisNodeDirectory } from './adapters/fleet/index.js';
import { createNodeTransport } from './adapters/grpc/index.js';
import { createPromMetrics } from './adapters/metrics/index.js';
import { createRedisSequenceAffinity, createRedisTenantStore, redisSequenceIdKey } from './adapters/redis/index.js';
import { loadGatewayConfig, type GatewayConfig } from './config/index.js';
import { createDispatcher } from './core/routing/index.js';
import { connectRedis, embeddedConfig, withWebhookPolicy } from './entry-node.js';

export const JOBS_USAGE = `usage: tessera-jobs [--config FILE] [--concurrency N] [--metrics-port N] [--metrics-host H]
  env: REDIS_URL (required unless the config has redisUrl)`;

export interface StartJobsProcessOptions {
  readonly config: GatewayConfig;
  /** Overrides config.redisUrl; required one way or the other. */
  readonly redisUrl?: string;
  /** Worker settings (concurrency, lock and stalled intervals, webhooks…); `worker` is always true here. */
  readonly settings?: Omit<JobsSettings, 'worker'>;
  /** Serve /metrics on this port (0: a free one); default: no metrics server. */
  readonly metricsPort?: number;
  /** Default 0.0.0.0. */
  readonly metricsHost?: string;
  /** Options for the Redis fleet directory; default theirs. */
  readonly fleet?: { readonly refreshMs?: number; readonly staleAfterMs?: number };
  readonly logger?: Logger;
}

export interface RunningJobsProcess {
  readonly jobs: RunningJobs;
  /** The metrics port, when served. */
  readonly metricsPort: number | undefined;
  close(): Promise<void>;
}

export async function startJobsProcess(options: StartJobsProcessOptions): Promise<RunningJobsProcess> {
  const logger = options.logger ?? createLogger({ fields: { component: 'tessera-jobs' } });
  const { config } = options;
  const redisUrl = options.redisUrl ?? config.redisUrl;
  if (redisUrl === null || redisUrl === '') throw TesseraError.invalidArg('tessera-jobs needs Redis: set REDIS_URL (or redisUrl in the config)');
  const redis = await connectRedis(redisUrl, logger);
  const prefix = config.keyPrefix;
  const metrics = createPromMetrics();
  const tenants = createRedisTenantStore({ redis, prefix, logger });
  const directory = await createRedisNodeDirectory({ redis, keyPrefix: prefix, logger, ...options.fleet });
  const transport = createNodeTransport(config.grpcTransport, { logger, fleetEvents: directory });
  // Sequence requests in jobs must reach the node that holds their sequence, like the gateway's own.
  const dispatcher = createDispatcher({
    directory,
    transport,
    breakers: transport.breakers,
    fleetEvents: directory,
    routing: config.routing,
    observer: metrics,
    sequences: { store: createRedisSequenceAffinity({ redis, prefix }), idKey: redisSequenceIdKey(redis, prefix) },
  });
  metrics.setFleetSize(() => directory.all().length);
  const jobs = await startJobs({ redisUrl, keyPrefix: prefix, registry: metrics.registry, runner: { dispatcher, tenants }, logger, settings: { ...withWebhookPolicy(options.settings ?? {}, config), worker: true } });

  let server: Server | undefined;
  let metricsPort: number | undefined;
  if (options.metricsPort !== undefined) {
    const srv = createServer((req, res) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      void metrics.render().then(
        ({ contentType, body }) => res.writeHead(200, { 'Content-Type': contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    });
    server = srv;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(options.metricsPort, options.metricsHost ?? '0.0.0.0', () => resolve());
    });
    metricsPort = (srv.address() as AddressInfo).port;
  }
  logger.info('tessera-jobs started', { concurrency: options.settings?.concurrency ?? 4, metricsPort: metricsPort ?? null });

  let closing: Promise<void> | undefined;
  return {
    jobs,
    metricsPort,
    close: () =>
      (closing ??= (async () => {
        await jobs.close();
        await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
        await dispatcher.close();
        await transport.close();
        await directory.close();
        await redis.quit().catch(() => redis.disconnect());
        logger.info('tessera-jobs stopped');
      })()),
  };
}

function positiveInt(value: string | undefined, what: string, min = 1): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw TesseraError.invalidArg(`${what} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  return n;
}

/** `tessera-jobs ...`: resolves when the process has stopped after SIGTERM/SIGINT. */
export async function runJobsCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger({ fields: { component: 'tessera-jobs' } });
  let running: RunningJobsProcess;
  try {
    let values;
    try {
      values = parseArgs({
        args: [...argv],
        options: {
          config: { type: 'string' },
          concurrency: { type: 'string' },
          'metrics-port': { type: 'string' },
          'metrics-host': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
        strict: true,
        allowPositionals: false,
      }).values;
    } catch (error) {
      throw TesseraError.invalidArg(`${(error as Error).message}\n${JOBS_USAGE}`);
    }
    if (values.help === true) {
      process.stdout.write(`${JOBS_USAGE}\n`);
      return;
    }
    const config = values.config !== undefined ? loadGatewayConfig(await readFile(values.config, 'utf8')) : (await embeddedConfig()).config;
    const concurrency = positiveInt(values.concurrency, '--concurrency');
    const lockDurationMs = positiveInt(env.TESSERA_JOBS_LOCK_MS, 'TESSERA_JOBS_LOCK_MS');
    const stalledIntervalMs = positiveInt(env.TESSERA_JOBS_STALLED_INTERVAL_MS, 'TESSERA_JOBS_STALLED_INTERVAL_MS');
    const metricsPort = positiveInt(values['metrics-port'], '--metrics-port', 0);
    running = await startJobsProcess({
      config,
      ...(env.REDIS_URL !== undefined && env.REDIS_URL !== '' ? { redisUrl: env.REDIS_URL } : {}),
      settings: {
        ...(concurrency === undefined ? {} : { concurrency }),
        ...(lockDurationMs === undefined ? {} : { lockDurationMs }),
        ...(stalledIntervalMs === undefined ? {} : { stalledIntervalMs }),
      },
      ...(metricsPort === undefined ? {} : { metricsPort }),
      ...(values['metrics-host'] === undefined ? {} : { metricsHost: values['metrics-host'] }),
      logger,
    });
  } catch (error) {
    logger.error('tessera-jobs failed to start', { error: (error as Error).message });
    process.exitCode = 1;
    return;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info('shutting down', { signal });
      void running.close().then(resolve, (error: unknown) => {
        logger.error('shutdown failed', { error: (error as Error).message });
        process.exitCode = 1;
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
