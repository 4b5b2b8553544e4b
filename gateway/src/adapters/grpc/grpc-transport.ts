/**
 * NodeTransport over gRPC (`inference.GRPCInferenceService`, @grpc/grpc-js): how the gateway on Node
 * reached nodes before h2-transport.ts, kept selectable (config `grpcTransport: "grpc-js"`) until the
 * new one has run in a release. Both share one contract (grpc-transport.test.ts runs it for each).
 *
 * - One channel (grpc-js Client) per node, created on first use, replaced when the node's address
 *   changes, closed when the node leaves (`fleetEvents`) or on `closeNode` / `close`.
 * - Every call carries the request's deadline as the gRPC deadline; an already passed deadline fails
 *   at once with DEADLINE_EXCEEDED without touching the network.
 * - Infer requests get Triton's `priority` and `timeout` (µs) parameters from the call options,
 *   replacing the client's own (the dispatcher computed them from the tier and the deadline).
 * - Aborting `signal` cancels the call (`call.cancel()`); the node sees the cancellation.
 * - Trailing metadata `tessera-queue-depth` / `tessera-inflight` become `load`, on success and failure
 *   (load-trailer.ts).
 * - Errors: grpc-errors.ts (codes via errorCodeFromGrpc, the `notAccepted` heuristic).
 * - Every call runs through the node's circuit breaker (node-breakers.ts, guarded-call.ts).
 * - The caller's span (`opts.trace`) travels as W3C `traceparent`/`tracestate` metadata.
 */
import { Client, Metadata, credentials } from '@grpc/grpc-js';
import type { ChannelOptions, MethodDefinition, ServiceError, StatusObject } from '@grpc/grpc-js';
import { create } from '@bufbuild/protobuf';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  GRPCInferenceService,
  ModelConfigRequestSchema,
  ModelMetadataRequestSchema,
} from '../../../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition, inferRequestToProto, inferResponseFromProto } from '../../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { modelConfigToTritonJson } from '../../../../shared/src/model-config/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { traceHeaders } from '../../../../shared/src/tracing/index.js';
import type { FleetChangeSource, NodeView, UpstreamCallOptions, UpstreamInferResult } from '../../core/ports/index.js';
import { withCallParameters } from './call-parameters.js';
import { decodeNodeAnswer, grpcAddressOf, upstreamErrorFromGrpc } from './grpc-errors.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import type { NodeLoad } from './grpc-errors.js';
import { guardedCall } from './guarded-call.js';
import { INFLIGHT_TRAILER, QUEUE_DEPTH_TRAILER, loadFromTrailer } from './load-trailer.js';
import { modelMetadataToTritonJson } from './metadata-json.js';
import { createNodeBreakers } from './node-breakers.js';
import type { NodeBreakerOptions, NodeBreakers } from './node-breakers.js';

export interface GrpcTransportOptions {
  /** Default: silent. */
  readonly logger?: Logger;
  /** Ping period on a connection; default 30000 ms. */
  readonly keepaliveTimeMs?: number;
  /** How long a ping may go unanswered before the connection is dropped; default 10000 ms. */
  readonly keepaliveTimeoutMs?: number;
  /** Extra grpc-js channel options, applied last; default none. */
  readonly channelOptions?: ChannelOptions;
  /** The breakers to use; default: new ones with `breaker` options. */
  readonly breakers?: NodeBreakers;
  /** Options for the breakers created when `breakers` is not given; defaults in node-breakers.ts. */
  readonly breaker?: NodeBreakerOptions;
  /** Fleet changes: a node's channel and breaker are dropped when it leaves. Default: none. */
  readonly fleetEvents?: FleetChangeSource;
}

const service = clientServiceDefinition(GRPCInferenceService);

interface Channel {
  readonly address: string;
  readonly client: Client;
}

interface UnaryOutcome<O> {
  readonly response: O;
  readonly trailer: Metadata;
}

/** W3C trace context of the caller's span, as gRPC metadata (`traceparent`, `tracestate`). */
function outgoingMetadata(opts: UpstreamCallOptions): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(traceHeaders(opts.trace))) metadata.set(name, value);
  return metadata;
}

