/**
 * The node's gRPC port on the raw HTTP/2 front (shared/src/http/raw-http2) instead of grpc-js's
 * node:http2 server (`--grpc-raw-h2`). Plain unary calls are served in place: ModelInfer by the same fast
 * path as with grpc-js (h2-model-infer.ts: same decoding, `core.infer`, answer, load trailers, statuses),
 * the other unary RPCs and health Check by in-place-unary.ts with grpc-js's handlers' own logic,
 * ModelStreamInfer by stream-infer-in-place.ts with grpc-js's own stream handler. Every other stream
 * (compressed or restricted calls, unknown methods, anything `take` declines) is relayed unchanged to
 * grpc-js listening on a loopback port, over one node:http2 client session per front connection, so
 * grpc-js answers everything it answered before.
 *
 * Why: under the mlp_large [64] wave, node:http2's own per-stream work is ~86 µs of the main thread per
 * call that a plain net.Server reading HTTP/2 itself does not spend (docs/benchmarks.md, issue 18,
 * 2026-11-27d).
 */
import { rawH2TakingFront, type RawH2Limits, type RawStreamTaker, type TakingFront } from '../../../../shared/src/http/raw-http2/index.js';
import { DEFAULT_FLOW_CONTROL_WINDOW } from './flow-control.js';

export type RawH2GrpcFront = TakingFront;

/** `take` serves what it can in place; the rest goes to grpc-js at 127.0.0.1:`internalPort`. */
export function rawH2GrpcFront(take: RawStreamTaker, internalPort: number, limits: Partial<RawH2Limits> = {}): RawH2GrpcFront {
  // Both windows as grpc-js's own port has them (flow-control.ts widens them past node:http2's 64 KiB).
  return rawH2TakingFront(take, internalPort, { limits: { windowBytes: DEFAULT_FLOW_CONTROL_WINDOW, ...limits }, relayWindowBytes: DEFAULT_FLOW_CONTROL_WINDOW });
}
