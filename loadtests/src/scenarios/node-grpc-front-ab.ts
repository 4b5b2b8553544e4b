/**
 * Two nodes (A and B, e.g. grpc-js's own port and the raw HTTP/2 front) compared in turns on the gRPC
 * calls the front used to relay: ServerLive at one call in flight (round trip and node CPU per call), and
 * ModelStreamInfer on the decoupled `token_stream` model with no token delay (responses/s and node CPU per
 * response, so a second hop shows as CPU per response). Both nodes stay up on core 0; this process
 * (the client) runs on core 1; windows alternate A B, B A, ... so both see the same moments of a shared box.
 *
 *   node --import tsx loadtests/src/scenarios/node-grpc-front-ab.ts A_BUNDLE[+ARG...] B_BUNDLE[+ARG...] [ROUNDS] [WINDOW_S] [OUT.json]
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GRPCInferenceService, ModelInferRequestSchema, ServerLiveRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import type { ModelStreamInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { tokenStreamConfigText } from '../../../gpu-node/src/example-models/token-stream.js';
import { perCoreSupport, pinProcess, readThreadCpu } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { median, percentile } from '../lib/sampling/percentiles.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const STREAMS = 8;
/** Tokens per request: the prompt's words come back one response each. */
const TOKENS = 32;

interface Window {
  readonly side: 'A' | 'B';
  readonly kind: 'live c=1' | 'stream';
  readonly round: number;
  readonly perSec: number;
  /** Node CPU (all threads) per call (live) or per response (stream), µs. */
  readonly nodeUs: number;
  readonly p50Us?: number;
  readonly p99Us?: number;
}

async function nodeCpuUs(pid: number): Promise<number> {
  return (await readThreadCpu(pid)).reduce((sum, t) => sum + t.cpuSeconds, 0) * 1e6;
}

async function liveWindow(node: RunningNode, seconds: number): Promise<Omit<Window, 'side' | 'kind' | 'round'>> {
  const client = new Client(`127.0.0.1:${node.grpcPort}`, credentials.createInsecure());
  try {
    const request = create(ServerLiveRequestSchema);
    for (let i = 0; i < 200; i++) await callUnary(client, svc.serverLive, request);
    const times: number[] = [];
    const cpu0 = await nodeCpuUs(node.pid);
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t0 = performance.now();
      await callUnary(client, svc.serverLive, request);
      times.push((performance.now() - t0) * 1000);
    }
    const cpu = (await nodeCpuUs(node.pid)) - cpu0;
    const sorted = [...times].sort((a, b) => a - b);
    return { perSec: times.length / seconds, nodeUs: cpu / times.length, p50Us: percentile(sorted, 50), p99Us: percentile(sorted, 99) };
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
async function streamWindow(node: RunningNode, seconds: number): Promise<Omit<Window, 'side' | 'kind' | 'round'>> {
  const client = new Client(`127.0.0.1:${node.grpcPort}`, credentials.createInsecure());
  const m = svc.modelStreamInfer;
  let counting = false;
  let responses = 0;
  let stopping = false;
  const streams = Array.from({ length: STREAMS }, () => {
    const stream = client.makeBidiStreamRequest(m.path, (b: Uint8Array) => Buffer.from(b), m.responseDeserialize, new Metadata());
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
    const cpu0 = await nodeCpuUs(node.pid);
    counting = true;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    counting = false;
    const cpu = (await nodeCpuUs(node.pid)) - cpu0;
    stopping = true;
    await Promise.all(streams);
    return { perSec: responses / seconds, nodeUs: cpu / Math.max(1, responses) };
  } finally {
    client.close();
  }
}

async function main(): Promise<void> {
  const [aDir, bDir, roundsText = '3', windowText = '4', out] = process.argv.slice(2);
  if (aDir === undefined || bDir === undefined) throw new Error('usage: node-grpc-front-ab.ts A_BUNDLE[+ARG] B_BUNDLE[+ARG] [ROUNDS] [WINDOW_S] [OUT.json]');
  const support = perCoreSupport();
  if (!support.ok) {
    process.stdout.write(`skipped: ${support.why}\n`);
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'tessera-front-ab-'));
  const nodes: Partial<Record<'A' | 'B', RunningNode>> = {};
  try {
    await writeExampleRepository(work, { only: ['token_stream'] });
    await writeFile(join(work, 'token_stream', 'config.pbtxt'), tokenStreamConfigText({ tokenDelayMs: 0 }));
    for (const [side, dirWithArgs] of [['A', aDir], ['B', bDir]] as const) {
      const [dir, ...extraArgs] = dirWithArgs.split('+');
      process.env.TESSERA_BUNDLE_DIR = dir;
      nodes[side] = await launchNode({ modelRepository: work, pinCore: 0, extraArgs });
      await waitForModelReady(nodes[side].httpBase, 'token_stream');
    }
    pinProcess(process.pid, 1);
    const windows: Window[] = [];
    const rounds = Number(roundsText);
    const seconds = Number(windowText);
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const);
      for (const kind of ['live c=1', 'stream'] as const) {
        for (const side of order) {
          const w = kind === 'stream' ? await streamWindow(nodes[side]!, seconds) : await liveWindow(nodes[side]!, seconds);
          windows.push({ side, kind, round, ...w });
          process.stderr.write(`round ${round} ${kind} ${side}: ${w.perSec.toFixed(0)}/s, node ${w.nodeUs.toFixed(0)} us each${w.p50Us === undefined ? '' : `, p50 ${w.p50Us.toFixed(0)} us`}\n`);
        }
      }
    }
    const lines = ['| call | side | median /s | median node µs each | median p50 µs | median p99 µs | windows |', '| --- | --- | --- | --- | --- | --- | --- |'];
    for (const kind of ['live c=1', 'stream'] as const) {
      for (const side of ['A', 'B'] as const) {
        const mine = windows.filter((w) => w.side === side && w.kind === kind);
        const med = (pick: (w: Window) => number | undefined): string => {
          const values = mine.map(pick).filter((v): v is number => v !== undefined);
          return values.length === 0 ? '-' : median(values).toFixed(0);
        };
        lines.push(`| ${kind} | ${side} | ${med((w) => w.perSec)} | ${med((w) => w.nodeUs)} | ${med((w) => w.p50Us)} | ${med((w) => w.p99Us)} | ${mine.length} |`);
      }
    }
    const table = lines.join('\n');
    process.stdout.write(`A = ${aDir}\nB = ${bDir}\n${table}\n`);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), a: aDir, b: bDir, rounds, windowS: seconds, streams: STREAMS, tokens: TOKENS, windows, table }, null, 2)}\n`);
  } finally {
    await Promise.all([nodes.A?.stop(), nodes.B?.stop()]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
