/**
 * The gateway on Node: builds the adapters (Redis when REDIS_URL or `redisUrl` is set, in-process
 * stores otherwise), the dispatcher, the cache layer and the metrics, hands them to the
 * runtime-agnostic app, and serves it on node:http: infer requests through the app's fast path
 * (adapters/node-http), everything else through the Hono app with @hono/node-server; with `grpcPort`
 * (`--grpc-port`), also as `inference.GRPCInferenceService` on gRPC (adapters/grpc-front).
 *
 * `startGateway(...)` is the programmatic form (tests, embedding); `runCli(argv)` is
 * `npx tessera-gateway --config FILE [--port 8080]` (options in cli/cli-options.ts).
 *
 * Redis client policy: one ioredis client for everything, with `enableOfflineQueue: false` and
 * `maxRetriesPerRequest: 1`, so a command fails at once while Redis is away instead of queueing: the
 * rate limiter then fails open, the cache bypasses, known API keys are served from memory. Redis must
 * answer at start (a clear error otherwise); later outages are survived.
 *
 * Shutdown (SIGTERM/SIGINT): health turns 503, the listeners stop accepting, in-flight requests
 * finish (connections still open after `graceMs` are cut), then queues, channels and Redis close,
 * and the process exits 0.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Redis } from 'ioredis';
import { computeCacheKey } from '../../shared/src/cache-key/index.js';
import { TesseraError } from '../../shared/src/errors/index.js';
import { createLogger, type Logger } from '../../shared/src/logging/index.js';
import { createTracing } from '../../shared/src/tracing/otel-tracer.js';
import type { Tracer } from '../../shared/src/tracing/index.js';
import { startJobs, systemResolver, type AddressResolver, type JobsSettings, type RunningJobs } from './adapters/bullmq/index.js';
import { createMemoryResponseCache, createRedisResponseCache } from './adapters/cache/index.js';
import { createRedisNodeDirectory, createStaticNodeDirectory, type StaticNode } from './adapters/fleet/index.js';
import { createNodeTransport } from './adapters/grpc/index.js';
import { createGrpcFront, type GrpcFront } from './adapters/grpc-front/index.js';
import { createNativeInferListener, createNativeLlmListener, createNodeLlm, createRawInferHandler, createRawLlmHandler, createRawInferUpstream, processTurnEnd, RAW_MAX_BODY_BYTES } from './adapters/node-http/index.js';
import { createDirectLlm } from './core/llm/index.js';
import { createMemoryRateLimiter, createMemorySequenceAffinity, createMemoryTenantStore } from './adapters/memory/index.js';
import { createPromMetrics, type PromMetrics } from './adapters/metrics/index.js';
import { createRedisRateLimiter, createRedisSequenceAffinity, createRedisTenantStore, redisSequenceIdKey } from './adapters/redis/index.js';
import { parseGatewayArgs, USAGE } from './cli/cli-options.js';
import { loadGatewayConfig, type GatewayConfig, type StaticNodeConfig } from './config/index.js';
import { createGatewayApp, createInferCache, type GatewayApp } from './core/app/index.js';
import { generateApiKey, seedTenants, sha256Hex } from './core/auth/index.js';
import { createCacheLayer } from './core/cache/index.js';
import type { FleetChangeSource, NodeDirectory } from './core/ports/index.js';
import { createDispatcher } from './core/routing/index.js';
import { applyServerTimeouts, limitPipelinedRequests, type ServerTimeouts } from '../../shared/src/http/index.js';
import { attachRawHttp1, chainRawHandlers, type RawHttp1FrontDoor } from '../../shared/src/http/raw-http1/index.js';

/**
 * Log lines (one access line per request among them) are written in batches, 8 KiB or at most this
 * late: one write(2) per batch, not one per line (a write per line was a tenth of a cache hit's CPU,
 * and each wakes the log's reader). A batch that is due is written right after the answers of that
 * event-loop turn (adapters/node-http/turn-end.ts), never ahead of one, as an 8 KiB batch filled by a
 * request's own line was. See shared/src/logging (`batchMs`, `flushWith`): flushed at exit, lost only
 * on SIGKILL.
 */
