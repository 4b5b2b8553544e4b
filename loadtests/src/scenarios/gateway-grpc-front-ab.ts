/**
 * Gateways compared in turns on the gRPC calls that are not ModelInfer: ServerLive at one call in flight
 * (gateway CPU per call, round trip) and ModelStreamInfer on the decoupled `token_stream` model with no
 * token delay (gateway CPU per response), so a second HTTP/2 hop on the gateway's port shows as CPU per
 * call or per response. Every gateway stays up on core 0 with the same node and Redis (core 1); this
 * process (the client) runs on core 1; the sides' order rotates each round. The gateway side of
 * node-grpc-front-ab.ts.
 *
 *   BENCH_PORT_BASE=42000 node --import tsx loadtests/src/scenarios/gateway-grpc-front-ab.ts \
 *     LABEL=BUNDLE[+ARG...] LABEL=BUNDLE[+ARG...] ... [--rounds 3] [--window 4] [--out OUT.json]
 *
 * e.g. `A=/tmp/lead-ab/s36/dist Araw=/tmp/lead-ab/s36/dist+--grpc-raw-h2+true B=dist+--grpc-raw-h2+true`.
 * Gateway i's gRPC port is BENCH_PORT_BASE + 10 + i.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GRPCInferenceService, ModelInferRequestSchema, ServerLiveRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import type { ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { startRedisServer } from '../../../shared/test/support/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { tokenStreamConfigText } from '../../../gpu-node/src/example-models/token-stream.js';
import { perCoreSupport, pinProcess, pinnedCommand, readThreadCpu } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { launchServer, type RunningServer } from '../lib/processes/server-process.js';
import { median, percentile } from '../lib/sampling/percentiles.js';
import { FLEET_HOST, ProcessStack, UNLIMITED_TIER, benchKey, waitForFleetSize } from './fleet-launch.js';
import { gatewayBuild } from './gateway-per-core-stack.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));
const STREAMS = 8;
/** Tokens per request: the prompt's words come back one response each. */
const TOKENS = 32;
const KINDS = ['live c=1', 'stream'] as const;

interface Side {
  readonly label: string;
  readonly spec: string;
  readonly gateway: RunningServer;
  readonly target: string;
  readonly build: string;
}

interface Window {
  readonly side: string;
  readonly kind: (typeof KINDS)[number];
  readonly round: number;
  readonly perSec: number;
  /** Gateway CPU (all threads) per call (live) or per response (stream), µs. */
  readonly gatewayUs: number;
  readonly p50Us?: number;
  readonly p99Us?: number;
}

async function cpuUs(pid: number): Promise<number> {
  return (await readThreadCpu(pid)).reduce((sum, t) => sum + t.cpuSeconds, 0) * 1e6;
}

function authMetadata(key: string): Metadata {
  const md = new Metadata();
  md.set('authorization', `Bearer ${key}`);
  return md;
}

async function liveWindow(side: Side, key: string, seconds: number): Promise<Omit<Window, 'side' | 'kind' | 'round'>> {
  const client = new Client(side.target, credentials.createInsecure());
  try {
    const request = create(ServerLiveRequestSchema);
    const md = authMetadata(key);
    for (let i = 0; i < 200; i++) await callUnary(client, svc.serverLive, request, { metadata: md });
    const times: number[] = [];
    const cpu0 = await cpuUs(side.gateway.pid);
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t0 = performance.now();
      await callUnary(client, svc.serverLive, request, { metadata: md });
      times.push((performance.now() - t0) * 1000);
    }
    const cpu = (await cpuUs(side.gateway.pid)) - cpu0;
    const sorted = [...times].sort((a, b) => a - b);
    return { perSec: times.length / seconds, gatewayUs: cpu / times.length, p50Us: percentile(sorted, 50), p99Us: percentile(sorted, 99) };
  } finally {
    client.close();
  }
}

const prompt = Array.from({ length: TOKENS }, (_, i) => `w${i}`).join(' ');
const streamRequest = toBinary(
  ModelInferRequestSchema,
  create(ModelInferRequestSchema, {
    modelName: 'token_stream',
    inputs: [
      { name: 'text_input', datatype: 'BYTES', shape: [1n] },
      { name: 'stream', datatype: 'BOOL', shape: [1n] },
    ],
    rawInputContents: [lengthPrefixed(prompt), new Uint8Array([1])],
  }),
);

function lengthPrefixed(text: string): Uint8Array {
  const bytes = Buffer.from(text);
  const out = Buffer.alloc(4 + bytes.length);
  out.writeUInt32LE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
}

/** STREAMS streams, each sending its next request when the last one's final response came. */
async function streamWindow(side: Side, key: string, seconds: number): Promise<Omit<Window, 'side' | 'kind' | 'round'>> {
  const client = new Client(side.target, credentials.createInsecure());
  const m = svc.modelStreamInfer;
  let counting = false;
  let responses = 0;
  let stopping = false;
  const streams = Array.from({ length: STREAMS }, () => {
    const stream = client.makeBidiStreamRequest(m.path, (b: Uint8Array) => Buffer.from(b), m.responseDeserialize, authMetadata(key));
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (answer: ModelStreamInferResponse) => {
        if (answer.errorMessage !== '') return reject(new Error(answer.errorMessage));
        if (counting) responses++;
        if (answer.inferResponse?.parameters.triton_final_response?.parameterChoice.value !== true) return;
        if (stopping) stream.end();
        else stream.write(streamRequest);
      });
      stream.on('error', reject);
      stream.on('end', resolve);
    });
    stream.write(streamRequest);
    return done;
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const cpu0 = await cpuUs(side.gateway.pid);
    counting = true;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    counting = false;
    const cpu = (await cpuUs(side.gateway.pid)) - cpu0;
    stopping = true;
    await Promise.all(streams);
    return { perSec: responses / seconds, gatewayUs: cpu / Math.max(1, responses) };
  } finally {
    client.close();
  }
}

