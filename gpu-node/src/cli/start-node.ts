/**
 * Wires one node agent together from its parsed options: the core (repository, models, schedulers),
 * the HTTP, gRPC and metrics servers, the Redis load reporter and the HTTP report pusher (edge). Kept apart from `main.ts` so tests
 * start a real node in-process on port 0 and stop it without signals.
 */
import os from 'node:os';
import { assertValidNodeId } from '../../../shared/src/fleet/index.js';
import type { Logger } from '../../../shared/src/logging/index.js';
import { createTracing } from '../../../shared/src/tracing/otel-tracer.js';
import { createDefaultBackendRegistry } from '../backends/index.js';
import { createNodeCore, type TesseraNodeCore } from '../server-api/index.js';
import {
  createHttpReportPusher,
  createLoadReporter,
  defaultNodeId,
  registerLoadReportMetrics,
  type HttpReportPusher,
  type LoadReporter,
  type PeriodicReportOptions,
} from '../load-report/index.js';
import { openRepositorySource, pollRepositorySource, syncBeforeLoads } from '../repository/s3/index.js';
import { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import { createGrpcServer, type GrpcServer } from '../server/grpc/index.js';
import { createHttpServer, type HttpServer } from '../server/http/index.js';
import { createLlmH2cServer, type LlmH2cServer } from '../server/http/llm-h2c-server.js';
import { createMetricsServer, type MetricsServer } from '../server/metrics/index.js';
import type { NodeOptions } from './node-options.js';

export interface RunningNode {
  readonly core: TesseraNodeCore;
  /** Bound ports (undefined for an endpoint turned off with --allow-*=false). */
  readonly httpPort: number | undefined;
  readonly grpcPort: number | undefined;
  readonly metricsPort: number | undefined;
  /** The LLM routes' HTTP/2 port (--llm-h2c-port), undefined when off. */
  readonly llmH2cPort: number | undefined;
  /** The Redis load reporter, when --redis-url is set. */
  readonly loadReporter: LoadReporter | undefined;
  /** The HTTP report pusher to an edge gateway, when --report-url is set. */
  readonly reportPusher: HttpReportPusher | undefined;
  /**
   * Triton's shutdown: tell the gateways (draining), stop taking new work (infer answers UNAVAILABLE,
   * readiness turns false), finish what is in flight within --exit-timeout-secs, deregister from
   * Redis and leave the edge, then close the listeners.
   */
  stop(): Promise<void>;
}

/** The Triton release whose protocol we follow; reported as the server version in metadata. */
export const TRITON_PROTOCOL_VERSION = '2.73.0dev';

export async function startNode(options: NodeOptions, logger: Logger): Promise<RunningNode> {
  // A bad --node-id is a configuration error: refuse it before anything starts.
  const nodeId = options.nodeId ?? defaultNodeId();
  if (options.redisUrl !== undefined || options.reportUrl !== undefined) assertValidNodeId(nodeId);
  // One start time for every sink's reports: the node's process identity (`startedAt`) at the edge and in Redis.
  const startedAt = Date.now();
  // Our own registry (not the process-wide one) so the onnxruntime backend logs KIND_AUTO fallbacks here.
  const registry = createDefaultBackendRegistry({
    logger,
    threadPoolSize: options.backendThreadPoolSize,
    threadIdleGraceMs: options.backendThreadIdleMs,
  });
  // An s3:// repository is mirrored into a local folder first; a failure fails the start, naming the URL.
  // Off (noop) without --otlp-endpoint / OTEL_EXPORTER_OTLP_ENDPOINT; a bad URL fails the start.
  const tracing = createTracing({
    endpoint: options.otlpEndpoint,
    serviceName: 'tessera-node',
    resource: { 'service.instance.id': nodeId, 'service.version': TRITON_PROTOCOL_VERSION },
  });
  const repository = await openRepositorySource(options.modelRepository, logger);
  const localCore = createNodeCore({
    repositoryPath: repository.path,
    repositoryRoots: repository.roots,
    controlMode: options.modelControlMode,
    loadModels: options.loadModels,
    // A mirror changes only when synced, so its polls (sync, then scan) run below, not on the core's timer.
    pollSecs: repository.remote ? 0 : options.repositoryPollSecs,
    strict: options.strictModelConfig,
    loadThreadCount: options.modelLoadThreadCount,
    serverId: options.id,
    version: TRITON_PROTOCOL_VERSION,
    platform: undefined,
    backends: (name) => (registry.names().includes(name) ? registry.get(name) : undefined),
    onError: (message) => logger.error(message),
    // One limiter for the whole node: models compete for the same resources (reference 4.5).
    ...(options.rateLimit === 'execution_count' ? { rateLimiter: new RateLimiter() } : {}),
    tracer: tracing.tracer,
    streamInterval: options.streamInterval,
  });

  // Like tritonserver with --exit-on-error=false: a model that fails to load stays UNAVAILABLE with its
  // reason (shown by /v2/repository/index) and the node serves the others, but is not ready.
  const core =
    repository.remote && options.modelControlMode === 'explicit'
      ? syncBeforeLoads(localCore, repository, (message) => logger.error(message))
      : localCore;
  await core.start().catch(async (error: unknown) => {
    await repository.close();
    throw error;
  });
  for (const entry of await core.repositoryIndex(false)) {
    if (entry.state === 'READY') logger.info(`model '${entry.name}' version ${entry.version} is READY`);
    else if (entry.state !== undefined) {
      logger.error(`model '${entry.name}' version ${entry.version ?? '?'} is ${entry.state}`, { reason: entry.reason });
    }
  }

  let http: HttpServer | undefined;
  let grpc: GrpcServer | undefined;
  let metrics: MetricsServer | undefined;
  let httpPort: number | undefined;
  let llmH2c: LlmH2cServer | undefined;
  let llmH2cPort: number | undefined;
  let grpcPort: number | undefined;
  let metricsPort: number | undefined;
  try {
    if (options.allowHttp) {
      http = createHttpServer(core, {
        maxInputSize: options.httpMaxInputSize,
        logger,
        restrictedApis: options.httpRestrictedApis,
        rawHttp1: options.httpRawReader,
      });
      httpPort = (await http.listen(options.httpPort, options.httpAddress)).port;
      if (options.llmH2cPort !== undefined) {
        llmH2c = createLlmH2cServer(http.app, { maxConcurrentStreams: options.llmH2cMaxStreams });
        llmH2cPort = (await llmH2c.listen(options.llmH2cPort, options.httpAddress)).port;
      }
    }
    if (options.allowGrpc) {
      grpc = createGrpcServer(core, {
        maxConcurrentStreams: options.grpcMaxConcurrentStreams,
        restrictedProtocols: options.grpcRestrictedProtocols,
        rawH2Front: options.grpcRawH2,
      });
      grpcPort = (await grpc.listen(options.grpcPort, options.grpcAddress)).port;
    }
    if (options.allowMetrics) {
      metrics = createMetricsServer(core);
      metricsPort = (await metrics.listen(options.metricsPort, options.metricsAddress)).port;
    }
  } catch (error) {
    await Promise.allSettled([http?.close(), llmH2c?.close({ graceMs: 0 }), grpc?.close(0), metrics?.close(0)]);
    await core.shutdown({ timeoutMs: 0 });
    await repository.close();
    throw error;
  }
  const polling =
    repository.remote && options.modelControlMode === 'poll'
      ? pollRepositorySource(repository, options.repositoryPollSecs * 1000, () => core.poll(), (m) => logger.error(m))
      : undefined;
  warnIfRepositoryOpen(options, logger);
  const sinks: SinkContext = { options, nodeId, startedAt, core, logger, httpPort, grpcPort, llmH2cPort };
  const loadReporter = startLoadReporter(sinks, metrics);
  const reportPusher = startReportPusher(sinks);
  logger.info('tessera-node started', {
    host: os.hostname(),
    httpPort,
    grpcPort,
    metricsPort,
    ...(llmH2cPort === undefined ? {} : { llmH2cPort }),
    repository: options.modelRepository,
    controlMode: options.modelControlMode,
    ...(tracing.endpoint === undefined ? {} : { otlpEndpoint: tracing.endpoint }),
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('shutting down: no new work, finishing requests in flight', { exitTimeoutSecs: options.exitTimeoutSecs });
      // Gateways stop picking this node first; the key stays (draining) while accepted work finishes.
      loadReporter?.setDraining(true);
      reportPusher?.setDraining(true);
      await polling?.stop();
      await core.shutdown({ timeoutMs: options.exitTimeoutSecs * 1000 });
      await repository.close();
      await Promise.all([loadReporter?.stop({ deregister: true }), reportPusher?.stop({ deregister: true })]);
      await Promise.allSettled([http?.close({ graceMs: 1000 }), llmH2c?.close({ graceMs: 1000 }), grpc?.close(1000), metrics?.close(1000)]);
      // The last spans are batched: flush them before the process goes.
      await tracing.shutdown().catch((error: unknown) => logger.warn('could not flush traces', { error: String(error) }));
      logger.info('tessera-node stopped');
    })();
    return stopping;
  };

  return { core, httpPort, grpcPort, metricsPort, llmH2cPort, loadReporter, reportPusher, stop };
}

