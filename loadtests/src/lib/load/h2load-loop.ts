/**
 * A closed loop of one prepared request driven by nghttp2's `h2load` (C) instead of this process's clients: gRPC
 * unary calls as N streams on one HTTP/2 connection (as Triton's client shares a channel), KServe HTTP binary
 * requests as N HTTP/1.1 keep-alive connections (as perf_analyzer opens). Why: in the per-core bench the load
 * generator shares the box's memory system with the node on core 0, and our clients spend ~220 µs (gRPC) and ~60 µs
 * (HTTP) of core 1 per `mlp_large` call decoding and checking each answer; h2load spends 10-20. It reads neither
 * answers nor gRPC trailers, so the caller checks one answer with a checked client first and counts failures from
 * the node's own statistics.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { toBinary } from '@bufbuild/protobuf';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage, inferRequestToProto } from '../../../../shared/src/grpc/index.js';
import { encodeInferRequestBody } from '../../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { pinnedCommand } from '../per-core/index.js';

const MODEL_INFER_PATH = `/${GRPCInferenceService.typeName}/${GRPCInferenceService.method.modelInfer.name}`;
/** As the node:http2 client: answers of a burst must not wait for WINDOW_UPDATE round trips. */
const WINDOW_BITS = 24;

export interface H2loadWindow {
  /** Called when the warm-up ends and when the measured window ends (sample the node there). */
  readonly onWindowStart: () => Promise<void>;
  readonly onWindowEnd: () => Promise<void>;
}

export interface H2loadRun {
  /** Calls h2load finished over the whole run (warm-up included), and those it counted failed, errored or timed out. */
  readonly requests: number;
  readonly failed: number;
  /** Seconds between the two samples. */
  readonly windowS: number;
  /** h2load's own CPU over the measured window, microseconds. */
  readonly clientCpuUs: number;
  /** Mean time per request h2load reports (whole run), microseconds. */
  readonly meanUs: number;
}

/** Whether `h2load` runs here (Debian: `nghttp2-client`). */
export function h2loadAvailable(): boolean {
  const probe = spawnSync('h2load', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** What h2load sends, over and over: where, with which headers and body, over which protocol. */
export interface H2loadTarget {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  /** HTTP/1.1, one request in flight per connection; otherwise HTTP/2 streams on one connection. */
  readonly http1: boolean;
}

/** A gRPC ModelInfer call: the framed ModelInferRequest, POSTed as gRPC over HTTP/2. */
export function grpcInferTarget(host: string, port: number, request: InferRequest): H2loadTarget {
  return {
    url: `http://${host}:${port}${MODEL_INFER_PATH}`,
    headers: { 'content-type': 'application/grpc', te: 'trailers' },
    body: frameGrpcMessage(toBinary(ModelInferRequestSchema, inferRequestToProto(request))),
    http1: false,
  };
}

/** A KServe HTTP infer with inputs and outputs in the binary extension, as the bench's HTTP client sends it. */
export function httpBinaryInferTarget(host: string, port: number, request: InferRequest): H2loadTarget {
  const encoded = encodeInferRequestBody(request, { binaryInputs: true, binaryDataOutput: true });
  return { url: `http://${host}:${port}/v2/models/${encodeURIComponent(request.modelName)}/infer`, headers: encoded.headers, body: encoded.body, http1: true };
}

async function processCpuUs(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 1e4; // utime + stime, 100 ticks a second
  } catch {
    return Number.NaN;
  }
}

/** Runs h2load on `core` with `concurrency` requests in flight for warm-up + measure, sampling at the window's edges. */
export async function runH2load(
  o: { target: H2loadTarget; bodyPath: string; concurrency: number; warmupMs: number; measureMs: number; core: number },
  window: H2loadWindow,
): Promise<H2loadRun> {
  await writeFile(o.bodyPath, o.target.body);
  const totalS = Math.ceil((o.warmupMs + o.measureMs) / 1000) + 1;
  const shape = o.target.http1 ? ['--h1', '-c', String(o.concurrency), '-m', '1'] : ['-c', '1', '-m', String(o.concurrency), '-w', String(WINDOW_BITS), '-W', String(WINDOW_BITS)];
  const headers = Object.entries(o.target.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const args = [...shape, '-D', String(totalS), ...headers, '-d', o.bodyPath, o.target.url];
  const [cmd, cmdArgs] = pinnedCommand(o.core, 'h2load', args);
  const child = spawn(cmd, cmdArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  await sleep(o.warmupMs);
  await window.onWindowStart();
  const started = performance.now();
  const cpuBefore = await processCpuUs(child.pid ?? -1);
  await sleep(o.measureMs);
  const cpuAfter = await processCpuUs(child.pid ?? -1);
  await window.onWindowEnd();
  const windowS = (performance.now() - started) / 1000;
  const code = await exited;
  if (code !== 0) throw new Error(`h2load exited ${String(code)}: ${out.slice(-400)}`);
  return { ...parseH2load(out), windowS, clientCpuUs: cpuAfter - cpuBefore };
}

/** The counts and mean latency from h2load's summary. */
export function parseH2load(text: string): { requests: number; failed: number; meanUs: number } {
  const counts = /requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(text);
  const statuses = /status codes: \d+ 2xx, \d+ 3xx, (\d+) 4xx, (\d+) 5xx/.exec(text);
  const mean = /time for request:\s+\S+\s+\S+\s+(\d+(?:\.\d+)?)(us|ms|s)\s/.exec(text);
  if (counts === null) throw new Error(`h2load printed no summary: ${text.slice(-400)}`);
  const scale = mean?.[2] === 'ms' ? 1000 : mean?.[2] === 's' ? 1e6 : 1;
  // A 4xx or 5xx answer is a failure too, whether or not h2load counted it as one.
  const failed = Math.max(Number(counts[2]), Number(statuses?.[1] ?? 0) + Number(statuses?.[2] ?? 0)) + Number(counts[3]) + Number(counts[4]);
  return { requests: Number(counts[1]), failed, meanUs: mean === null ? Number.NaN : Number(mean[1]) * scale };
}