export function createGrpcTransport(options: GrpcTransportOptions = {}): GrpcTransport {
  const logger = (options.logger ?? silentLogger).child({ component: 'grpc-transport' });
  const breakers = options.breakers ?? createNodeBreakers(options.breaker);
  const channelOptions: ChannelOptions = {
    'grpc.keepalive_time_ms': options.keepaliveTimeMs ?? 30_000,
    'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs ?? 10_000,
    // Tensors can be large: the node enforces its own limits, the gateway does not add another.
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
    ...options.channelOptions,
  };
  const channels = new Map<string, Channel>();

  function channelFor(node: NodeView): Client {
    const address = grpcAddressOf(node);
    const existing = channels.get(node.id);
    if (existing?.address === address) return existing.client;
    existing?.client.close();
    const client = new Client(address, credentials.createInsecure(), channelOptions);
    channels.set(node.id, { address, client });
    logger.verbose(1, 'channel opened', { nodeId: node.id, address });
    return client;
  }

  function closeNode(nodeId: string): void {
    channels.get(nodeId)?.client.close();
    channels.delete(nodeId);
    breakers.remove(nodeId);
  }

  const unsubscribe = options.fleetEvents?.onChange((change) => {
    if (change.type === 'leave') closeNode(change.nodeId);
  });

  function loadOf(trailer: Metadata | undefined): NodeLoad | undefined {
    if (trailer === undefined) return undefined;
    return loadFromTrailer(trailer.get(QUEUE_DEPTH_TRAILER)[0], trailer.get(INFLIGHT_TRAILER)[0]);
  }

  /** One unary call; rejects with an UpstreamError (TesseraError + notAccepted/load). */
  function call<I, O>(node: NodeView, method: MethodDefinition<I, O>, request: I, opts: UpstreamCallOptions): Promise<UnaryOutcome<O>> {
    return new Promise((resolve, reject) => {
      let client: Client;
      try {
        client = channelFor(node);
      } catch (error) {
        return reject(error);
      }
      let headersReceived = false;
      let response: O | undefined;
      let failure: ServiceError | undefined;
      let status: StatusObject | undefined;
      let pending = 2;
      const onAbort = (): void => grpcCall.cancel();
      // The callback and the 'status' event come in either order; settle once both are in.
      const settle = (): void => {
        if (--pending > 0) return;
        opts.signal?.removeEventListener('abort', onAbort);
        const trailer = status?.metadata ?? failure?.metadata;
        if (failure === undefined) return resolve({ response: response as O, trailer: trailer ?? new Metadata() });
        reject(upstreamErrorFromGrpc(failure, node.id, headersReceived, loadOf(trailer)));
      };
      const grpcCall = client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        outgoingMetadata(opts),
        { deadline: opts.deadline },
        (error, value) => {
          if (error) failure = error;
          else response = value;
          settle();
        },
      );
      grpcCall.on('metadata', () => {
        headersReceived = true;
      });
      grpcCall.on('status', (s: StatusObject) => {
        status = s;
        settle();
      });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  const guarded = <T>(node: NodeView, opts: UpstreamCallOptions, run: () => Promise<T>): Promise<T> => guardedCall(breakers, node, opts, run);

  return {
    breakers,
    closeNode,

    infer(node: NodeView, request: InferRequest, opts: UpstreamCallOptions): Promise<UpstreamInferResult> {
      return guarded(node, opts, async () => {
        const message = inferRequestToProto(withCallParameters(request, opts));
        const { response, trailer } = await call(node, service.modelInfer, message, opts);
        const load = loadOf(trailer);
        return { response: decodeNodeAnswer(node.id, () => inferResponseFromProto(response)), ...(load ? { load } : {}) };
      });
    },

    modelConfig(node, model, version, opts) {
      return guarded(node, opts, async () => {
        const request = create(ModelConfigRequestSchema, { name: model, version: version ?? '' });
        const { response } = await call(node, service.modelConfig, request, opts);
        if (response.config === undefined) throw TesseraError.badGateway(`node '${node.id}' sent no config for model '${model}'`);
        return modelConfigToTritonJson(response.config);
      });
    },

    modelMetadata(node, model, version, opts) {
      return guarded(node, opts, async () => {
        const request = create(ModelMetadataRequestSchema, { name: model, version: version ?? '' });
        const { response } = await call(node, service.modelMetadata, request, opts);
        return modelMetadataToTritonJson(response);
      });
    },

    async close() {
      unsubscribe?.();
      for (const channel of channels.values()) channel.client.close();
      channels.clear();
      if (options.breakers === undefined) breakers.close();
    },
  };
}
