/**
 * The command line of `tessera-node`, using tritonserver's own flag names wherever tritonserver has the
 * flag, so a Triton deployment's arguments carry over. Parsing is pure (argv in, options or a list of
 * problems out) so it is unit-tested without starting anything.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_STREAM_INTERVAL, MAX_STREAM_INTERVAL, MAX_STREAM_INTERVAL_MS, type StreamInterval } from '../../../shared/src/model-config/index.js';
import { modelNameProblem } from '../../../shared/src/names/index.js';
import { fleetPushUrls } from '../load-report/http-report-pusher.js';
import { parseRestrictions, type Restrictions } from '../server/restricted-apis.js';
import { DEFAULT_IDLE_GRACE_MS } from '../backends/worker/index.js';
import { DEFAULT_HEAP_GROWING_PERCENT } from './heap-growth.js';

export type ModelControlMode = 'none' | 'poll' | 'explicit';
export type RateLimitMode = 'off' | 'execution_count';

export interface NodeOptions {
  /** --model-repository (alias --model-store); required. */
  readonly modelRepository: string;
  /** --model-control-mode; default 'none'. */
  readonly modelControlMode: ModelControlMode;
  /** --load-model (repeatable, explicit mode only; '*' loads all). */
  readonly loadModels: readonly string[];
  /** --repository-poll-secs; default 15 (poll mode only). */
  readonly repositoryPollSecs: number;
  /** --http-port / --grpc-port / --metrics-port; defaults 8000 / 8001 / 8002; 0 picks a free port. */
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly metricsPort: number;
  /** --http-address / --grpc-address / --metrics-address; default 0.0.0.0. */
  readonly httpAddress: string;
  readonly grpcAddress: string;
  readonly metricsAddress: string;
  /** --allow-http / --allow-grpc / --allow-metrics; default true. */
  readonly allowHttp: boolean;
  readonly allowGrpc: boolean;
  readonly allowMetrics: boolean;
  /** --http-raw-reader: infer requests read by the node's own strict HTTP/1.1 reader (shared/src/http/raw-http1); default true. */
  readonly httpRawReader: boolean;
  /** --grpc-raw-h2: the gRPC port on the node's own HTTP/2 front (shared/src/http/raw-http2), grpc-js behind it; default true. */
  readonly grpcRawH2: boolean;
  /** --strict-model-config; default false (auto-complete on), like tritonserver. */
  readonly strictModelConfig: boolean;
  /** --model-load-thread-count: models loaded at once (start, polls); default 4, as tritonserver. */
  readonly modelLoadThreadCount: number;
  /** --backend-thread-pool-size: worker threads hosting onnxruntime instances; default os.availableParallelism(). */
  readonly backendThreadPoolSize: number;
  /** --backend-thread-idle-ms: how long a pool thread hosting nothing lingers before it ends; default 2000. */
  readonly backendThreadIdleMs: number;
  /** --heap-growing-percent: the main isolate's old space grows to (1 + N/100) x its live size between mark-compacts; default 300, 0: V8's own (heap-growth.ts). */
  readonly heapGrowingPercent: number;
  /** --exit-timeout-secs; default 30. */
  readonly exitTimeoutSecs: number;
  /** --log-verbose; default 0. */
  readonly logVerbose: number;
  /** --http-max-input-size in bytes; default 64 MiB (2^26). */
  readonly httpMaxInputSize: number;
  /** --http-restricted-api (repeatable): API categories that need a header and value over HTTP; none by default. */
  readonly httpRestrictedApis: Restrictions;
  /** --grpc-restricted-protocol (repeatable): the same over gRPC, metadata `triton-grpc-protocol-<key>`. */
  readonly grpcRestrictedProtocols: Restrictions;
  /** --grpc-max-concurrent-streams: gRPC calls (HTTP/2 streams) one connection may hold open at once; default 1000. */
  readonly grpcMaxConcurrentStreams: number;
  /** --llm-h2c-port: the LLM routes over cleartext HTTP/2 (gateway upstream); undefined (default): off; 0 picks a free port. */
  readonly llmH2cPort: number | undefined;
  /** --llm-h2c-max-streams: streams one HTTP/2 session may hold open on that port; default 512. */
  readonly llmH2cMaxStreams: number;
  /** --stream-interval / --stream-interval-ms: decoupled streams' responses per write and longest hold, where a model's config sets neither; default 1 (one write each) / 200. */
  readonly streamInterval: StreamInterval;
  /** --id: the server name in metadata; default 'triton' so Triton clients see what they expect. */
  readonly id: string;
  /** --rate-limit; default 'off'. */
  readonly rateLimit: RateLimitMode;
  /** --redis-url (or REDIS_URL): where load reports go; none by default. */
  readonly redisUrl: string | undefined;
  /** --report-url: an edge gateway's report URL (or base URL) to POST load reports to; none by default. */
  readonly reportUrl: string | undefined;
  /** --report-token (or TESSERA_REPORT_TOKEN): the edge's fleet token; required with --report-url. */
  readonly reportToken: string | undefined;
  /** --node-id: this node's id in load reports; default `<hostname>-<pid>` (defaultNodeId). */
  readonly nodeId: string | undefined;
  /** --advertise-host: the host other machines reach this node at; default the host name. */
  readonly advertiseHost: string | undefined;
  /** --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT): OpenTelemetry spans go to URL/v1/traces; off by default. */
  readonly otlpEndpoint: string | undefined;
}

