/**
 * Command-line options of `tessera-gateway` (Node entry), parsed and checked before anything starts.
 *
 *   tessera-gateway [--config FILE] [--port N] [--host H] [--node SPEC]... [--otlp-endpoint URL] [--help]
 *
 * - `--config FILE`  the JSON config (schema in config/gateway-config.ts and gateway/README.md).
 *                    Without it: embedded defaults (a demo tenant whose key is printed once, every
 *                    model cached, in-process stores unless REDIS_URL is set).
 * - `--port N`       overrides the config's port (default 8080); 0 picks a free port.
 * - `--host H`       overrides the config's host (default 0.0.0.0).
 * - `--grpc-port N`  overrides the config's grpcPort: serve inference.GRPCInferenceService there too
 *                    (default: no gRPC listener); 0 picks a free port.
 * - `--node SPEC`    a static node, repeatable; SPEC is comma-separated parts: `grpc=host:port`,
 *                    `http=host:port`, `http://host:port`, `grpc://host:port`, `id=name`, or a bare
 *                    `host:port` (gRPC). E.g. `--node http://10.0.0.5:8000,grpc=10.0.0.5:8001`.
 *                    Used only without Redis; they replace the config's `nodes`. Without Redis, flags
 *                    or config nodes, the gateway uses one local node at gRPC 127.0.0.1:8001.
 * - `--http-raw-reader BOOL` overrides the config's httpRawReader: infer requests read by our own strict
 *                    HTTP/1.1 reader (true/false).
 * - `--grpc-raw-h2 BOOL` overrides the config's grpcRawH2: the gRPC port read by our own HTTP/2 reader,
 *                    unary calls served in place, ModelStreamInfer relayed to grpc-js on loopback (true/false).
 * - `--grpc-upstream-raw-h2 true` deprecated, accepted and ignored (every gRPC call to nodes is on the
 *                    gateway's own HTTP/2 client); `false` is refused: node:http2's client was retired.
 * - `--otlp-endpoint URL` OpenTelemetry tracing: spans go (OTLP/HTTP JSON) to URL/v1/traces, e.g.
 *                    http://collector:4318. Default: env OTEL_EXPORTER_OTLP_ENDPOINT, else tracing off.
 * Environment: REDIS_URL (overrides the config's redisUrl), TESSERA_ADMIN_KEY (the admin key in
 * plaintext; overrides adminKeyHash).
 */
import { parseArgs } from 'node:util';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { UPSTREAM_RAW_H2_RETIRED, type StaticNodeConfig } from '../config/gateway-config.js';

export interface GatewayCliOptions {
  readonly configPath: string | undefined;
  readonly port: number | undefined;
  /** --grpc-port: the gRPC front door's port; undefined → the config's grpcPort. */
  readonly grpcPort: number | undefined;
  readonly host: string | undefined;
  readonly nodes: readonly StaticNodeConfig[];
  /** --otlp-endpoint; undefined → env OTEL_EXPORTER_OTLP_ENDPOINT, else tracing off. */
  readonly otlpEndpoint: string | undefined;
  /** --http-raw-reader; undefined → the config's httpRawReader. */
  readonly httpRawReader: boolean | undefined;
  /** --grpc-raw-h2; undefined → the config's grpcRawH2. */
  readonly grpcRawH2: boolean | undefined;
  readonly help: boolean;
}

export const USAGE = `usage: tessera-gateway [--config FILE] [--port N] [--grpc-port N] [--host H] [--node SPEC]... [--http-raw-reader BOOL] [--grpc-raw-h2 BOOL] [--otlp-endpoint URL] [--jobs-worker]
  --config FILE   the gateway config JSON (default: embedded defaults with a demo tenant)
  --port N        HTTP listen port (default 8080, or the config's "port"); 0 picks a free port
  --grpc-port N   gRPC listen port (inference.GRPCInferenceService; default off, or the config's "grpcPort")
  --host H        listen address (default: all interfaces)
  --node SPEC     grpc=host:port,http=host:port (repeatable; used without Redis)
  --http-raw-reader BOOL  read infer requests with the gateway's own strict HTTP/1.1 reader (default: the config's "httpRawReader", true)
  --grpc-raw-h2 BOOL  read the gRPC port with the gateway's own HTTP/2 reader (default: the config's "grpcRawH2", true)
  --grpc-upstream-raw-h2 true  deprecated, ignored: gRPC calls to nodes always use the gateway's own HTTP/2 client
  --otlp-endpoint URL   send OpenTelemetry spans to URL/v1/traces (default: off)
  --jobs-worker   also run async-job workers in this process (or TESSERA_JOBS_WORKER=1)
  env: REDIS_URL, TESSERA_ADMIN_KEY, TESSERA_JOBS_WORKER, OTEL_EXPORTER_OTLP_ENDPOINT`;

