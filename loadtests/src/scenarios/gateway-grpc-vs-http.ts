/**
 * `npm run bench -- gateway-grpc-vs-http [--duration S] [--out DIR]`: the gateway's CPU per request,
 * gRPC front door against HTTP, on one gateway alone on core 0 (Redis, the node and this load
 * generator on core 1: gateway-per-core-stack.ts), `simple`, cache hit and miss (`no-store`):
 *
 *   sat   closed loop, GVH_CONCURRENCY (32) callers: core 0 as full as the load generator can make it,
 *         where the figure is stable
 *   150/s open loop at 150 req/s, the rate of the per-core bench's low-rate points (which move ±30%)
 *
 * Anchors on core 0, measured the same way in each round: bare node:http (the per-core bench's) for
 * HTTP, and a bare node:http2 server answering every ModelInfer with an empty framed message, headers
 * and trailers as the front door writes them (gRPC): their ratio is what node's two servers cost apart,
 * before any gateway code runs.
 *
 * Points are taken in turns, GVH_ROUNDS (4) rounds, HTTP first in even rounds and gRPC first in odd
 * ones, so each round's gRPC/HTTP ratio compares the same moment of a shared box. CPU is net of the
 * gateway's idle share. GVH_BUNDLES=dirA,dirB runs two bundles (npm run build outputs) in turns
 * instead of one (TESSERA_BUNDLE_DIR, else dist/): a before/after of the same ratios.
 * Ports: BENCH_PORT_BASE (+ 100 per bundle) + 1 for the gRPC front door.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { median } from '../lib/sampling/percentiles.js';
import { closedPoint, idleShare, lessIdle, ratePoint, type MeasuredPoint } from './gateway-per-core-points.js';
import { launchServer } from '../lib/processes/server-process.js';
import { pinnedCommand } from '../lib/per-core/index.js';
import { GATEWAY_CORE, pinSelf, SIMPLE_REQUEST, startPerCoreStack, type MeasuredServer } from './gateway-per-core-stack.js';

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const request = SIMPLE_REQUEST;
const PROTOCOLS = ['HTTP', 'gRPC'] as const;
type Protocol = (typeof PROTOCOLS)[number];

/** The anchors' answer: a ModelInferResponse of model 'anchor' version '1', no outputs (the same as JSON for HTTP). */
const ANCHOR_MESSAGE = '0a06616e63686f72120131';
const ANCHOR_BODY = '{"model_name":"anchor","model_version":"1","outputs":[]}';

