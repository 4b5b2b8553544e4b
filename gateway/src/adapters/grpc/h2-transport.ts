/**
 * NodeTransport over gRPC (`inference.GRPCInferenceService`) spoken directly on our own HTTP/2 client
 * (shared/src/http/raw-http2/client-*.ts): the gateway's way to reach nodes. It replaced a grpc-js
 * transport, then node:http2's client (both retired in issue 17), at a fraction of their CPU per call:
 * grpc-js runs every call through its channel, load-balancer, interceptor and metadata machinery, while
 * a call needs one HTTP/2 stream. Its contract is grpc-transport.test.ts and h2-transport.test.ts.
 *
 * - One HTTP/2 connection per node for every call, unary and streamed (h2-node-connection.ts: keepalive
 *   pings, reconnect with backoff, GOAWAY, wide flow-control windows), created on first use, replaced when the node's address
 *   changes, closed when the node leaves (`fleetEvents`) or on `closeNode` / `close`.
 * - Each call (h2-unary-call.ts) carries the request's deadline as `grpc-timeout` and enforces it
 *   locally; an already passed deadline fails at once with DEADLINE_EXCEEDED without touching the
 *   network. Aborting `signal` resets the stream (RST_STREAM CANCEL): the node sees the cancellation.
 * - Infer requests get Triton's `priority` and `timeout` (µs) parameters from the call options,
 *   replacing the client's own (call-parameters.ts), and are encoded straight to protobuf bytes
 *   (shared/src/grpc/infer-request-encoder.ts; large tensors are sent from the caller's memory); a
 *   gRPC client's request goes as it was received, the gateway's fields appended after it.
 * - Trailing metadata `tessera-queue-depth` / `tessera-inflight` become `load`, on success and failure.
 * - Errors: grpc-errors.ts, with `notAccepted` known exactly rather than guessed from a message.
 * - Every call runs through the node's circuit breaker (node-breakers.ts, guarded-call.ts).
 * - A decoupled model's request goes over its own upstream ModelStreamInfer call (h2-stream-infer.ts).
 * - The caller's span (`opts.trace`) travels as W3C `traceparent`/`tracestate` headers.
 * - Message sizes: unlimited by default, as the grpc-js transport is configured (the node enforces
 *   its own limits); `maxReceiveMessageBytes` / `maxSendMessageBytes` bound them.
 */
