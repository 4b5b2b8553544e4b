/** How the gateway reaches a node: gRPC on Node, KServe v2 HTTP on Workers. */
import type { CancelSignal } from '../http/cancellation.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { TraceContext } from '../../../../shared/src/tracing/index.js';
import type { NodeView } from './node-directory.js';

export interface UpstreamCallOptions {
  /** Absolute deadline (ms since epoch); becomes the gRPC deadline. */
  readonly deadline: number;
  /** Triton `priority` parameter for the node's batcher. */
  readonly priority?: number;
  /** Triton `timeout` parameter (µs) for the node's queue. */
  readonly timeoutUs?: number;
  readonly signal?: CancelSignal;
  /** The caller's span: sent as W3C `traceparent`/`tracestate` (gRPC metadata, HTTP headers); default none. */
  readonly trace?: TraceContext;
}

export interface UpstreamInferResult {
  readonly response: InferResponse;
  /** Node load from trailing metadata, when the node sent it. */
  readonly load?: { readonly queued: number; readonly inflight: number };
  /** Node-side compute time for this request in microseconds, when known. */
  readonly computeUs?: number;
}

export interface NodeTransport {
  infer(node: NodeView, request: InferRequest, options: UpstreamCallOptions): Promise<UpstreamInferResult>;
  /**
   * A request of a decoupled model: every response handed to `onResponse` as the node sends it; resolves
   * with the final one. Absent on transports that cannot stream (the dispatcher then answers UNSUPPORTED).
   */
  streamInfer?(node: NodeView, request: InferRequest, options: UpstreamCallOptions, onResponse: (response: InferResponse) => void): Promise<UpstreamInferResult>;
  /** Model config as Triton's /config JSON. */
  modelConfig(node: NodeView, model: string, version: string | undefined, options: UpstreamCallOptions): Promise<unknown>;
  /** Model metadata as Triton's HTTP JSON. */
  modelMetadata(node: NodeView, model: string, version: string | undefined, options: UpstreamCallOptions): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Errors a transport throws are TesseraErrors. `notAccepted: true` marks failures before the node
 * accepted the request (connection refused, UNAVAILABLE at connect): only those may be retried once
 * on another node.
 */
export interface TransportFailure {
  readonly notAccepted: boolean;
}