const ACCESS_LOG_BATCH_MS = 100;
const ACCESS_LOG_FLUSH = (flush: () => void): void => processTurnEnd.afterAnswer(flush);

/** The node used when there is neither Redis nor a static node list: a local node's gRPC port. */
export const DEFAULT_LOCAL_NODE: StaticNodeConfig = Object.freeze({ id: 'local', grpc: '127.0.0.1:8001', http: '127.0.0.1:8000' });

export interface StartGatewayOptions {
  readonly config: GatewayConfig;
  /** Overrides config.redisUrl (REDIS_URL); null forces embedded mode. Default: config.redisUrl. */
  readonly redisUrl?: string | null;
  /** The admin key in plaintext (TESSERA_ADMIN_KEY); overrides config.adminKeyHash. */
  readonly adminKey?: string;
  /** Static nodes (--node flags); override config.nodes. */
  readonly nodes?: readonly StaticNodeConfig[];
  /** Overrides config.port / config.host. */
  readonly port?: number;
  readonly host?: string;
  /** Overrides config.grpcPort: the gRPC front door's port (0 picks one); null turns it off. */
  readonly grpcPort?: number | null;
  /** Overrides config.httpRawReader (`--http-raw-reader`). */
  readonly httpRawReader?: boolean;
  /** Overrides config.grpcRawH2 (`--grpc-raw-h2`). */
  readonly grpcRawH2?: boolean;
  /** The HTTP server's header and request timeouts; default shared/src/http/server-timeouts.ts's (tests shorten them). */
  readonly serverTimeouts?: ServerTimeouts;
  /** Default: JSON lines on stderr. */
  readonly logger?: Logger;
  /** Spans of every request; default noop (tracing off). The caller owns its lifecycle (flush, shutdown). */
  readonly tracer?: Tracer;
  /** Options for the Redis fleet directory (tests shorten the scan period); default theirs. */
  readonly fleet?: { readonly refreshMs?: number; readonly staleAfterMs?: number };
  /** Async jobs (need Redis): queue settings, and `worker: true` to run job workers here too. Default: queue only. */
  readonly jobs?: JobsSettings;
  /**
   * How webhook hosts are resolved, at submission and at delivery; default the system resolver. Tests
   * inject one to play DNS rebinding (a name that resolves elsewhere between the two checks).
   */
  readonly webhookResolver?: AddressResolver;
}

export interface RunningGateway {
  readonly port: number;
  readonly url: string;
  /** The gRPC front door's bound port and `host:port` target; undefined when it is off. */
  readonly grpcPort: number | undefined;
  readonly grpcTarget: string | undefined;
  /** Streams the gRPC port relayed to grpc-js behind it (`grpcRawH2`; 0 otherwise): what it did not serve in place. */
  grpcRelayedStreams(): number;
  readonly app: GatewayApp;
  readonly metrics: PromMetrics;
  readonly directory: NodeDirectory;
  /** Async jobs; undefined without Redis. */
  readonly jobs: RunningJobs | undefined;
  /** The raw HTTP/1.1 front door (`httpRawReader`); undefined when it is off. */
  readonly rawHttp1: RawHttp1FrontDoor | undefined;
  /** Drains and closes everything; idempotent. */
  close(options?: { graceMs?: number }): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const logger = options.logger ?? createLogger({ fields: { component: 'gateway' }, batchMs: ACCESS_LOG_BATCH_MS, flushWith: ACCESS_LOG_FLUSH });
  const adminKeyHash = options.adminKey !== undefined ? await sha256Hex(options.adminKey) : options.config.adminKeyHash;
  const config: GatewayConfig = { ...options.config, adminKeyHash };
  const redisUrl = options.redisUrl === undefined ? config.redisUrl : options.redisUrl;
  const metrics = createPromMetrics();

  let redis: Redis | undefined;
  if (redisUrl !== null) {
    redis = await connectRedis(redisUrl, logger);
  } else {
    logger.warn('running WITHOUT Redis: tenants, rate limits and the cache are in this process only; run one gateway, or set REDIS_URL');
  }
  if (adminKeyHash === null) logger.warn('no admin key (adminKeyHash or TESSERA_ADMIN_KEY): the admin API is disabled');

