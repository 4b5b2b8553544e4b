/** One measured point of a served model: a closed-loop run joined with the node's statistics delta. */
import type { ClosedLoopResult } from './closed-loop.js';
import type { LatencySummary } from '../sampling/percentiles.js';
import type { StatsDelta } from '../sampling/node-stats.js';

export interface LoadPoint {
  readonly model: string;
  readonly protocol: 'http' | 'grpc';
  /** Which server setup served it, e.g. "batched" or "unbatched". */
  readonly setup: string;
  /** Closed loop: callers; open loop: the cap on outstanding requests. */
  readonly concurrency: number;
  /** Open loop only: the offered request rate (requests/s). */
  readonly requestRate?: number;
  /** Every request carries one batch element, so inferences/s = requests/s. */
  readonly inferencesPerSec: number;
  readonly latency: LatencySummary;
  readonly clientSendUs: number;
  readonly clientRecvUs: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly windowS: number;
  readonly server: StatsDelta;
  /** Where the machine's CPU went, per inference, when the bench could read it (Linux /proc). */
  readonly cpu?: CpuPerInference;
}

/** CPU microseconds per inference over the measurement window, by process (and thread). */
export interface CpuPerInference {
  /** The node's main thread: HTTP/gRPC, decoding, batching, encoding (its event loop). */
  readonly nodeMainUs: number;
  /** The node's other threads: onnxruntime's intra-op threads above all, then libuv and the GC's helpers. */
  readonly nodeOtherUs: number;
  /** The load generator (this process): its clients' encoding, sockets and decoding. */
  readonly clientUs: number;
}

export function loadPoint(
  what: Pick<LoadPoint, 'model' | 'protocol' | 'setup'>,
  run: ClosedLoopResult,
  server: StatsDelta,
): LoadPoint {
  return {
    ...what,
    concurrency: run.concurrency,
    inferencesPerSec: run.requestsPerSec,
    latency: run.latency,
    clientSendUs: run.clientSendUs,
    clientRecvUs: run.clientRecvUs,
    errors: run.errors,
    ...(run.firstError !== undefined && run.errors > 0 ? { firstError: run.firstError } : {}),
    windowS: run.windowS,
    server,
  };
}
