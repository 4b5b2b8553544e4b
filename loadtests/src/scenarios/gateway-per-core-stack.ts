/**
 * The processes of `npm run bench -- gateway --per-core`, on loopback. The bench pins itself (and so
 * every child it starts unpinned) to core 1: Redis, the node and the load generator share core 1. The
 * process under test and its anchors start pinned to core 0:
 *
 *   tessera-gateway (HTTP + gRPC front door)   the process under test, Redis-backed, `simple` cached
 *   bare Hono (@hono/node-server)              reads the request body, answers a fixed body
 *   bare node:http                             the same, without Hono
 *   nginx (one worker, access log on)          proxies to the node's HTTP port over keep-alive
 *
 * The node serves `simple` and `identity_fp32` (FP32 [1024] -> the same: a 4 KB tensor each way).
 * Fixed ports (the gRPC front door, nginx, Redis): BENCH_PORT_BASE + 1, + 80 and + 90 to + 94 (default
 * base 21000), so parallel runs on one box each keep to their own range.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configText, encodeModel, OnnxDataType, writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { startRedisServer } from '../../../shared/test/support/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { launchServer, type RunningServer } from '../lib/processes/server-process.js';
import { sleep } from '../lib/load/load-window.js';
import { pinProcess, pinnedCommand } from '../lib/per-core/index.js';
import { FLEET_HOST, ProcessStack, UNLIMITED_TIER, benchKey, waitForFleetSize } from './fleet-launch.js';
import { nginxConfPreamble } from '../lib/processes/nginx-conf.js';

export const SIMPLE = 'simple';

const SIMPLE_ELEMENTS = 16;
/** One `simple` request (INT32 [1, 16] pair), as the gateway scenarios send it. */
export const SIMPLE_REQUEST: InferRequest = {
  id: '',
  modelName: SIMPLE,
  inputs: ['INPUT0', 'INPUT1'].map((name) => ({
    name,
    datatype: 'INT32' as const,
    shape: [1, SIMPLE_ELEMENTS],
    data: new Uint8Array(Int32Array.from({ length: SIMPLE_ELEMENTS }, (_, i) => i).buffer),
  })),
  parameters: {},
};
export const FP32_4K = 'identity_fp32';
export const FP32_ELEMENTS = 1024;
/** One 4 KB FP32 request (identity_fp32, [1, 1024]), as the gateway scenarios send it. */
export const FP32_4K_REQUEST: InferRequest = {
  id: '',
  modelName: FP32_4K,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, FP32_ELEMENTS], data: new Uint8Array(Float32Array.from({ length: FP32_ELEMENTS }, (_, i) => i / 7).buffer) }],
  parameters: {},
};
export const GATEWAY_CORE = 0;
export const OTHERS_CORE = 1;
/** Read when a server starts, so one process can start stacks on two bases. */
const portBase = (): number => Number(process.env.BENCH_PORT_BASE ?? 21000);
const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));
/**
 * The node flags the gateway's image starts it with (infra/docker/gateway.Dockerfile's ENTRYPOINT), so the
 * bench measures what runs in production; BENCH_GATEWAY_V8_DEFAULTS=1 leaves them out (the "before").
 */
export const GATEWAY_IMAGE_NODE_FLAGS = ['--min-semi-space-size=32', '--max-semi-space-size=32'];
const imageFlags = (): string[] => (process.env.BENCH_GATEWAY_V8_DEFAULTS === '1' ? [] : GATEWAY_IMAGE_NODE_FLAGS);

/** Pins this process and its threads (and so every child started afterwards) to `core`. */
export function pinSelf(core: number): boolean {
  return pinProcess(process.pid, core);
}

const pinToGatewayCore = (cmd: string, args: string[]): [string, string[]] => pinnedCommand(GATEWAY_CORE, cmd, args);

async function writeRepository(dir: string): Promise<string> {
  const repo = join(dir, 'models');
  await writeExampleRepository(repo, { only: [SIMPLE] });
  const io = (name: string) => ({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', FP32_ELEMENTS] });
  const onnx = encodeModel({
    producerName: 'tessera-bench',
    graph: { name: FP32_4K, nodes: [{ opType: 'Identity', name: 'identity', inputs: ['INPUT0'], outputs: ['OUTPUT0'] }], inputs: [io('INPUT0')], outputs: [io('OUTPUT0')] },
  });
  await mkdir(join(repo, FP32_4K, '1'), { recursive: true });
  await writeFile(join(repo, FP32_4K, '1', 'model.onnx'), onnx);
  await writeFile(
    join(repo, FP32_4K, 'config.pbtxt'),
    configText({
      name: FP32_4K,
      platform: 'onnxruntime_onnx',
      maxBatchSize: 8,
      inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [FP32_ELEMENTS] }],
      outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [FP32_ELEMENTS] }],
    }),
  );
  return repo;
}

