/**
 * The gateway's node transport with an HTTP client's infer misses sent as raw HTTP/1.1 to the node's
 * HTTP port (issue 17): one corked write on a kept-alive socket (raw-infer-exchange.ts), which the
 * kernel has before the call returns, where node:http2 sends after the macrotask; the node reads it
 * with its own strict HTTP/1.1 reader. Everything else goes to the gRPC transport it wraps: a gRPC
 * client's request (forwarded as received), decoupled models' streams, metadata and config, a node
 * without an HTTP address, a model name that would need escaping in a path, a parameter the node's
 * JSON reader cannot hold exactly (a numeric node-level sequence id is 63 bits), and every call beyond
 * `rawBelowCalls` in flight to one node (HTTP/2 then carries many calls per socket read).
 *
 * What the gRPC path guarantees holds here: the same breakers (guarded-call.ts), deadline (sent as
 * `x-tessera-deadline-ms`, enforced here too), `priority` / `timeout` parameters (as call-parameters.ts sets them),
 * trace headers, cancellation (the socket is destroyed: the node sees its client go), retry only when
 * the connection never came up, the node's load report (its answer's `tessera-queue-depth` /
 * `tessera-inflight` headers, success and failure), errors mapped from the node's status to the codes
 * the gRPC statuses give, an answer the gateway cannot read → BAD_GATEWAY. The answer's binary outputs
 * are views of the node's body: a binary-asking client gets them framed as it asked, not re-encoded.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { HTTP_FIELD_VALUE } from '../../../../shared/src/http/index.js';
import { decodeInferResponseBody, httpErrorFromResponse } from '../../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { traceHeaders } from '../../../../shared/src/tracing/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import type { NodeView, UpstreamCallOptions, UpstreamInferResult } from '../../core/ports/index.js';
import { decodeNodeAnswer } from '../grpc/grpc-errors.js';
import type { GrpcTransport } from '../grpc/grpc-node-transport.js';
import { guardedCall } from '../grpc/guarded-call.js';
import { DEFAULT_MAX_NODE_ANSWER_BYTES } from '../grpc/h2-transport.js';
import { INFLIGHT_TRAILER, QUEUE_DEPTH_TRAILER, loadFromTrailer } from '../grpc/load-trailer.js';
import { exchange } from './raw-infer-exchange.js';
import { inferPathOf, jsonExact, renderInferRequest } from './raw-infer-request.js';
import { RawRequestBytes, UnsafeRequest } from './raw-request-bytes.js';
import { RawSocketPool } from './raw-socket-pool.js';
import { deadlineBeforeAnswer } from '../../core/routing/upstream-errors.js';

export interface RawInferUpstreamOptions {
  readonly grpc: GrpcTransport;
  /** Calls in flight to one node under which an eligible infer goes raw; 0: never. */
  readonly rawBelowCalls: number;
  /** Largest answer body; larger ones fail BAD_GATEWAY. Default DEFAULT_MAX_NODE_ANSWER_BYTES (h2-transport.ts). */
  readonly maxAnswerBytes?: number;
  /** Idle sockets kept per node; default 64. */
  readonly maxIdlePerNode?: number;
}

export function createRawInferUpstream(options: RawInferUpstreamOptions): GrpcTransport {
  const { grpc, rawBelowCalls } = options;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_NODE_ANSWER_BYTES;
  const pool = new RawSocketPool(options.maxIdlePerNode ?? 64);
  const heads = new RawRequestBytes();
  const inFlight = new Map<string, number>();

  function rawPath(node: NodeView, request: InferRequest): string | undefined {
    if (node.httpAddress === null || request.forwardable !== undefined) return undefined;
    if ((inFlight.get(node.id) ?? 0) >= rawBelowCalls || !jsonExact(request)) return undefined;
    return inferPathOf(request.modelName, request.modelVersion);
  }

  async function send(node: NodeView, address: string, path: string, request: InferRequest, opts: UpstreamCallOptions): Promise<UpstreamInferResult> {
    const lines = [`${DEADLINE_HEADER}: ${Math.max(0, Math.floor(opts.deadline - Date.now()))}\r\n`];
    const trace = traceHeaders(opts.trace);
    for (const [name, value] of Object.entries(trace)) {
      if (typeof value === 'string' && HTTP_FIELD_VALUE.test(value)) lines.push(`${name}: ${value}\r\n`);
    }
    let chunks: Uint8Array[];
    try {
      chunks = renderInferRequest(heads, address, path, request, lines, opts);
    } catch (error) {
      if (error instanceof UnsafeRequest) throw Object.assign(TesseraError.invalidArg(error.message), { notAccepted: false });
      throw error;
    }
    const answer = await exchange(pool, { nodeId: node.id, address, chunks, deadline: opts.deadline, maxAnswerBytes, ...(opts.signal ? { signal: opts.signal } : {}) });
    const load = loadFromTrailer(answer.headers[QUEUE_DEPTH_TRAILER], answer.headers[INFLIGHT_TRAILER]);
    if (answer.status !== 200) {
      const error = answer.status === 504 ? deadlineBeforeAnswer(node.id) : httpErrorFromResponse(answer.status, answer.body);
      throw Object.assign(error, { notAccepted: false, ...(load ? { load } : {}) });
    }
    const response = decodeNodeAnswer(node.id, () => decodeInferResponseBody(answer.body, answer.headers['inference-header-content-length'] ?? null));
    return { response, ...(load ? { load } : {}) };
  }

  return {
    breakers: grpc.breakers,
    closeNode: (nodeId) => grpc.closeNode(nodeId),

    infer(node, request, opts) {
      const path = rawPath(node, request);
      if (path === undefined) return grpc.infer(node, request, opts);
      inFlight.set(node.id, (inFlight.get(node.id) ?? 0) + 1);
      return guardedCall(grpc.breakers, node, opts, () => send(node, node.httpAddress!, path, request, opts)).finally(() => {
        const left = (inFlight.get(node.id) ?? 1) - 1;
        if (left <= 0) inFlight.delete(node.id);
        else inFlight.set(node.id, left);
      });
    },

    ...(grpc.streamInfer === undefined ? {} : { streamInfer: grpc.streamInfer.bind(grpc) }),
    modelConfig: (node, model, version, opts) => grpc.modelConfig(node, model, version, opts),
    modelMetadata: (node, model, version, opts) => grpc.modelMetadata(node, model, version, opts),

    async close() {
      pool.close();
      await grpc.close();
    },
  };
}
