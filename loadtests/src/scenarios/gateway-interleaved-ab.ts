/**
 * Two gateway bundles, A and B, measured per core in windows taken in turns (A B, B A, ...): both
 * gateways up the whole time on core 0, each with its own node and Redis on core 1, the load from this
 * process on core 1. On a shared box the same point moves 1.5-3x within minutes; alternating exposes
 * both builds to the same moments, so their medians compare where two runs minutes apart do not (the
 * node's version of the method: batching-interleaved-ab.ts). Each point is `simple`, HTTP and gRPC,
 * cache hit and miss (`cache-control: no-store`), so each side's gRPC/HTTP ratio comes from one round.
 *
 *   AB_A=<bundle dir> AB_B=<bundle dir> [AB_MODE=sat|rate] [AB_ROUNDS=4] [AB_S=5] [AB_OUT=<dir>] \
 *     [AB_A_NODE_FLAGS='...'] [AB_B_NODE_FLAGS='...'] [AB_A_GATEWAY_ARGS='...'] [AB_B_GATEWAY_ARGS='...'] \
 *     node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts
 *
 * A bundle dir is an `npm run build` output (dist/). bin/launch.js runs a bundle only when no source
 * of this checkout is newer than it, else it silently runs these sources: the run stops when either
 * side would not run its bundle (build the older side last). `sat`: rates near one core's capacity
 * (2,000 hits/s, 600 misses/s asked); `rate`: 150 req/s and one request at a time (with latency);
 * `rate-4k`: HTTP misses at 150 req/s of `simple` and of a 4 KB FP32 tensor each way, in the same round;
 * `4k`: misses of `simple` and of the 4 KB tensor, HTTP and gRPC, at each rate of AB_RATES (default
 * 400,150: a core busy but not saturated, where a wake-up's cost is spread over several requests, and
 * the issue's 150/s), the two sizes back to back within a round, so their difference is paired in time.
 * `miss17`: HTTP misses as issue 17's raw upstream is judged: the side's node straight (direct, c=1), the
 * gateway's miss at c=1, at 150/s and at 600/s, and the gRPC miss at c=1, each with the node's CPU per
 * request (its pid's ticks) beside the gateway's; the added latency is the gateway's p50/p99 at c=1 less
 * the direct one, paired within the round. AB_A_CONFIG / AB_B_CONFIG: JSON of top-level gateway config
 * keys for one side (e.g. '{"nodeRawInferBelowCalls":0}': the lever's A/B on one bundle).
 * Ports: BENCH_PORT_BASE + 100 (A) and + 200 (B); default base 42000.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { median } from '../lib/sampling/percentiles.js';
import { idleShare, lessIdle, ratePoint, soloPoint, type MeasuredPoint } from './gateway-per-core-points.js';
import { FP32_4K_REQUEST, pinSelf, startPerCoreStack, SIMPLE_REQUEST, type PerCoreStack } from './gateway-per-core-stack.js';

const MODES = ['sat', 'rate', 'rate-4k', '4k', 'miss17'] as const;
const MODE = MODES.find((m) => m === process.env.AB_MODE) ?? 'sat';
const RATES_4K = (process.env.AB_RATES ?? '400,150').split(',').map(Number);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const TIMING = { warmupS: 1, durationS: Number(process.env.AB_S ?? 5) };
const BASE = Number(process.env.BENCH_PORT_BASE ?? 42000);
const log = (message: string): void => void process.stderr.write(`${message}\n`);

const request = SIMPLE_REQUEST;

interface Side {
  readonly label: 'A' | 'B';
  readonly bundle: string;
  readonly work: string;
  readonly stack: PerCoreStack;
  readonly clients: Readonly<Record<'hit' | 'miss' | 'grpcHit' | 'grpcMiss' | 'direct', InferClient>>;
  readonly idle: number;
}

async function startSide(label: 'A' | 'B', bundle: string, portBase: number): Promise<Side> {
  process.env.TESSERA_BUNDLE_DIR = bundle;
  process.env.BENCH_PORT_BASE = String(portBase);
  // AB_A_NODE_FLAGS / AB_B_NODE_FLAGS: extra node flags for one side's gateway (a flag's A/B on one bundle).
  const flags = process.env[`AB_${label}_NODE_FLAGS`];
  if (flags !== undefined) process.env.BENCH_GATEWAY_NODE_FLAGS = flags;
  else delete process.env.BENCH_GATEWAY_NODE_FLAGS;
  // AB_A_GATEWAY_ARGS / AB_B_GATEWAY_ARGS: extra gateway flags for one side (a gateway option's A/B on one bundle).
  const args = process.env[`AB_${label}_GATEWAY_ARGS`];
  if (args !== undefined) process.env.BENCH_GATEWAY_ARGS = args;
  else delete process.env.BENCH_GATEWAY_ARGS;
  // AB_A_CONFIG / AB_B_CONFIG: a gateway config JSON for one side.
  const config = process.env[`AB_${label}_CONFIG`];
  if (config !== undefined) process.env.BENCH_GATEWAY_CONFIG_JSON = config;
  else delete process.env.BENCH_GATEWAY_CONFIG_JSON;
  const work = await mkdtemp(join(tmpdir(), `gateway-ab-${label}-`));
  const stack = await startPerCoreStack(work, (m) => log(`[${label}] ${m}`));
  if (!stack.gatewayBuild.startsWith('production bundle') && process.env.AB_ALLOW_SOURCES !== '1') {
    await stack.close();
    throw new Error(`side ${label} would not run its bundle: ${stack.gatewayBuild}`);
  }
  const auth = { authorization: `Bearer ${stack.key}` };
  const noStore = { ...auth, 'cache-control': 'no-store' };
  const clients = {
    hit: createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers: auth }),
    miss: createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers: noStore }),
    grpcHit: createGrpcInferClient('127.0.0.1', stack.grpcPort, auth),
    grpcMiss: createGrpcInferClient('127.0.0.1', stack.grpcPort, noStore),
    direct: createHttpInferClient('127.0.0.1', stack.node.httpPort, 8),
  };
  // The first hit stores the entry; every later hit is served from the cache.
  await clients.hit.infer(request);
  await clients.grpcHit.infer(request);
  const idle = await idleShare(stack.gateway, 3);
  return { label, bundle, work, stack, clients, idle };
}

/** The points of one round for one side, in a fixed order. */
function points(side: Side): [string, () => Promise<MeasuredPoint>][] {
  const { clients: c, stack } = side;
  const w = stack.gateway;
  const at = (label: string, client: InferClient, rate: number): [string, () => Promise<MeasuredPoint>] => [label, () => ratePoint(label, () => client.infer(request), rate, w, TIMING)];
  const solo = (label: string, client: InferClient): [string, () => Promise<MeasuredPoint>] => [label, () => soloPoint(label, () => client.infer(request), w, TIMING)];
  if (MODE === 'rate-4k') {
    return [
      ['miss 150/s HTTP simple', () => ratePoint('miss 150/s HTTP simple', () => c.miss.infer(request), 150, w, TIMING)],
      ['miss 150/s HTTP 4 KB FP32', () => ratePoint('miss 150/s HTTP 4 KB FP32', () => c.miss.infer(FP32_4K_REQUEST), 150, w, TIMING)],
    ];
  }
  if (MODE === '4k') {
    return RATES_4K.flatMap((rate) =>
      (['HTTP', 'gRPC'] as const).flatMap((protocol) => {
        const client = protocol === 'HTTP' ? c.miss : c.grpcMiss;
        const simple = `miss ${rate}/s ${protocol} simple`;
        const fp32 = `miss ${rate}/s ${protocol} 4 KB FP32`;
        return [
          [simple, () => ratePoint(simple, () => client.infer(request), rate, w, TIMING)],
          [fp32, () => ratePoint(fp32, () => client.infer(FP32_4K_REQUEST), rate, w, TIMING)],
        ] as [string, () => Promise<MeasuredPoint>][];
      }),
    );
  }
  if (MODE === 'miss17') {
    const node = { name: 'node', port: stack.node.httpPort, pids: async () => [stack.node.pid], stop: async () => {} };
    const solo17 = (label: string, client: InferClient): [string, () => Promise<MeasuredPoint>] => [label, () => soloPoint(label, () => client.infer(request), w, TIMING, node)];
    const rate17 = (label: string, client: InferClient, rate: number): [string, () => Promise<MeasuredPoint>] => [label, () => ratePoint(label, () => client.infer(request), rate, w, TIMING, node)];
    return [
      solo17('direct c=1 HTTP', c.direct),
      solo17('miss c=1 HTTP', c.miss),
      solo17('miss c=1 gRPC', c.grpcMiss),
      rate17('miss 150/s HTTP', c.miss, 150),
      rate17('miss 600/s HTTP', c.miss, 600),
    ];
  }
  if (MODE === 'sat') {
    return [at('hit 2000/s HTTP', c.hit, 2000), at('hit 2000/s gRPC', c.grpcHit, 2000), at('miss 600/s HTTP', c.miss, 600), at('miss 600/s gRPC', c.grpcMiss, 600)];
  }
  return [
    at('hit 150/s HTTP', c.hit, 150),
    at('hit 150/s gRPC', c.grpcHit, 150),
    at('miss 150/s HTTP', c.miss, 150),
    at('miss 150/s gRPC', c.grpcMiss, 150),
    solo('hit c=1 HTTP', c.hit),
    solo('hit c=1 gRPC', c.grpcHit),
    solo('miss c=1 HTTP', c.miss),
    solo('miss c=1 gRPC', c.grpcMiss),
  ];
}