/**
 * Explicit model control opens the load API, which writes uploaded files into a model folder and loads
 * them: with the TypeScript backend, that is running uploaded code. Said at start, once per open endpoint.
 */
function warnIfRepositoryOpen(options: NodeOptions, logger: Logger): void {
  if (options.modelControlMode !== 'explicit') return;
  const open = [
    options.allowHttp && !options.httpRestrictedApis.has('model-repository') ? '--http-restricted-api' : undefined,
    options.allowGrpc && !options.grpcRestrictedProtocols.has('model-repository') ? '--grpc-restricted-protocol' : undefined,
  ].filter((flag): flag is string => flag !== undefined);
  for (const flag of open) {
    logger.warn(
      `the model-repository API is open to anyone who reaches this port: explicit model control lets a client upload ` +
        `model files, and a TypeScript-backend model's files are code this node runs; restrict it with ${flag}=model-repository:<key>=<value>`,
    );
  }
}

/** What the load-report sinks are started from: the node's options, identity and bound ports. */
interface SinkContext {
  readonly options: NodeOptions;
  readonly nodeId: string;
  readonly startedAt: number;
  readonly core: TesseraNodeCore;
  readonly logger: Logger;
  readonly httpPort: number | undefined;
  readonly grpcPort: number | undefined;
  readonly llmH2cPort: number | undefined;
}