  const prefix = config.keyPrefix;
  // Revocations and tenant changes made on any gateway reach this one's key-lookup cache at once.
  const tenantEvents = redis !== undefined ? await connectSubscriber(redis, logger) : undefined;
  const tenants =
    redis !== undefined
      ? createRedisTenantStore({ redis, prefix, logger, ...(tenantEvents === undefined ? {} : { subscriber: tenantEvents }) })
      : createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, Date.now());
  if (redis !== undefined) {
    // A Redis that comes back empty (restarted without persistence) has lost the file's tenants; seeding
    // is idempotent and leaves admin changes that survived alone, so seed again on every reconnect.
    redis.on('ready', () => {
      seedTenants(tenants, config.tenants, Date.now()).catch((error: unknown) =>
        logger.warn('re-seeding the config tenants after a Redis reconnect failed', { error: String(error) }),
      );
    });
  }
  const rateLimiter =
    redis !== undefined
      ? createRedisRateLimiter({ redis, prefix, logger, leaseMs: config.rateLimitLeaseMs, keepWarmMs: config.rateLimitKeepWarmMs, onStoreError: () => metrics.rateLimitStoreError() })
      : createMemoryRateLimiter();

  let directory;
  if (redis !== undefined) {
    if ((options.nodes ?? config.nodes).length > 0) logger.warn('static nodes are ignored: with Redis the fleet comes from the nodes\' load reports');
    directory = await createRedisNodeDirectory({ redis, keyPrefix: prefix, logger, ...options.fleet });
  } else {
    const listed = options.nodes !== undefined && options.nodes.length > 0 ? options.nodes : config.nodes;
    const nodes = listed.length > 0 ? listed : [DEFAULT_LOCAL_NODE];
    directory = createStaticNodeDirectory(nodes.map(toStaticNode));
    logger.info('static fleet', { nodes: nodes.map((n) => n.grpc ?? n.http) });
  }

  const grpcTransport = createNodeTransport(config.grpcTransport, { logger, fleetEvents: directory });
  // HTTP clients' misses as one raw HTTP/1.1 write while a node has few calls in flight (docs/benchmarks.md, issue 17).
  const rawBelowCalls = config.nodeRawInferBelowCalls;
  const transport = rawBelowCalls > 0 ? createRawInferUpstream({ grpc: grpcTransport, rawBelowCalls }) : grpcTransport;
  transport.breakers.onStateChange((nodeId, state) => {
    metrics.breakerState(nodeId, state === 'halfOpen' ? 'half_open' : state);
    logger.warn('circuit breaker changed', { node: nodeId, state });
  });
  const dispatcher = createDispatcher({
    directory,
    transport,
    breakers: transport.breakers,
    fleetEvents: directory,
    routing: config.routing,
    // Sequence affinity (core/sequences): in Redis so that every gateway replica follows a sequence.
    sequences:
      redis !== undefined
        ? { store: createRedisSequenceAffinity({ redis, prefix }), idKey: redisSequenceIdKey(redis, prefix) }
        : { store: createMemorySequenceAffinity() },
    observer: metrics,
  });
  const store = redis !== undefined ? createRedisResponseCache({ redis, ...(config.cache.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: config.cache.commandTimeoutMs }) }) : createMemoryResponseCache();
  // With Redis, an in-process copy of its entries (L1) answers repeated requests without a round
  // trip (core/cache/cache-layer.ts). Embedded mode's store is in process already: no second copy.
  const local =
    redis !== undefined && config.cache.localMaxBytes > 0
      ? { maxBytes: config.cache.localMaxBytes, maxAgeMs: config.cache.localMaxAgeSeconds * 1000 }
      : undefined;
  const layer = createCacheLayer({ store, maxEntryBytes: config.cache.maxEntryBytes, observer: metrics, logger, ...(local === undefined ? {} : { local }) });
  metrics.setLocalCache(() => layer.local);
  const cache = createInferCache({ layer, settings: config.cache, versions: dispatcher.versions, computeKey: computeCacheKey, keyPrefix: prefix });
  metrics.setFleetSize(() => directory.all().length);
  metrics.setModelFilter(servedModels(directory));
  metrics.setQueueDepth(() => {
    const models = new Set(directory.all().flatMap((node) => [...node.models.keys()]));
    return new Map([...models].map((m) => [m, dispatcher.queueDepth(m)]));
  });

  let jobs: RunningJobs | undefined;
  if (redis !== undefined && redisUrl !== null) {
    jobs = await startJobs({
      redisUrl,
      keyPrefix: prefix,
      registry: metrics.registry,
      runner: { dispatcher, tenants },
      logger,
      settings: withWebhookPolicy(options.jobs ?? {}, config, options.webhookResolver),
    });
  } else if (options.jobs?.worker === true) {
    logger.warn('job workers not started: async jobs need Redis');
  }

  // The LLM routes (/v1 OpenAI API, generate): the same fleet, breakers and response store as infer.
  const llm = createNodeLlm({ config, directory, breakers: transport.breakers, fleetEvents: directory, store, observer: metrics });
  const app = createGatewayApp({
    config,
    tenants,
    rateLimiter,
    dispatcher,
    cache,
    metrics,
    logger,
    ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    isReady: () => directory.all().length > 0,
    llm: llm.deps,
    resolveHost: hostResolver(options.webhookResolver ?? systemResolver),
    ...(jobs === undefined ? {} : { jobs: jobs.queue, jobObserver: jobs.observer }),
  });

  // Infer requests skip Hono and Web Request/Response (adapters/node-http/native-infer.ts); the rest,
  // and infer requests the fast path leaves alone, go to the Hono app as @hono/node-server serves it.
  // Pipelined requests beyond config.maxPipelinedRequests on one connection are refused unprocessed:
  // without the bound one connection could start any number of requests with one write.
  const honoListener = getRequestListener(app.fetch);
  const nativeInfer = createNativeInferListener(app.serveInfer, logger);
  // The LLM POST routes likewise: a streamed answer goes from the node's socket to the client's (native-llm.ts).
  const tracer = options.tracer === undefined ? {} : { tracer: options.tracer };
  const serveLlm = createDirectLlm({ config, tenants, rateLimiter, metrics, logger, ...tracer, now: Date.now, llm: llm.deps });
  const nativeLlm = createNativeLlmListener(serveLlm, logger);
  const server = applyServerTimeouts(
    createServer(
      limitPipelinedRequests((incoming, outgoing) => {
        if (!nativeInfer(incoming, outgoing) && !nativeLlm(incoming, outgoing)) void honoListener(incoming, outgoing);
      }, config.maxPipelinedRequests),
    ),
    options.serverTimeouts,
  );
  // With the switch, infer requests are read by our own HTTP/1.1 reader until one needs node:http (raw-infer-front.ts).
  // With llm.rawFront, the LLM routes too (llm-raw-front.ts).
  const rawInfer = createRawInferHandler(app.serveInfer, logger);
  const rawHandler = config.llm.rawFront ? chainRawHandlers(rawInfer, createRawLlmHandler(serveLlm, logger)) : rawInfer;
  const rawFrontDoor = (options.httpRawReader ?? config.httpRawReader) ? attachRawHttp1(server, rawHandler, Math.min(config.maxBodyBytes, RAW_MAX_BODY_BYTES)) : undefined;
  const port = options.port ?? config.port;
  const host = options.host ?? config.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // The gRPC front door (adapters/grpc-front): the same app, its infer pipeline and routes, on a port of its own.
  const grpcPort = options.grpcPort === undefined ? config.grpcPort : options.grpcPort;
  let front: GrpcFront | undefined;
  let grpcBound: number | undefined;
  if (grpcPort !== null) {
    front = createGrpcFront(app, { maxReceiveBytes: config.maxBodyBytes, logger, rawH2: options.grpcRawH2 ?? config.grpcRawH2 });
    try {
      grpcBound = (await front.listen(grpcPort, host)).port;
    } catch (error) {
      server.close();
      throw TesseraError.unavailable(`cannot listen for gRPC on ${host}:${grpcPort}: ${(error as Error).message}`);
    }
  }
  logger.info('tessera-gateway started', { port: bound, ...(grpcBound === undefined ? {} : { grpcPort: grpcBound }), host, redis: redis !== undefined, grpcTransport: config.grpcTransport });

  let closing: Promise<void> | undefined;
  const close = ({ graceMs = 10_000 } = {}): Promise<void> =>
    (closing ??= (async () => {
      app.startDraining();
      // Both listeners drain together: running gRPC calls finish within the same grace.
      const frontClosed = front?.close(graceMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
          rawFrontDoor?.closeAll();
        }, graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        rawFrontDoor?.closeIdle();
      });
      await frontClosed;
      await jobs?.close().catch((error: unknown) => logger.warn('async jobs did not close cleanly', { error: (error as Error).message }));
      await dispatcher.close();
      llm.close();
      await transport.close();
      await directory.close();
      tenantEvents?.disconnect();
      if (redis !== undefined) await redis.quit().catch(() => redis?.disconnect());
      logger.info('tessera-gateway stopped');
    })());

  const grpcTarget = grpcBound === undefined ? undefined : `${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${grpcBound}`;
  return { port: bound, url: `http://${shownHost}:${bound}`, grpcPort: grpcBound, grpcTarget, grpcRelayedStreams: () => front?.relayedStreams() ?? 0, app, metrics, directory, jobs, rawHttp1: rawFrontDoor, close };
}