interface Sample {
  readonly side: 'A' | 'B';
  readonly round: number;
  readonly point: string;
  readonly netCpuUs: number;
  readonly mainThreadUs: number;
  readonly perSec: number;
  readonly errors: number;
  readonly dropped: number;
  readonly p50Us?: number | undefined;
  readonly p99Us?: number | undefined;
  readonly nodeCpuUs?: number | undefined;
}

function table(samples: readonly Sample[]): string {
  const names = [...new Set(samples.map((s) => s.point))];
  const of = (side: 'A' | 'B', point: string): number[] => samples.filter((s) => s.side === side && s.point === point).map((s) => s.netCpuUs);
  const fmt = (values: number[]): string => `${median(values).toFixed(0)} (${values.map((v) => v.toFixed(0)).join(', ')})`;
  const lines = ['| point: net CPU µs per request, median (rounds) | A | B | B / A |', '| --- | --- | --- | --- |'];
  for (const name of names) lines.push(`| ${name} | ${fmt(of('A', name))} | ${fmt(of('B', name))} | ${(median(of('B', name)) / median(of('A', name))).toFixed(2)} |`);
  // gRPC against HTTP on the same gateway, paired within each round (the same moment of the box).
  lines.push('', '| gRPC / HTTP per round (median) | A | B |', '| --- | --- | --- |');
  for (const name of names.filter((n) => / gRPC( |$)/.test(n))) {
    const httpName = name.replace(/ gRPC( |$)/, ' HTTP$1');
    const ratios = (side: 'A' | 'B'): number[] => {
      const grpc = of(side, name);
      const http = of(side, httpName);
      return grpc.map((g, i) => g / http[i]!);
    };
    const r = (side: 'A' | 'B'): string => `${median(ratios(side)).toFixed(2)} (${ratios(side).map((v) => v.toFixed(2)).join(', ')})`;
    lines.push(`| ${name.replace(/ gRPC( |$)/, '$1').trim()} | ${r('A')} | ${r('B')} |`);
  }
  // The 4 KB tensor's extra cost over `simple`, paired within each round (rate-4k, 4k).
  const pairs = names.filter((n) => n.endsWith(' simple') && names.includes(n.replace(/ simple$/, ' 4 KB FP32')));
  if (pairs.length > 0) lines.push('', '| 4 KB FP32 minus simple per round, µs (median) | A | B |', '| --- | --- | --- |');
  for (const simple of pairs) {
    const fp32 = simple.replace(/ simple$/, ' 4 KB FP32');
    const extra = (side: 'A' | 'B'): number[] => of(side, fp32).map((v, i) => v - of(side, simple)[i]!);
    const r = (side: 'A' | 'B'): string => `${median(extra(side)).toFixed(0)} (${extra(side).map((v) => v.toFixed(0)).join(', ')})`;
    lines.push(`| ${simple.replace(/ simple$/, '')} | ${r('A')} | ${r('B')} |`);
  }
  if (samples.some((s) => s.nodeCpuUs !== undefined)) lines.push('', ...missTables(samples, names));
  return lines.join('\n');
}