/** A server on core 0 whose CPU the bench reads: one process, or nginx's master and its worker. */
export interface MeasuredServer {
  readonly name: string;
  readonly port: number;
  /** The processes whose CPU counts (read at the start of a window: nginx's worker is a child). */
  pids(): Promise<number[]>;
  stop(): Promise<void>;
}

const single = (server: RunningServer): MeasuredServer => ({ name: server.name, port: server.port, pids: async () => [server.pid], stop: () => server.stop() });

function anchorScript(kind: 'hono' | 'node-http'): string {
  const body = JSON.stringify('{"model_name":"anchor","outputs":[]}');
  if (kind === 'hono') {
    return `import { Hono } from ${JSON.stringify(import.meta.resolve('hono'))};
import { serve } from ${JSON.stringify(import.meta.resolve('@hono/node-server'))};
const app = new Hono();
app.all('*', async (c) => { await c.req.arrayBuffer(); return c.body(${body}, 200, { 'content-type': 'application/json' }); });
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.stderr.write(JSON.stringify({ msg: 'anchor started', port: info.port }) + '\\n');
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;
  }
  return `import http from 'node:http';
const body = Buffer.from(${body});
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
});
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ msg: 'anchor started', port: server.address().port }) + '\\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

export async function startAnchor(work: string, kind: 'hono' | 'node-http'): Promise<MeasuredServer> {
  const path = join(work, `anchor-${kind}.mjs`);
  await writeFile(path, anchorScript(kind));
  return single(await launchServer({ name: kind === 'hono' ? 'bare Hono' : 'bare node:http', args: [path], startedMsg: 'anchor started', wrap: pinToGatewayCore }));
}

export function nginxAvailable(): boolean {
  const probe = spawnSync('nginx', ['-v']);
  return probe.error === undefined && probe.status === 0;
}

/** Ports nginx may take, from BENCH_PORT_BASE + 80. */
const NGINX_PORT_TRIES = 10;

/**
 * Debian's nginx as a plain reverse proxy: one worker, keep-alive upstream, access log on. Its fixed
 * port lies in the kernel's ephemeral range, where a busy box's own outgoing connections can hold it
 * for a moment: on "Address already in use" the next port of the range is tried.
 */
export async function startNginx(work: string, upstreamPort: number): Promise<MeasuredServer> {
  for (let i = 0; ; i++) {
    try {
      return await startNginxOn(work, upstreamPort, portBase() + 80 + i);
    } catch (error) {
      if (i + 1 >= NGINX_PORT_TRIES || !String(error).includes('Address already in use')) throw error;
    }
  }
}