/** The jobs settings with the config's webhook policy (and a test's resolver) for the webhook worker. */
export function withWebhookPolicy(settings: JobsSettings, config: GatewayConfig, resolve?: AddressResolver): JobsSettings {
  return { ...settings, webhooks: { ...settings.webhooks, policy: config.webhooks, ...(resolve === undefined ? {} : { resolve }) } };
}

/** An AddressResolver as the app's HostResolver (addresses only). */
function hostResolver(resolve: AddressResolver): (hostname: string) => Promise<readonly string[]> {
  return async (hostname) => (await resolve(hostname)).map((a) => a.address);
}

/**
 * "Does a node of the fleet serve this model?", answered from a set rebuilt on fleet changes and, for
 * a name not in it, at most once a second (not per request): the metrics' model label takes only
 * these names (adapters/metrics/prom-metrics.ts).
 */
function servedModels(directory: NodeDirectory & FleetChangeSource): (model: string) => boolean {
  let served = new Set<string>();
  let builtAt = 0;
  const rebuild = (): void => {
    served = new Set(directory.all().flatMap((node) => [...node.models.keys()]));
    builtAt = Date.now();
  };
  rebuild();
  directory.onChange(rebuild);
  return (model) => {
    if (served.has(model)) return true;
    if (Date.now() - builtAt < 1000) return false;
    rebuild();
    return served.has(model);
  };
}

