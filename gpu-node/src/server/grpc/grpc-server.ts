/**
 * The node's gRPC endpoint (Triton's port 8001): GRPCInferenceService plus grpc.health.v1.Health,
 * both served from definitions built off the protobuf-es schemas (no proto-loader).
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { ChannelOptions } from '@grpc/grpc-js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import { Health } from '../../../../shared/src/gen/health_pb.js';
import { grpcBindAddress, grpcMessageLimit, serverServiceDefinition, takeStreamsAhead, type GrpcListener } from '../../../../shared/src/grpc/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { healthServiceImplementation, healthUnaryLogic } from './health-service.js';
import { inferenceServiceImplementation, inferenceUnaryLogic } from './inference-service.js';
import { modelStreamInferHandler } from './infer-handlers.js';
import { firstTaker, inPlaceUnary } from './in-place-unary.js';
import { widenFlowControlWindows } from './flow-control.js';
import { modelInferFastPath } from './h2-model-infer.js';
import { INFERENCE_SERVICE_CATEGORIES, restrictHandlers } from './restricted-calls.js';
import { rawH2GrpcFront, type RawH2GrpcFront } from './raw-h2-front.js';
import { streamInferInPlace } from './stream-infer-in-place.js';
import { NO_RESTRICTIONS, type Restrictions } from '../restricted-apis.js';

export const DEFAULT_GRPC_PORT = 8001;
/**
 * 64 MiB both ways: the same bound as Triton's `--http-max-input-size` default, so a request the HTTP
 * endpoint accepts is accepted here too. grpc-js's own default (4 MiB in) is too small for image batches.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * HTTP/2 streams (gRPC calls) one connection may hold open at once. Node's own default is unlimited,
 * so one client could open streams until the node runs out of memory. 1000 is far above what a
 * gateway keeps in flight to one node (admission bounds it first), and a grpc-js client that reaches
 * it queues further calls on its side until a stream closes; other connections are not affected.
 */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1000;

export interface GrpcServerOptions {
  /** Largest request and response message, in bytes (default 64 MiB). */
  readonly maxMessageBytes?: number;
  /** Concurrent HTTP/2 streams per connection, sent to clients as SETTINGS_MAX_CONCURRENT_STREAMS (default 1000). */
  readonly maxConcurrentStreams?: number;
  /** ModelStreamInfer requests of one stream executing at once before the stream stops reading (default 64). */
  readonly maxInflightPerStream?: number;
  /**
   * Server keepalive pings. Defaults are gRPC's and Triton's: a ping after 2 h idle, 20 s to answer.
   * Short intervals here would make idle clients' connections churn behind NATs for no benefit.
   */
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
  /**
   * Serve ModelInfer on the HTTP/2 stream ahead of grpc-js (h2-model-infer.ts; default true). false
   * leaves every call to grpc-js, as before it existed.
   */
  readonly modelInferFastPath?: boolean;
  /**
   * `--grpc-raw-h2` (default true): the port is the raw HTTP/2 front (raw-h2-front.ts), which serves plain
   * calls itself (ModelInfer's fast path, the other unary RPCs by in-place-unary.ts, ModelStreamInfer by
   * stream-infer-in-place.ts) and relays every other stream to grpc-js on a loopback port. false: grpc-js
   * owns the port, as before the front existed.
   */
  readonly rawH2Front?: boolean;
  /** `--grpc-restricted-protocol`: categories that need `triton-grpc-protocol-<key>` metadata (restricted-apis.ts). */
  readonly restrictedProtocols?: Restrictions;
  /** Extra grpc-js server options, applied last. */
  readonly channelOptions?: ChannelOptions;
}

export type GrpcServer = GrpcListener;

export function createGrpcServer(core: NodeCore, options: GrpcServerOptions = {}): GrpcServer {
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const serverOptions: ChannelOptions = {
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_send_message_length': maxMessageBytes,
    'grpc.max_concurrent_streams': options.maxConcurrentStreams ?? DEFAULT_MAX_CONCURRENT_STREAMS,
    'grpc.keepalive_time_ms': options.keepaliveTimeMs ?? 7_200_000,
    'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs ?? 20_000,
    ...options.channelOptions,
  };
  const server = new Server(serverOptions);
  const restrictions = options.restrictedProtocols ?? NO_RESTRICTIONS;
  const fastPathLimits = {
    maxReceiveBytes: grpcMessageLimit(serverOptions['grpc.max_receive_message_length']),
    maxSendBytes: grpcMessageLimit(serverOptions['grpc.max_send_message_length']),
    restriction: restrictions.get('inference'),
  };
  const streamOptions = { maxInflightPerStream: options.maxInflightPerStream ?? 64 };
  server.addService(
    serverServiceDefinition(GRPCInferenceService),
    restrictHandlers(
      inferenceServiceImplementation(core, streamOptions),
      INFERENCE_SERVICE_CATEGORIES,
      restrictions,
    ),
  );
  server.addService(serverServiceDefinition(Health), restrictHandlers(healthServiceImplementation(core), { check: 'health' }, restrictions));

  const fastPath = options.modelInferFastPath === false ? undefined : modelInferFastPath(core, fastPathLimits);
  let front: RawH2GrpcFront | undefined;
  const bind = (address: string): Promise<number> =>
    new Promise((resolve, reject) => {
      server.bindAsync(address, ServerCredentials.createInsecure(), (err, boundPort) => {
        if (err) {
          reject(err);
          return;
        }
        widenFlowControlWindows(server);
        resolve(boundPort);
      });
    });

  return {
    relayedStreams: () => front?.relayedStreams() ?? 0,
    async listen(port = DEFAULT_GRPC_PORT, host = '0.0.0.0') {
      if (options.rawH2Front === false) {
        const boundPort = await bind(grpcBindAddress(host, port));
        if (fastPath !== undefined) takeStreamsAhead(server, fastPath);
        return { port: boundPort };
      }
      // grpc-js on loopback behind the front; the front declines nothing the fast path would not.
      const internalPort = await bind('127.0.0.1:0');
      const otherUnary = inPlaceUnary(
        [
          { service: GRPCInferenceService, logic: inferenceUnaryLogic(core), categories: INFERENCE_SERVICE_CATEGORIES },
          { service: Health, logic: healthUnaryLogic(core), categories: { check: 'health' } },
        ],
        { maxReceiveBytes: fastPathLimits.maxReceiveBytes, maxSendBytes: fastPathLimits.maxSendBytes, restrictions },
      );
      const streams = streamInferInPlace(modelStreamInferHandler(core, streamOptions), fastPathLimits);
      const unaryTaker = fastPath === undefined ? otherUnary : firstTaker(fastPath, otherUnary);
      const maxConcurrentStreams = serverOptions['grpc.max_concurrent_streams'];
      front = rawH2GrpcFront((stream, headers) => unaryTaker(stream, headers) || streams(stream, headers), internalPort, {
        ...(typeof maxConcurrentStreams === 'number' ? { maxConcurrentStreams } : {}),
      });
      return front.listen(port, host);
    },
    async close(graceMs = 5_000) {
      const started = Date.now();
      await front?.close(graceMs);
      const left = Math.max(0, graceMs - (Date.now() - started));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), left);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