async function startNginxOn(work: string, upstreamPort: number, NGINX_PORT: number): Promise<MeasuredServer> {
  const dir = join(work, 'nginx');
  await mkdir(join(dir, 'tmp'), { recursive: true });
  const conf = `${nginxConfPreamble(dir)}  upstream node { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${NGINX_PORT};
    location / { proxy_pass http://node; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`;
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, conf);
  const [cmd, args] = pinToGatewayCore('nginx', ['-c', confPath, '-p', dir]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${NGINX_PORT}/v2/health/live`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    await sleep(100);
  }
  const master = child.pid as number;
  return {
    name: 'nginx',
    port: NGINX_PORT,
    async pids() {
      const children = await readFile(`/proc/${master}/task/${master}/children`, 'utf8').catch(() => '');
      return [master, ...children.split(' ').filter((s) => s !== '').map(Number)];
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGQUIT');
      await exited;
    },
  };
}

/**
 * Which gateway bin/tessera-gateway.js runs, by the rule of bin/launch.js: the production bundle
 * (TESSERA_BUNDLE_DIR, else dist/) when built and no source changed since, else the sources via tsx.
 */
export function gatewayBuild(): string {
  if (process.env.TESSERA_FROM_SOURCE === '1') return 'sources through tsx (TESSERA_FROM_SOURCE=1)';
  const dir = process.env.TESSERA_BUNDLE_DIR ?? fileURLToPath(new URL('../../../dist', import.meta.url));
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  if (!existsSync(join(dir, 'tessera-gateway.js'))) return `sources through tsx (no bundle in ${dir}: npm run build)`;
  try {
    const info = JSON.parse(readFileSync(join(dir, 'build-info.json'), 'utf8')) as { builtAtMs: number; sources: string[] };
    const changed = info.sources.find((source) => existsSync(join(root, source)) && statSync(join(root, source)).mtimeMs > info.builtAtMs);
    if (changed !== undefined) return `sources through tsx (${changed} changed after the build in ${dir})`;
    return `production bundle ${dir} (built ${new Date(info.builtAtMs).toISOString()})`;
  } catch {
    return `sources through tsx (no readable build-info.json in ${dir})`;
  }
}

export interface PerCoreStack {
  readonly work: string;
  readonly node: RunningNode;
  readonly gateway: MeasuredServer;
  readonly grpcPort: number;
  readonly key: string;
  readonly gatewayConfig: unknown;
  /** gatewayBuild() when the gateway started. */
  readonly gatewayBuild: string;
  close(): Promise<void>;
}

export async function startPerCoreStack(work: string, log: (message: string) => void): Promise<PerCoreStack> {
  const stack = new ProcessStack();
  try {
    // Inside the run's own port range, as every fixed port here: parallel runs on one box never meet.
    const redis = await startRedisServer({ portFrom: portBase() + 90 });
    stack.push(redis);
    const repo = await writeRepository(work);
    const node = await launchNode({ modelRepository: repo, extraArgs: ['--redis-url', redis.url, '--node-id', 'bench-node1', '--advertise-host', FLEET_HOST] });
    stack.push(node);
    await waitForModelReady(node.httpBase, SIMPLE);
    await waitForModelReady(node.httpBase, FP32_4K);
    log(`redis on ${redis.port}, node on ${node.httpPort}/${node.grpcPort} (core 1)`);
    const { key, hash } = benchKey('percore');
    const gatewayConfig = {
      host: FLEET_HOST,
      redisUrl: redis.url,
      metrics: { requireAdminKey: false },
      tiers: { premium: UNLIMITED_TIER },
      tenants: [{ id: 'bench', name: 'bench', tier: 'premium', keys: [{ id: 'bench-key', hash }] }],
      cache: { enabled: true, models: { [SIMPLE]: { enabled: true }, [FP32_4K]: { enabled: true } } },
      // BENCH_GATEWAY_CONFIG_JSON: top-level keys merged in (e.g. {"nodeRawInferBelowCalls": 0}); a build without a key refuses it.
      ...(JSON.parse(process.env.BENCH_GATEWAY_CONFIG_JSON ?? '{}') as Record<string, unknown>),
    };
    const file = join(work, 'gateway.json');
    await writeFile(file, `${JSON.stringify(gatewayConfig, null, 2)}\n`);
    const GRPC_FRONT_PORT = portBase() + 1;
    const build = gatewayBuild();
    log(`gateway from: ${build}`);
    const server = await launchServer({
      name: 'tessera-gateway',
      // BENCH_GATEWAY_CPU_PROF=DIR: the gateway writes a V8 CPU profile there when it stops.
      // BENCH_GATEWAY_NODE_FLAGS: extra node flags for the gateway alone (e.g. --trace-gc), space-separated.
      // BENCH_GATEWAY_ARGS: extra gateway flags (e.g. --http-raw-reader true), space-separated.
      args: [
        ...imageFlags(),
        ...(process.env.BENCH_GATEWAY_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_GATEWAY_CPU_PROF}`] : []),
        ...(process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
        GATEWAY_BIN, '--config', file, '--port', '0', '--grpc-port', String(GRPC_FRONT_PORT), '--host', FLEET_HOST,
        ...(process.env.BENCH_GATEWAY_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
      ],
      startedMsg: 'tessera-gateway started',
      env: { REDIS_URL: '' },
      wrap: pinToGatewayCore,
    });
    stack.push(server);
    await waitForFleetSize(`http://${FLEET_HOST}:${server.port}/metrics`, 1);
    log(`gateway on ${server.port} (gRPC ${GRPC_FRONT_PORT}), core 0`);
    return { work, node, gateway: single(server), grpcPort: GRPC_FRONT_PORT, key, gatewayConfig, gatewayBuild: build, close: () => stack.close() };
  } catch (error) {
    await stack.close();
    throw error;
  }
}