function toStaticNode(node: StaticNodeConfig): StaticNode {
  return {
    id: node.id,
    ...(node.grpc === null ? {} : { grpcAddress: node.grpc }),
    ...(node.http === null ? {} : { httpAddress: node.http }),
    ...(node.llmH2 === undefined ? {} : { llmH2Address: node.llmH2 }),
  };
}

export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  let lastWarning = 0;
  redis.on('error', (error: Error) => {
    // ioredis emits an error per reconnect attempt: one line per 10 s is enough.
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now();
      logger.warn('redis connection error', { error: error.message });
    }
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw TesseraError.unavailable(`cannot connect to Redis at ${redactUrl(url)}: ${(error as Error).message}`);
  }
  return redis;
}

/**
 * A second connection for SUBSCRIBE, or undefined (with a warning) when it cannot connect: the
 * tenant store then falls back to its freshness bound for other gateways' changes.
 */
async function connectSubscriber(redis: Redis, logger: Logger): Promise<Redis | undefined> {
  // Unlike the command client, it keeps SUBSCRIBE queued while disconnected: ioredis resubscribes on every
  // reconnect without catching, and with no offline queue a reconnect that drops again rejects unhandled.
  const subscriber = redis.duplicate({ enableOfflineQueue: true, autoResubscribe: true, maxRetriesPerRequest: null });
  subscriber.on('error', () => {}); // the main client already reports Redis errors
  try {
    await subscriber.connect();
    return subscriber;
  } catch (error) {
    subscriber.disconnect();
    logger.warn('no Redis subscriber for tenant changes: other gateways\' revocations are seen within the key cache\'s freshness', {
      error: (error as Error).message,
    });
    return undefined;
  }
}