export type ParseResult =
  | { readonly kind: 'options'; readonly options: NodeOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly problems: readonly string[] };

export const NODE_USAGE = `Usage: tessera-node --model-repository DIR [options]

Model repository
  --model-repository DIR        model repository directory (alias --model-store); required
                                or s3://bucket/prefix (AWS SDK default credentials and region;
                                AWS_ENDPOINT_URL_S3 for an S3-compatible server)
  --model-control-mode MODE     none | poll | explicit (default none)
  --load-model NAME             model to load at start in explicit mode; repeatable; '*' loads all
  --repository-poll-secs N      seconds between repository scans in poll mode (default 15)
  --strict-model-config BOOL    true: no auto-complete from the model file (default false)
  --model-load-thread-count N   models loaded at the same time (default 4)
  --backend-thread-pool-size N  worker threads that host the onnxruntime instances, many each
                                (default: the number of cores)
  --backend-thread-idle-ms N    how long such a thread lingers, hosting nothing, before it ends,
                                so a burst of loads reuses it (default 2000; 0 ends it at once)
  --heap-growing-percent N      old space may grow to (1 + N/100) times its live size before a
                                full collection (default 300; 0: V8's own, about 100 here)

Endpoints
  --http-port N                 KServe v2 HTTP port (default 8000; 0 picks a free one)
  --grpc-port N                 gRPC port (default 8001)
  --metrics-port N              Prometheus port (default 8002)
  --http-address A, --grpc-address A, --metrics-address A
                                addresses to bind (default 0.0.0.0)
  --allow-http BOOL, --allow-grpc BOOL, --allow-metrics BOOL
                                turn an endpoint off (default true)
  --http-max-input-size BYTES   largest JSON input accepted (default 67108864)
  --http-raw-reader BOOL        read infer requests with the node's own strict HTTP/1.1 reader;
                                anything outside its subset goes to node:http (default true)
  --grpc-raw-h2 BOOL            serve the gRPC port with the node's own HTTP/2 reader: unary calls and
                                ModelStreamInfer in place, odd cases relayed to grpc-js (default true)
  --grpc-max-concurrent-streams N
                                gRPC calls one connection may have open at once (default 1000);
                                a client over the limit waits for a free stream
  --llm-h2c-port N              also serve the LLM routes (OpenAI API, generate) over cleartext
                                HTTP/2 on this port (binds --http-address; advertised to gateways,
                                which then multiplex their streams on one session; default off)
  --llm-h2c-max-streams N       streams one HTTP/2 session may have open there (default 512)
  --stream-interval N           decoupled (LLM) streams: responses grouped per write after the first,
                                for models whose config has no stream_interval (default 1: each at once)
  --stream-interval-ms N        longest a held response waits for its group (default 200)
  --id NAME                     server name in metadata (default triton)

Access (Triton's restricted APIs; repeatable; a category may be restricted once)
  --http-restricted-api CATEGORIES:HEADER=VALUE
                                HTTP requests to these API categories must carry HEADER: VALUE,
                                or get 403; e.g. model-repository,logging:admin-key=SECRET
  --grpc-restricted-protocol CATEGORIES:KEY=VALUE
                                gRPC calls to these categories must carry metadata
                                triton-grpc-protocol-KEY: VALUE, or get UNAVAILABLE
                                categories: health, metadata, inference, shared-memory, model-config,
                                model-repository, statistics, trace, logging
                                With --model-control-mode explicit, restrict model-repository on every
                                open endpoint: its load API uploads model files, and a TypeScript-backend
                                model's files are code the node runs.

Scheduling
  --rate-limit MODE             off | execution_count (default off)

Fleet
  --redis-url URL               publish load reports to Redis (or env REDIS_URL)
  --report-url URL              also (or only) POST load reports to an edge gateway:
                                https://edge/admin/fleet/report or the edge's base URL
  --report-token TOKEN          the edge's fleet token (or env TESSERA_REPORT_TOKEN);
                                required with --report-url
  --node-id ID                  id in load reports (default <hostname>-<pid>)
  --advertise-host HOST         host the gateway reaches this node at (default the host name)

Observability
  --otlp-endpoint URL           send OpenTelemetry spans (OTLP/HTTP) to URL/v1/traces
                                (or env OTEL_EXPORTER_OTLP_ENDPOINT; default off)

Process
  --exit-timeout-secs N         on SIGTERM, wait at most N s for in-flight work (default 30)
  --log-verbose N               verbose log level (default 0)
  --help                        this text
`;