/** The HTTP anchor: the per-core bench's bare node:http, with an answer the client accepts. */
const BARE_HTTP_SCRIPT = `import http from 'node:http';
const body = Buffer.from('${ANCHOR_BODY}');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
});
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ msg: 'anchor started', port: server.address().port }) + '\\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;

/** The gRPC anchor: every stream answered with that message, status OK in the trailers. */
const BARE_H2_SCRIPT = `import http2 from 'node:http2';
const body = Buffer.from('${ANCHOR_MESSAGE}', 'hex');
const message = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]);
const server = http2.createServer();
server.on('stream', (stream) => {
  stream.on('error', () => {});
  stream.on('data', () => {});
  stream.on('end', () => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-encoding': 'identity' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(message);
  });
});
server.listen(0, '127.0.0.1', () => process.stderr.write(JSON.stringify({ msg: 'anchor started', port: server.address().port }) + '\\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
`;

async function startBare(work: string, name: string, script: string): Promise<MeasuredServer> {
  const path = join(work, `${name.replace(/[^a-z0-9]/g, '-')}.mjs`);
  await writeFile(path, script);
  const server = await launchServer({ name, args: [path], startedMsg: 'anchor started', wrap: (cmd, args) => pinnedCommand(GATEWAY_CORE, cmd, args) });
  return { name: server.name, port: server.port, pids: async () => [server.pid], stop: () => server.stop() };
}

/** A server on core 0, a client on core 1 and the server's idle share of a core. */
interface Target {
  readonly client: InferClient;
  readonly server: MeasuredServer;
  readonly idle: number;
}

/** One gateway bundle, or the anchors: targets by `${kind} ${protocol}`, kind 'hit' | 'miss' | 'bare'. */
interface Side {
  readonly label: string;
  /** What ran: the gateway's build, or the anchors' names. */
  readonly build: string;
  readonly targets: ReadonlyMap<string, Target>;
  readonly points: readonly string[];
  close(): Promise<void>;
}

export interface GrpcVsHttpSample {
  readonly side: string;
  readonly round: number;
  /** e.g. "hit sat", "miss 150/s", "bare sat". */
  readonly point: string;
  readonly protocol: Protocol;
  readonly netCpuUs: number;
  readonly mainThreadUs: number;
  readonly perSec: number;
  readonly errors: number;
  readonly dropped: number;
}

async function startGatewaySide(label: string, bundle: string | undefined, portBase: number): Promise<Side> {
  if (bundle !== undefined) process.env.TESSERA_BUNDLE_DIR = bundle;
  process.env.BENCH_PORT_BASE = String(portBase);
  const work = await mkdtemp(join(tmpdir(), `gateway-gvh-${label}-`));
  const stack = await startPerCoreStack(work, (m) => log(`[${label}] ${m}`));
  const auth = { authorization: `Bearer ${stack.key}` };
  const noStore = { ...auth, 'cache-control': 'no-store' };
  const clients: [string, InferClient][] = [
    ['hit HTTP', createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers: auth })],
    ['miss HTTP', createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers: noStore })],
    ['hit gRPC', createGrpcInferClient('127.0.0.1', stack.grpcPort, auth)],
    ['miss gRPC', createGrpcInferClient('127.0.0.1', stack.grpcPort, noStore)],
  ];
  // The first hit stores the entry; every later hit is served from the cache.
  for (const [, client] of clients) await client.infer(request);
  const idle = await idleShare(stack.gateway, 3);
  return {
    label,
    build: stack.gatewayBuild,
    targets: new Map(clients.map(([name, client]) => [name, { client, server: stack.gateway, idle }])),
    points: ['hit sat', 'miss sat', 'hit 150/s', 'miss 150/s'],
    async close() {
      for (const [, client] of clients) await client.close();
      await stack.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}

async function startAnchorSide(): Promise<Side> {
  const work = await mkdtemp(join(tmpdir(), 'gateway-gvh-anchors-'));
  const http = await startBare(work, 'bare node:http', BARE_HTTP_SCRIPT);
  const h2 = await startBare(work, 'bare node:http2', BARE_H2_SCRIPT);
  const httpClient = createHttpInferClient('127.0.0.1', http.port, 8);
  const grpcClient = createGrpcInferClient('127.0.0.1', h2.port, {});
  await httpClient.infer(request);
  await grpcClient.infer(request);
  return {
    label: 'anchors',
    build: 'bare node:http (HTTP), bare node:http2 (gRPC)',
    targets: new Map([
      ['bare HTTP', { client: httpClient, server: http, idle: await idleShare(http, 2) }],
      ['bare gRPC', { client: grpcClient, server: h2, idle: await idleShare(h2, 2) }],
    ]),
    points: ['bare sat', 'bare 150/s'],
    async close() {
      await httpClient.close();
      await grpcClient.close();
      await http.stop();
      await h2.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/**
 * A window that measured what it was meant to: no errors, the rate delivered (open loop) and a
 * positive CPU figure. On a shared box a window can stall (the gateway's synchronous log writes wait
 * on a pipe this starved process drains); such a window says nothing about either protocol.
 */
export function measuredWindow(sample: GrpcVsHttpSample): boolean {
  return sample.errors === 0 && sample.dropped === 0 && Number.isFinite(sample.netCpuUs) && sample.netCpuUs > 0;
}

/**
 * Median net CPU per point and protocol over the measured windows, and the median of the gRPC/HTTP
 * ratios of the rounds where both windows measured (the same moment of the box).
 */
export function grpcVsHttpTable(samples: readonly GrpcVsHttpSample[]): string {
  const lines = ['| side | point | HTTP µs | gRPC µs | gRPC / HTTP per round: median (rounds) | windows left out |', '| --- | --- | --- | --- | --- | --- |'];
  const keys = [...new Set(samples.map((s) => `${s.side}\t${s.point}`))];
  for (const key of keys) {
    const [side, point] = key.split('\t') as [string, string];
    const all = samples.filter((s) => s.side === side && s.point === point);
    const of = (protocol: Protocol): GrpcVsHttpSample[] => all.filter((s) => s.protocol === protocol && measuredWindow(s));
    const http = of('HTTP');
    const grpc = of('gRPC');
    const ratios = grpc.flatMap((g) => {
      const h = http.find((s) => s.round === g.round);
      return h === undefined ? [] : [g.netCpuUs / h.netCpuUs];
    });
    const cpu = (list: GrpcVsHttpSample[]): string => (list.length === 0 ? '-' : median(list.map((s) => s.netCpuUs)).toFixed(0));
    const ratio = ratios.length === 0 ? '-' : `**${median(ratios).toFixed(2)}** (${ratios.map((r) => r.toFixed(2)).join(', ')})`;
    lines.push(`| ${side} | ${point} | ${cpu(http)} | ${cpu(grpc)} | ${ratio} | ${all.length - http.length - grpc.length} |`);
  }
  return lines.join('\n');
}

function measure(side: Side, point: string, protocol: Protocol, concurrency: number, timing: { warmupS: number; durationS: number }): Promise<MeasuredPoint> {
  const [kind, load] = point.split(' ') as [string, string];
  const target = side.targets.get(`${kind} ${protocol}`)!;
  const label = `${point} ${protocol}`;
  const call = (): Promise<unknown> => target.client.infer(request);
  return load === 'sat' ? closedPoint(label, call, concurrency, target.server, timing) : ratePoint(label, call, 150, target.server, timing);
}

export async function runGatewayGrpcVsHttpScenario(options: BenchOptions): Promise<number> {
  const rounds = Number(process.env.GVH_ROUNDS ?? 4);
  const concurrency = Number(process.env.GVH_CONCURRENCY ?? 32);
  const timing = { warmupS: Math.min(options.warmupS, 1), durationS: options.durationS };
  const bundles = process.env.GVH_BUNDLES?.split(',').filter((b) => b !== '') ?? [undefined];
  const base = Number(process.env.BENCH_PORT_BASE ?? 21000);
  if (!pinSelf(1)) log('per-core pinning unavailable: figures are whole-box');
  const sides: Side[] = [];
  try {
    for (const [i, bundle] of bundles.entries()) sides.push(await startGatewaySide(bundles.length === 1 ? 'gateway' : String.fromCharCode(65 + i), bundle, base + 100 * i));
    sides.push(await startAnchorSide());
    const samples: GrpcVsHttpSample[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        for (const point of side.points) {
          for (const protocol of round % 2 === 0 ? PROTOCOLS : [...PROTOCOLS].reverse()) {
            const idle = side.targets.get(`${point.split(' ')[0]} ${protocol}`)!.idle;
            const p = lessIdle(await measure(side, point, protocol, concurrency, timing), idle);
            samples.push({ side: side.label, round, point, protocol, netCpuUs: p.netCpuUsPerRequest!, mainThreadUs: p.mainThreadUsPerRequest, perSec: p.requestsPerSec, errors: p.errors, dropped: p.dropped });
            log(`round ${round} ${side.label} ${point} ${protocol}: ${p.requestsPerSec.toFixed(0)}/s net ${p.netCpuUsPerRequest!.toFixed(1)} µs (main ${p.mainThreadUsPerRequest.toFixed(1)}, core ${(p.coreShare * 100).toFixed(0)}%) errors ${p.errors} dropped ${p.dropped}`);
          }
        }
      }
    }
    const text = grpcVsHttpTable(samples);
    process.stdout.write(`${text}\n`);
    if (options.outRoot !== undefined) {
      await mkdir(options.outRoot, { recursive: true });
      const report = { rounds, concurrency, timing, sides: sides.map((s) => ({ side: s.label, ran: s.build })), samples };
      await writeFile(join(options.outRoot, 'gateway-grpc-vs-http.json'), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(options.outRoot, 'gateway-grpc-vs-http.md'), `${text}\n`);
    }
    return samples.some((s) => s.errors > 0) ? 1 : 0;
  } finally {
    for (const side of sides) await side.close();
  }
}