/** A Redis URL without its password, for messages. */
function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

/** Embedded defaults: a demo tenant (standard tier) with a fresh key, every model cached. */
export async function embeddedConfig(): Promise<{ config: GatewayConfig; demoKey: string }> {
  const demoKey = generateApiKey();
  const config = loadGatewayConfig(
    JSON.stringify({
      tenants: [{ id: 'demo', name: 'Demo tenant', tier: 'standard', keys: [{ id: 'demo-key', hash: await sha256Hex(demoKey) }] }],
      cache: { models: { '*': { enabled: true } } },
    }),
  );
  return { config, demoKey };
}

/** `tessera-gateway ...`: resolves when the gateway has stopped after SIGTERM/SIGINT. */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const logger = createLogger({ fields: { component: 'gateway' }, batchMs: ACCESS_LOG_BATCH_MS, flushWith: ACCESS_LOG_FLUSH });
  let running: RunningGateway;
  let tracing: ReturnType<typeof createTracing> | undefined;
  try {
    // `--jobs-worker` (or TESSERA_JOBS_WORKER=1): this gateway also runs async-job workers.
    const jobsWorker = argv.includes('--jobs-worker') || env.TESSERA_JOBS_WORKER === '1';
    const args = parseGatewayArgs(argv.filter((arg) => arg !== '--jobs-worker'));
    if (args.help) {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
    tracing = createTracing({ endpoint: args.otlpEndpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: 'tessera-gateway' });
    if (tracing.endpoint !== undefined) logger.info('tracing on', { otlpEndpoint: tracing.endpoint });
    let config: GatewayConfig;
    if (args.configPath !== undefined) {
      config = loadGatewayConfig(await readFile(args.configPath, 'utf8'));
    } else {
      const embedded = await embeddedConfig();
      config = embedded.config;
      // Printed once, on stdout and never through the logger: the only time this key is shown.
      process.stdout.write(`tessera-gateway: no --config; demo tenant 'demo' API key (shown once): ${embedded.demoKey}\n`);
    }
    running = await startGateway({
      config,
      ...(env.REDIS_URL !== undefined && env.REDIS_URL !== '' ? { redisUrl: env.REDIS_URL } : {}),
      ...(env.TESSERA_ADMIN_KEY !== undefined && env.TESSERA_ADMIN_KEY !== '' ? { adminKey: env.TESSERA_ADMIN_KEY } : {}),
      ...(args.nodes.length > 0 ? { nodes: args.nodes } : {}),
      ...(args.port === undefined ? {} : { port: args.port }),
      ...(args.host === undefined ? {} : { host: args.host }),
      ...(args.grpcPort === undefined ? {} : { grpcPort: args.grpcPort }),
      ...(args.httpRawReader === undefined ? {} : { httpRawReader: args.httpRawReader }),
      ...(args.grpcRawH2 === undefined ? {} : { grpcRawH2: args.grpcRawH2 }),
      ...(jobsWorker ? { jobs: { worker: true } } : {}),
      logger,
      tracer: tracing.tracer,
    });
  } catch (error) {
    const message = (error as Error).message;
    // A config error lists its problems one per line: people read them on stderr as written, not as
    // \n-escaped text inside a JSON log line (which carries the first line only).
    logger.error('tessera-gateway failed to start', { error: message.split('\n', 1)[0] ?? message });
    process.stderr.write(`tessera-gateway: failed to start:\n${message.endsWith('\n') ? message : `${message}\n`}`);
    process.exitCode = 1;
    return;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info('shutting down', { signal });
      // Spans still batched are flushed once the last request finished.
      void running.close().then(() => tracing?.shutdown()).then(resolve, (error: unknown) => {
        logger.error('shutdown failed', { error: (error as Error).message });
        process.exitCode = 1;
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