const HOST_PORT = /^[^\s/,=]+:\d{1,5}$/;

export function parseNodeSpec(spec: string): StaticNodeConfig {
  let grpc: string | null = null;
  let http: string | null = null;
  let id: string | undefined;
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(?:grpc=|grpc:\/\/)(.+)$/.exec(part)) !== null) grpc = m[1]!;
    else if ((m = /^(?:http=|http:\/\/)(.+?)\/?$/.exec(part)) !== null) http = m[1]!;
    else if ((m = /^id=(.+)$/.exec(part)) !== null) id = m[1]!;
    else grpc = part;
  }
  for (const address of [grpc, http]) {
    if (address !== null && !HOST_PORT.test(address)) {
      throw TesseraError.invalidArg(`--node ${JSON.stringify(spec)}: ${JSON.stringify(address)} is not host:port`);
    }
  }
  if (grpc === null) {
    // The gateway on Node calls nodes over gRPC; an HTTP address alone cannot be used.
    throw TesseraError.invalidArg(`--node ${JSON.stringify(spec)}: needs a gRPC address (grpc=host:port)`);
  }
  return { id: id ?? grpc, grpc, http };
}

export function parseGatewayArgs(argv: readonly string[]): GatewayCliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        config: { type: 'string' },
        port: { type: 'string' },
        'grpc-port': { type: 'string' },
        host: { type: 'string' },
        node: { type: 'string', multiple: true },
        'otlp-endpoint': { type: 'string' },
        'http-raw-reader': { type: 'string' },
        'grpc-raw-h2': { type: 'string' },
        'grpc-upstream-raw-h2': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw TesseraError.invalidArg(`${(error as Error).message}\n${USAGE}`);
  }
  const { values } = parsed;
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) throw TesseraError.invalidArg(`--port must be 0-65535, got ${JSON.stringify(values.port)}`);
  }
  let grpcPort: number | undefined;
  const grpcRaw = values['grpc-port'];
  if (grpcRaw !== undefined) {
    grpcPort = Number(grpcRaw);
    if (!/^\d+$/.test(grpcRaw) || grpcPort > 65535) throw TesseraError.invalidArg(`--grpc-port must be 0-65535, got ${JSON.stringify(grpcRaw)}`);
  }
  const rawReader = values['http-raw-reader'];
  if (rawReader !== undefined && rawReader !== 'true' && rawReader !== 'false') {
    throw TesseraError.invalidArg(`--http-raw-reader must be true or false, got ${JSON.stringify(rawReader)}`);
  }
  const grpcRawH2 = values['grpc-raw-h2'];
  if (grpcRawH2 !== undefined && grpcRawH2 !== 'true' && grpcRawH2 !== 'false') {
    throw TesseraError.invalidArg(`--grpc-raw-h2 must be true or false, got ${JSON.stringify(grpcRawH2)}`);
  }
  const upstreamRawH2 = values['grpc-upstream-raw-h2'];
  if (upstreamRawH2 === 'false') throw TesseraError.invalidArg(`--grpc-upstream-raw-h2 false is no longer supported: ${UPSTREAM_RAW_H2_RETIRED}`);
  if (upstreamRawH2 !== undefined && upstreamRawH2 !== 'true') {
    throw TesseraError.invalidArg(`--grpc-upstream-raw-h2 must be true (deprecated, ignored), got ${JSON.stringify(upstreamRawH2)}`);
  }
  return {
    configPath: values.config,
    port,
    grpcPort,
    host: values.host,
    nodes: (values.node ?? []).map(parseNodeSpec),
    otlpEndpoint: values['otlp-endpoint'],
    httpRawReader: rawReader === undefined ? undefined : rawReader === 'true',
    grpcRawH2: grpcRawH2 === undefined ? undefined : grpcRawH2 === 'true',
    help: values.help ?? false,
  };
}
