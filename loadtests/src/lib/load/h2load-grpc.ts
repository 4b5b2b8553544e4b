/**
 * A gRPC unary closed loop driven by nghttp2's `h2load` (C, one connection, N streams in flight) instead of this
 * process's node:http2 client. Why: in the per-core bench the load generator shares the box's memory system with
 * the node on core 0, and our client spends ~220 µs of core 1 per gRPC call (decoding and checking each answer)
 * against ~60 over HTTP; h2load spends a few µs. It does not read gRPC trailers, so the caller checks one answer
 * with a checked client first and counts failures from the node's own statistics.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { toBinary } from '@bufbuild/protobuf';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage, inferRequestToProto } from '../../../../shared/src/grpc/index.js';
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

/** The framed ModelInferRequest h2load sends as every call's body. */
export async function writeGrpcBody(path: string, request: InferRequest): Promise<void> {
  await writeFile(path, frameGrpcMessage(toBinary(ModelInferRequestSchema, inferRequestToProto(request))));
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

/** Runs h2load on `core` against `host:port` for warm-up + measure, sampling at the window's edges. */
export async function runH2loadGrpc(
  o: { host: string; port: number; bodyPath: string; concurrency: number; warmupMs: number; measureMs: number; core: number },
  window: H2loadWindow,
): Promise<H2loadRun> {
  const totalS = Math.ceil((o.warmupMs + o.measureMs) / 1000) + 1;
  const args = [
    ...['-c', '1', '-m', String(o.concurrency), '-D', String(totalS)],
    ...['-w', String(WINDOW_BITS), '-W', String(WINDOW_BITS)],
    ...['-H', 'content-type: application/grpc', '-H', 'te: trailers', '-d', o.bodyPath],
    `http://${o.host}:${o.port}${MODEL_INFER_PATH}`,
  ];
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
  const mean = /time for request:\s+\S+\s+\S+\s+(\d+(?:\.\d+)?)(us|ms|s)\s/.exec(text);
  if (counts === null) throw new Error(`h2load printed no summary: ${text.slice(-400)}`);
  const scale = mean?.[2] === 'ms' ? 1000 : mean?.[2] === 's' ? 1e6 : 1;
  const failed = Number(counts[2]) + Number(counts[3]) + Number(counts[4]);
  return { requests: Number(counts[1]), failed, meanUs: mean === null ? Number.NaN : Number(mean[1]) * scale };
}