const BOOL_WORDS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, on: true, off: false };

export function parseNodeArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ParseResult {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'model-repository': { type: 'string', multiple: true },
        'model-store': { type: 'string', multiple: true },
        'model-control-mode': { type: 'string' },
        'load-model': { type: 'string', multiple: true },
        'repository-poll-secs': { type: 'string' },
        'strict-model-config': { type: 'string' },
        'model-load-thread-count': { type: 'string' },
        'backend-thread-pool-size': { type: 'string' },
        'backend-thread-idle-ms': { type: 'string' },
        'heap-growing-percent': { type: 'string' },
        'http-port': { type: 'string' },
        'grpc-port': { type: 'string' },
        'metrics-port': { type: 'string' },
        'http-address': { type: 'string' },
        'grpc-address': { type: 'string' },
        'metrics-address': { type: 'string' },
        'allow-http': { type: 'string' },
        'allow-grpc': { type: 'string' },
        'allow-metrics': { type: 'string' },
        'http-max-input-size': { type: 'string' },
        'http-raw-reader': { type: 'string' },
        'grpc-raw-h2': { type: 'string' },
        'grpc-max-concurrent-streams': { type: 'string' },
        'llm-h2c-port': { type: 'string' },
        'llm-h2c-max-streams': { type: 'string' },
        'stream-interval': { type: 'string' },
        'stream-interval-ms': { type: 'string' },
        'http-restricted-api': { type: 'string', multiple: true },
        'grpc-restricted-protocol': { type: 'string', multiple: true },
        id: { type: 'string' },
        'rate-limit': { type: 'string' },
        'redis-url': { type: 'string' },
        'report-url': { type: 'string' },
        'report-token': { type: 'string' },
        'node-id': { type: 'string' },
        'advertise-host': { type: 'string' },
        'otlp-endpoint': { type: 'string' },
        'exit-timeout-secs': { type: 'string' },
        'log-verbose': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    return { kind: 'error', problems: [(error as Error).message] };
  }
  const v = parsed.values;
  if (v.help) return { kind: 'help' };

  const problems: string[] = [];
  const int = (flag: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`--${flag} must be an integer in [${min}, ${max}], got '${raw}'`);
      return fallback;
    }
    return n;
  };
  const bool = (flag: string, raw: string | undefined, fallback: boolean): boolean => {
    if (raw === undefined) return fallback;
    const b = BOOL_WORDS[raw.toLowerCase()];
    if (b === undefined) {
      problems.push(`--${flag} must be true or false, got '${raw}'`);
      return fallback;
    }
    return b;
  };
  const oneOf = <T extends string>(flag: string, raw: string | undefined, allowed: readonly T[], fallback: T): T => {
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`--${flag} must be one of ${allowed.join(', ')}, got '${raw}'`);
    return fallback;
  };

  const repositories = [...(v['model-repository'] ?? []), ...(v['model-store'] ?? [])];
  if (repositories.length === 0) problems.push('--model-repository is required');
  if (repositories.length > 1) problems.push('only one --model-repository is supported for now');

  const modelControlMode = oneOf('model-control-mode', v['model-control-mode'], ['none', 'poll', 'explicit'] as const, 'none');
  const loadModels = v['load-model'] ?? [];
  if (loadModels.length > 0 && modelControlMode !== 'explicit') {
    problems.push('--load-model is only allowed with --model-control-mode=explicit');
  }
  for (const name of loadModels) {
    const problem = name === '*' ? undefined : modelNameProblem(name);
    if (problem !== undefined) problems.push(`--load-model ${JSON.stringify(name)}: ${problem}`);
  }
  const http = parseRestrictions('--http-restricted-api', v['http-restricted-api'] ?? [], 'http');
  const grpc = parseRestrictions('--grpc-restricted-protocol', v['grpc-restricted-protocol'] ?? [], 'grpc');
  problems.push(...http.problems, ...grpc.problems);

  const reportUrl = v['report-url'];
  const reportToken = v['report-token'] ?? (env.TESSERA_REPORT_TOKEN || undefined);
  if (reportUrl !== undefined) {
    try {
      fleetPushUrls(reportUrl);
    } catch (error) {
      problems.push(`--report-url: ${(error as Error).message}`);
    }
    if (reportToken === undefined || reportToken === '') problems.push('--report-url needs --report-token (or env TESSERA_REPORT_TOKEN)');
  } else if (v['report-token'] !== undefined) {
    problems.push('--report-token is only used with --report-url');
  }

  const options: NodeOptions = {
    modelRepository: repositories[0] ?? '',
    modelControlMode,
    loadModels,
    repositoryPollSecs: int('repository-poll-secs', v['repository-poll-secs'], 15, 1, 86_400),
    strictModelConfig: bool('strict-model-config', v['strict-model-config'], false),
    modelLoadThreadCount: int('model-load-thread-count', v['model-load-thread-count'], 4, 1, 1024),
    backendThreadPoolSize: int('backend-thread-pool-size', v['backend-thread-pool-size'], availableParallelism(), 1, 1024),
    backendThreadIdleMs: int('backend-thread-idle-ms', v['backend-thread-idle-ms'], DEFAULT_IDLE_GRACE_MS, 0, 600_000),
    heapGrowingPercent: int('heap-growing-percent', v['heap-growing-percent'], DEFAULT_HEAP_GROWING_PERCENT, 0, 10_000),
    httpPort: int('http-port', v['http-port'], 8000, 0, 65_535),
    grpcPort: int('grpc-port', v['grpc-port'], 8001, 0, 65_535),
    metricsPort: int('metrics-port', v['metrics-port'], 8002, 0, 65_535),
    httpAddress: v['http-address'] ?? '0.0.0.0',
    grpcAddress: v['grpc-address'] ?? '0.0.0.0',
    metricsAddress: v['metrics-address'] ?? '0.0.0.0',
    allowHttp: bool('allow-http', v['allow-http'], true),
    allowGrpc: bool('allow-grpc', v['allow-grpc'], true),
    allowMetrics: bool('allow-metrics', v['allow-metrics'], true),
    httpRawReader: bool('http-raw-reader', v['http-raw-reader'], true),
    grpcRawH2: bool('grpc-raw-h2', v['grpc-raw-h2'], true),
    httpMaxInputSize: int('http-max-input-size', v['http-max-input-size'], 2 ** 26, 1, 2 ** 31 - 1),
    httpRestrictedApis: http.restrictions,
    grpcRestrictedProtocols: grpc.restrictions,
    // HTTP/2 carries the setting as a 32-bit value; 0 would refuse every call.
    grpcMaxConcurrentStreams: int('grpc-max-concurrent-streams', v['grpc-max-concurrent-streams'], 1000, 1, 2 ** 32 - 1),
    llmH2cPort: v['llm-h2c-port'] === undefined ? undefined : int('llm-h2c-port', v['llm-h2c-port'], 0, 0, 65_535),
    llmH2cMaxStreams: int('llm-h2c-max-streams', v['llm-h2c-max-streams'], 512, 1, 2 ** 31 - 1),
    streamInterval: {
      events: int('stream-interval', v['stream-interval'], DEFAULT_STREAM_INTERVAL.events, 1, MAX_STREAM_INTERVAL),
      maxHoldMs: int('stream-interval-ms', v['stream-interval-ms'], DEFAULT_STREAM_INTERVAL.maxHoldMs, 1, MAX_STREAM_INTERVAL_MS),
    },
    id: v.id ?? 'triton',
    rateLimit: oneOf('rate-limit', v['rate-limit'], ['off', 'execution_count'] as const, 'off'),
    redisUrl: v['redis-url'] ?? (env.REDIS_URL || undefined),
    reportUrl,
    reportToken: reportUrl === undefined ? undefined : reportToken,
    nodeId: v['node-id'],
    advertiseHost: v['advertise-host'],
    otlpEndpoint: v['otlp-endpoint'] ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined),
    exitTimeoutSecs: int('exit-timeout-secs', v['exit-timeout-secs'], 30, 0, 86_400),
    logVerbose: int('log-verbose', v['log-verbose'], 0, 0, 10),
  };
  if (problems.length > 0) return { kind: 'error', problems };
  return { kind: 'options', options };
}