import { create } from '@bufbuild/protobuf';
import { GrpcStatus, TesseraError } from '../../../../shared/src/errors/index.js';
import {
  GRPCInferenceService,
  ModelConfigRequestSchema,
  ModelMetadataRequestSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import {
  clientServiceDefinition,
  CORKED_VIEW_BYTES,
  encodeForwardedInferRequestFramed,
  encodeInferRequestFramed,
  frameGrpcMessage,
  rememberReceivedResponse,
} from '../../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { modelConfigToTritonJson } from '../../../../shared/src/model-config/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { traceHeaders } from '../../../../shared/src/tracing/index.js';
import type { FleetChangeSource, NodeView, UpstreamCallOptions, UpstreamInferResult } from '../../core/ports/index.js';
import { withCallParameters } from './call-parameters.js';
import { decodeNodeAnswer, grpcAddressOf, upstreamError } from './grpc-errors.js';
import type { NodeLoad } from './grpc-errors.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { guardedCall } from './guarded-call.js';
import { NodeConnection, type BackoffOptions, type NodeConnectionOptions } from './h2-node-connection.js';
import { streamInferCall } from './h2-stream-infer.js';
import { unaryCall } from './h2-unary-call.js';
import { readNodeAnswer } from './infer-response-reader.js';
import { modelMetadataToTritonJson } from './metadata-json.js';
import { createNodeBreakers } from './node-breakers.js';
import type { NodeBreakerOptions, NodeBreakers } from './node-breakers.js';

export interface H2TransportOptions {
  /** Default: silent. */
  readonly logger?: Logger;
  /** Ping period on a connection while calls are in flight; default 30000 ms. */
  readonly keepaliveTimeMs?: number;
  /** How long a ping may go unanswered before the connection is dropped; default 10000 ms. */
  readonly keepaliveTimeoutMs?: number;
  /** HTTP/2 receive window per stream and per connection; default 16 MiB. */
  readonly windowBytes?: number;
  /** How long connecting to a node may take; default 20000 ms. */
  readonly connectTimeoutMs?: number;
  /** Waits between failed connects to a node; defaults in h2-node-connection.ts (1 s growing to 120 s). */
  readonly backoff?: BackoffOptions;
  /** Bounds against a hostile node (frame, header and queue sizes); defaults in client-connection.ts. */
  readonly limits?: NodeConnectionOptions['limits'];
  /** Largest answer message; larger ones fail RESOURCE_EXHAUSTED. Default DEFAULT_MAX_NODE_ANSWER_BYTES. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest request message; larger ones fail RESOURCE_EXHAUSTED before they are sent. Default: unlimited. */
  readonly maxSendMessageBytes?: number;
  /** The breakers to use; default: new ones with `breaker` options. */
  readonly breakers?: NodeBreakers;
  /** Options for the breakers created when `breakers` is not given; defaults in node-breakers.ts. */
  readonly breaker?: NodeBreakerOptions;
  /** Fleet changes: a node's connection and breaker are dropped when it leaves. Default: none. */
  readonly fleetEvents?: FleetChangeSource;
}

/** What a call needs of a method: grpc-js's MethodDefinition has this shape, so the shared definitions serve both transports. */
interface UnaryMethod<I, O> {
  readonly path: string;
  requestSerialize(value: I): Buffer;
  responseDeserialize(bytes: Buffer): O;
}

/** A request ready to send: its framed body (infer-request-encoder.ts for ModelInfer) and its message size. */
interface EncodedRequest {
  readonly chunks: Uint8Array[];
  readonly messageBytes: number;
}

/** Small messages (metadata and config requests) framed after protobuf-es serialized them. */
function framed<I>(method: UnaryMethod<I, unknown>, request: I): EncodedRequest {
  const message = method.requestSerialize(request);
  return { chunks: [frameGrpcMessage(message)], messageBytes: message.length };
}

const service = clientServiceDefinition(GRPCInferenceService);

/**
 * Largest node answer the gateway reads by default, over gRPC and raw HTTP alike: far above any answer the cache
 * or a client takes whole, and a bound on what a hostile node can make the gateway hold per call.
 */
export const DEFAULT_MAX_NODE_ANSWER_BYTES = 256 * 1024 * 1024;

export function createH2Transport(options: H2TransportOptions = {}): GrpcTransport {
  const logger = (options.logger ?? silentLogger).child({ component: 'h2-transport' });
  const breakers = options.breakers ?? createNodeBreakers(options.breaker);
  const maxReceiveBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_NODE_ANSWER_BYTES;
  const maxSendBytes = options.maxSendMessageBytes ?? Number.POSITIVE_INFINITY;
  const connectionOptions = {
    ...(options.keepaliveTimeMs === undefined ? {} : { keepaliveTimeMs: options.keepaliveTimeMs }),
    ...(options.keepaliveTimeoutMs === undefined ? {} : { keepaliveTimeoutMs: options.keepaliveTimeoutMs }),
    ...(options.windowBytes === undefined ? {} : { windowBytes: options.windowBytes }),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  };
  const connections = new Map<string, NodeConnection>();

  function connectionFor(node: NodeView): NodeConnection {
    const address = grpcAddressOf(node);
    const existing = connections.get(node.id);
    if (existing?.address === address) return existing;
    existing?.close();
    const connection = new NodeConnection(address, connectionOptions);
    connections.set(node.id, connection);
    logger.verbose(1, 'connection opened', { nodeId: node.id, address });
    return connection;
  }

  function closeNode(nodeId: string): void {
    connections.get(nodeId)?.close();
    connections.delete(nodeId);
    breakers.remove(nodeId);
  }

  const unsubscribe = options.fleetEvents?.onChange((change) => {
    if (change.type === 'leave') closeNode(change.nodeId);
  });

  /** One unary call; rejects with an UpstreamError (TesseraError + notAccepted/load). */
  async function call<O, R = O>(
    node: NodeView,
    method: UnaryMethod<never, O>,
    request: EncodedRequest,
    opts: UpstreamCallOptions,
    /** Reads the answer's message; default the method's own deserializer (protobuf-es). */
    read: (message: Buffer) => R = (message) => method.responseDeserialize(message) as unknown as R,
  ): Promise<{ response: R; load: NodeLoad | undefined; message: Buffer }> {
    const connection = connectionFor(node);
    if (request.messageBytes > maxSendBytes) {
      throw upstreamError(
        { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Sent message larger than max (${request.messageBytes} vs. ${maxSendBytes})` },
        node.id,
        false,
        undefined,
      );
    }
    const trace = traceHeaders(opts.trace);
    const answer = await unaryCall(connection, node.id, {
      path: method.path,
      body: request.chunks,
      deadline: opts.deadline,
      maxReceiveBytes,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(trace.traceparent === undefined ? {} : { metadata: trace }),
    });
    const response = decodeNodeAnswer(node.id, () => read(answer.message));
    return { response, load: answer.load, message: answer.message };
  }

  return {
    breakers,
    closeNode,

    infer(node: NodeView, request: InferRequest, opts: UpstreamCallOptions): Promise<UpstreamInferResult> {
      return guardedCall(breakers, node, opts, async () => {
        const sent = withCallParameters(request, opts);
        // A gRPC client's request goes as received, the gateway's fields appended (front-infer.ts).
        const encoded = sent.forwardable === undefined ? encodeInferRequestFramed(sent, CORKED_VIEW_BYTES) : encodeForwardedInferRequestFramed(sent.forwardable, sent);
        // Read and checked in one pass (infer-response-reader.ts); a failure is the node's (decodeNodeAnswer).
        const { response, load, message } = await call(node, service.modelInfer, encoded, opts, readNodeAnswer);
        // So the gRPC front door can forward the node's bytes instead of encoding them again.
        rememberReceivedResponse(response, message);
        return { response, ...(load ? { load } : {}) };
      });
    },

    streamInfer(node, request, opts, onResponse) {
      const limits = { maxReceiveBytes, maxSendBytes };
      return guardedCall(breakers, node, opts, () => streamInferCall(connectionFor(node), node.id, request, opts, limits, onResponse));
    },

    modelConfig(node, model, version, opts) {
      return guardedCall(breakers, node, opts, async () => {
        const request = create(ModelConfigRequestSchema, { name: model, version: version ?? '' });
        const { response } = await call(node, service.modelConfig, framed(service.modelConfig, request), opts);
        if (response.config === undefined) throw TesseraError.badGateway(`node '${node.id}' sent no config for model '${model}'`);
        return modelConfigToTritonJson(response.config);
      });
    },

    modelMetadata(node, model, version, opts) {
      return guardedCall(breakers, node, opts, async () => {
        const request = create(ModelMetadataRequestSchema, { name: model, version: version ?? '' });
        const { response } = await call(node, service.modelMetadata, framed(service.modelMetadata, request), opts);
        return modelMetadataToTritonJson(response);
      });
    },

    async close() {
      unsubscribe?.();
      for (const connection of connections.values()) connection.close();
      connections.clear();
      if (options.breakers === undefined) breakers.close();
    },
  };
}