/** miss17: the node's CPU per request, and the gateway's added p50/p99 at c=1 over direct, paired per round. */
function missTables(samples: readonly Sample[], names: readonly string[]): string[] {
  const of = (side: 'A' | 'B', point: string, pick: (s: Sample) => number | undefined): number[] =>
    samples.filter((s) => s.side === side && s.point === point).map((s) => pick(s) ?? Number.NaN);
  const fmt = (values: number[], digits = 0): string => `${median(values).toFixed(digits)} (${values.map((v) => v.toFixed(digits)).join(', ')})`;
  const lines = ['| point: node CPU µs per request, median (rounds) | A | B | B / A |', '| --- | --- | --- | --- |'];
  for (const name of names) {
    const node = (side: 'A' | 'B'): number[] => of(side, name, (s) => s.nodeCpuUs);
    lines.push(`| ${name} | ${fmt(node('A'))} | ${fmt(node('B'))} | ${(median(node('B')) / median(node('A'))).toFixed(2)} |`);
  }
  lines.push('', '| added over direct at c=1, ms, median (rounds) | A | B |', '| --- | --- | --- |');
  for (const name of names.filter((n) => n.startsWith('miss c=1'))) {
    for (const [what, pick] of [['p50', (s: Sample) => s.p50Us], ['p99', (s: Sample) => s.p99Us]] as const) {
      const added = (side: 'A' | 'B'): number[] => {
        const direct = of(side, 'direct c=1 HTTP', pick);
        return of(side, name, pick).map((v, i) => (v - direct[i]!) / 1000);
      };
      lines.push(`| ${name} ${what} | ${fmt(added('A'), 3)} | ${fmt(added('B'), 3)} |`);
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const a = process.env.AB_A;
  const b = process.env.AB_B;
  if (a === undefined || b === undefined) throw new Error('AB_A and AB_B must name two bundle dirs (npm run build outputs)');
  if (!pinSelf(1)) log('per-core pinning unavailable: figures are whole-box');
  const sides: Side[] = [];
  try {
    sides.push(await startSide('A', a, BASE + 100));
    sides.push(await startSide('B', b, BASE + 200));
    const samples: Sample[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        for (const [name, measure] of points(side)) {
          const p = lessIdle(await measure(), side.idle);
          samples.push({
            side: side.label,
            round,
            point: name,
            netCpuUs: p.netCpuUsPerRequest!,
            mainThreadUs: p.mainThreadUsPerRequest,
            perSec: p.requestsPerSec,
            errors: p.errors,
            dropped: p.dropped,
            p50Us: p.latency?.p50Us,
            p99Us: p.latency?.p99Us,
            nodeCpuUs: p.upstreamCpuUsPerRequest,
          });
          const latency = MODE === 'rate' && p.latency !== undefined ? ` p50 ${(p.latency.p50Us / 1000).toFixed(3)} ms p99 ${(p.latency.p99Us / 1000).toFixed(3)} ms` : '';
          const latency17 = MODE === 'miss17' && p.latency !== undefined ? ` p50 ${(p.latency.p50Us / 1000).toFixed(3)} ms p99 ${(p.latency.p99Us / 1000).toFixed(3)} ms node ${p.upstreamCpuUsPerRequest?.toFixed(0)} µs` : latency;
          log(`round ${round} ${side.label} ${name}: ${p.requestsPerSec.toFixed(0)}/s net ${p.netCpuUsPerRequest!.toFixed(1)} µs (main ${p.mainThreadUsPerRequest.toFixed(1)}) errors ${p.errors} dropped ${p.dropped}${latency17}`);
        }
      }
    }
    const text = table(samples);
    process.stdout.write(`${text}\n`);
    const report = { mode: MODE, rounds: ROUNDS, timing: TIMING, builds: sides.map((s) => ({ side: s.label, bundle: s.bundle, nodeFlags: process.env[`AB_${s.label}_NODE_FLAGS`] ?? '', gatewayArgs: process.env[`AB_${s.label}_GATEWAY_ARGS`] ?? '', ran: s.stack.gatewayBuild, idleCoreShare: s.idle })), samples };
    if (process.env.AB_OUT !== undefined) {
      await mkdir(process.env.AB_OUT, { recursive: true });
      await writeFile(join(process.env.AB_OUT, `gateway-ab-${MODE}.json`), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(process.env.AB_OUT, `gateway-ab-${MODE}.md`), `${text}\n`);
    }
  } finally {
    for (const side of sides) {
      for (const client of Object.values(side.clients)) await client.close();
      await side.stack.close();
      await rm(side.work, { recursive: true, force: true });
    }
  }
}

await main();