function option(args: string[], name: string, fallback: string): string {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = args[at + 1] ?? fallback;
  args.splice(at, 2);
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = Number(option(args, '--rounds', '3'));
  const seconds = Number(option(args, '--window', '4'));
  const out = option(args, '--out', '');
  const specs = args.map((arg) => {
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new Error(`expected LABEL=BUNDLE[+ARG...], got '${arg}'`);
    return { label: arg.slice(0, eq), spec: arg.slice(eq + 1) };
  });
  if (specs.length < 2) throw new Error('usage: gateway-grpc-front-ab.ts LABEL=BUNDLE[+ARG...] LABEL=BUNDLE[+ARG...] ... [--rounds N] [--window S] [--out F]');
  const support = perCoreSupport();
  if (!support.ok) {
    process.stdout.write(`skipped: ${support.why}\n`);
    return;
  }
  const base = Number(process.env.BENCH_PORT_BASE ?? 42000);
  const work = await mkdtemp(join(tmpdir(), 'tessera-gw-front-ab-'));
  const stack = new ProcessStack();
  try {
    const redis = await startRedisServer();
    stack.push(redis);
    await writeExampleRepository(work, { only: ['token_stream'] });
    await writeFile(join(work, 'token_stream', 'config.pbtxt'), tokenStreamConfigText({ tokenDelayMs: 0 }));
    const node = await launchNode({ modelRepository: work, pinCore: 1, extraArgs: ['--redis-url', redis.url, '--node-id', 'front-ab-node', '--advertise-host', FLEET_HOST] });
    stack.push(node);
    await waitForModelReady(node.httpBase, 'token_stream');
    const { key, hash } = benchKey('frontab');
    const config = {
      host: FLEET_HOST,
      redisUrl: redis.url,
      metrics: { requireAdminKey: false },
      tiers: { premium: UNLIMITED_TIER },
      tenants: [{ id: 'bench', name: 'bench', tier: 'premium', keys: [{ id: 'bench-key', hash }] }],
    };
    const file = join(work, 'gateway.json');
    await writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
    const sides: Side[] = [];
    for (const [i, { label, spec }] of specs.entries()) {
      const [dir, ...extraArgs] = spec.split('+');
      process.env.TESSERA_BUNDLE_DIR = dir;
      const build = gatewayBuild();
      if (!build.startsWith('production bundle')) throw new Error(`side ${label} would not run its bundle: ${build}`);
      const grpcPort = base + 10 + i;
      const gateway = await launchServer({
        name: `tessera-gateway ${label}`,
        args: [GATEWAY_BIN, '--config', file, '--port', '0', '--grpc-port', String(grpcPort), '--host', FLEET_HOST, ...extraArgs],
        startedMsg: 'tessera-gateway started',
        env: { REDIS_URL: '' },
        wrap: (cmd, a) => pinnedCommand(0, cmd, a),
      });
      stack.push(gateway);
      await waitForFleetSize(`http://${FLEET_HOST}:${gateway.port}/metrics`, 1);
      sides.push({ label, spec, gateway, target: `${FLEET_HOST}:${grpcPort}`, build });
      process.stderr.write(`${label}: ${build} ${extraArgs.join(' ')} (gRPC ${grpcPort})\n`);
    }
    pinProcess(process.pid, 1);
    const windows: Window[] = [];
    for (let round = 1; round <= rounds; round++) {
      const shift = (round - 1) % sides.length;
      const order = [...sides.slice(shift), ...sides.slice(0, shift)];
      for (const kind of KINDS) {
        for (const side of order) {
          const w = kind === 'stream' ? await streamWindow(side, key, seconds) : await liveWindow(side, key, seconds);
          windows.push({ side: side.label, kind, round, ...w });
          process.stderr.write(`round ${round} ${kind} ${side.label}: ${w.perSec.toFixed(0)}/s, gateway ${w.gatewayUs.toFixed(0)} us each${w.p50Us === undefined ? '' : `, p50 ${w.p50Us.toFixed(0)} us`}\n`);
        }
      }
    }
    const lines = ['| call | side | median /s | median gateway µs each | per round | median p50 µs | median p99 µs |', '| --- | --- | --- | --- | --- | --- | --- |'];
    for (const kind of KINDS) {
      for (const side of sides) {
        const mine = windows.filter((w) => w.side === side.label && w.kind === kind);
        const med = (pick: (w: Window) => number | undefined): string => {
          const values = mine.map(pick).filter((v): v is number => v !== undefined);
          return values.length === 0 ? '-' : median(values).toFixed(0);
        };
        lines.push(`| ${kind} | ${side.label} | ${med((w) => w.perSec)} | ${med((w) => w.gatewayUs)} | ${mine.map((w) => w.gatewayUs.toFixed(0)).join(', ')} | ${med((w) => w.p50Us)} | ${med((w) => w.p99Us)} |`);
      }
    }
    const table = lines.join('\n');
    process.stdout.write(`${sides.map((s) => `${s.label} = ${s.spec}`).join('\n')}\n${table}\n`);
    if (out !== '') await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), sides: sides.map((s) => ({ label: s.label, spec: s.spec, build: s.build })), rounds, windowS: seconds, streams: STREAMS, tokens: TOKENS, windows, table }, null, 2)}\n`);
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