/**
 * What every load-report sink is told about this node, or undefined (said once in the log) when
 * HTTP and gRPC are both off and there is no address to advertise.
 */
function reportOptions(flag: string, { options, nodeId, startedAt, core, logger, httpPort, grpcPort, llmH2cPort }: SinkContext): PeriodicReportOptions | undefined {
  if (httpPort === undefined && grpcPort === undefined) {
    logger.warn(`${flag} is ignored: with HTTP and gRPC both off there is no address to advertise`);
    return undefined;
  }
  const host = options.advertiseHost ?? os.hostname();
  return {
    nodeId,
    httpAddress: httpPort === undefined ? null : advertisedAddress(host, httpPort),
    grpcAddress: grpcPort === undefined ? null : advertisedAddress(host, grpcPort),
    ...(llmH2cPort === undefined ? {} : { llmH2Address: advertisedAddress(host, llmH2cPort) }),
    source: () => core.loadSnapshot(),
    logger,
    startedAt,
  };
}

/**
 * With --redis-url: reports this node's models and load to Redis, started once the servers listen so
 * the advertised ports are the bound ones. Redis is never on the serving path: the reporter connects
 * and reconnects in the background, and an unreachable Redis only shows as
 * tessera_node_load_report_connected 0 (and a logged warning).
 */
function startLoadReporter(context: SinkContext, metrics: MetricsServer | undefined): LoadReporter | undefined {
  const { options, logger } = context;
  if (options.redisUrl === undefined) return undefined;
  const common = reportOptions('--redis-url', context);
  if (common === undefined) return undefined;
  let reporter: LoadReporter;
  try {
    reporter = createLoadReporter({ ...common, redisUrl: options.redisUrl });
  } catch (error) {
    // The node serves without reports rather than not at all.
    logger.error('load reports are off: could not set up the Redis client', { error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
  if (metrics) registerLoadReportMetrics(metrics.registry, reporter);
  reporter.start();
  return reporter;
}

/**
 * With --report-url: pushes the same load reports over HTTP to an edge gateway (docs/edge.md), started
 * once the servers listen. Like Redis, the edge is never on the serving path: failed pushes are
 * retried with a capped backoff and logged once per outage.
 */
function startReportPusher(context: SinkContext): HttpReportPusher | undefined {
  const { options, logger } = context;
  if (options.reportUrl === undefined) return undefined;
  const common = reportOptions('--report-url', context);
  if (common === undefined) return undefined;
  if (context.httpPort === undefined) logger.warn('--report-url with HTTP off: the edge reaches nodes over HTTP only, so it cannot route here');
  let pusher: HttpReportPusher;
  try {
    pusher = createHttpReportPusher({ ...common, reportUrl: options.reportUrl, token: options.reportToken ?? '' });
  } catch (error) {
    logger.error('load report pushes are off', { error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
  pusher.start();
  return pusher;
}

/** `host:port` as load reports carry addresses (shared/src/fleet/load-report.ts); IPv6 in brackets. */
export function advertisedAddress(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
