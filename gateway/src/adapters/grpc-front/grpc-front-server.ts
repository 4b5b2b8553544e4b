/**
 * The gateway's gRPC front door: `inference.GRPCInferenceService` and `grpc.health.v1.Health` on a
 * port of its own (`--grpc-port`, config `grpcPort`; off unless set), so NVIDIA's gRPC clients talk
 * to the gateway as they talk to Triton. Definitions come from the shared protobuf-es schemas
 * (shared/src/grpc); undecodable requests reach the handlers as INVALID_ARGUMENT, never a crash.
 * Bounds as the node's: message size (the gateway's maxBodyBytes in, 64 MiB out), concurrent
 * streams per connection (1000), requests in flight per ModelStreamInfer stream (64). ModelInfer's
 * plain calls are served on the HTTP/2 stream ahead of grpc-js (h2-front-infer.ts).
 *
 * With `rawH2` (config `grpcRawH2`, `--grpc-raw-h2`) the port is our own HTTP/2 reader
 * (shared/src/http/raw-http2/taking-front.ts): the same fast path serves plain ModelInfer in place, every
 * other unary RPC is served in place with the grpc-js handlers' own logic (in-place-front.ts), and the
 * rest (ModelStreamInfer, compressed or unknown calls) is relayed to grpc-js listening on 127.0.0.1:0,
 * as the node's `--grpc-raw-h2` does.
 * Why: node:http2's own per-stream work made a gRPC client cost the gateway 1.5-2.5x an HTTP client
 * (issue 17, docs/benchmarks.md 2026-11-27d).
 */
import { Server, ServerCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { GRPCInferenceService } from '../../../../shared/src/gen/grpc_service_pb.js';
import { Health } from '../../../../shared/src/gen/health_pb.js';
import { firstTaker, grpcBindAddress, grpcMessageLimit, serverServiceDefinition, takeStreamsAhead, type GrpcListener } from '../../../../shared/src/grpc/index.js';
import { rawH2TakingFront, type RawH2Limits, type TakingFront } from '../../../../shared/src/http/raw-http2/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { frontInferFastPath } from './h2-front-infer.js';
import { inPlaceFrontUnary } from './in-place-front.js';
import { healthFrontImplementation, inferenceFrontImplementation, type FrontApp } from './inference-front.js';
import { recordingReceivedBytes } from './received-bytes.js';

/** Largest message either way unless told (the node's bound, and the gateway's default maxBodyBytes). */
export const DEFAULT_FRONT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_FRONT_MAX_CONCURRENT_STREAMS = 1000;

export interface GrpcFrontOptions {
  /** Largest request message (default 64 MiB; the gateway passes its maxBodyBytes). */
  readonly maxReceiveBytes?: number;
  /** Largest response message (default 64 MiB). */
  readonly maxSendBytes?: number;
  readonly maxConcurrentStreams?: number;
  readonly maxInflightPerStream?: number;
  readonly logger?: Logger;
  /**
   * Serve ModelInfer on the HTTP/2 stream ahead of grpc-js (h2-front-infer.ts; default true). false
   * leaves every call to grpc-js.
   */
  readonly modelInferFastPath?: boolean;
  /** The port on the raw HTTP/2 front, grpc-js behind it on loopback (default false). */
  readonly rawH2?: boolean;
  /** The raw front's limits beyond maxConcurrentStreams (shared/src/http/raw-http2/connection.ts's defaults otherwise). */
  readonly rawH2Limits?: Partial<RawH2Limits>;
  /** Extra grpc-js server options, applied last. */
  readonly channelOptions?: ChannelOptions;
}

export type GrpcFront = GrpcListener;

export function createGrpcFront(app: FrontApp, options: GrpcFrontOptions = {}): GrpcFront {
  const serverOptions: ChannelOptions = {
    'grpc.max_receive_message_length': options.maxReceiveBytes ?? DEFAULT_FRONT_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': options.maxSendBytes ?? DEFAULT_FRONT_MAX_MESSAGE_BYTES,
    'grpc.max_concurrent_streams': options.maxConcurrentStreams ?? DEFAULT_FRONT_MAX_CONCURRENT_STREAMS,
    'grpc.keepalive_time_ms': 7_200_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // Channelz keeps per-call and per-message counters and timestamps (closures, Date.now) that no one
    // reads here: off, each call skips that bookkeeping (issue 17: the front door cost more than HTTP).
    'grpc.enable_channelz': 0,
    ...options.channelOptions,
  };
  const server = new Server(serverOptions);
  const limits = {
    maxReceiveBytes: grpcMessageLimit(serverOptions['grpc.max_receive_message_length']),
    maxSendBytes: grpcMessageLimit(serverOptions['grpc.max_send_message_length']),
    logger: options.logger,
  };
  const fastPath = frontInferFastPath(app.serveInfer, limits);
  server.addService(
    recordingReceivedBytes(serverServiceDefinition(GRPCInferenceService)),
    inferenceFrontImplementation(app, {
      ...(options.maxInflightPerStream === undefined ? {} : { maxInflightPerStream: options.maxInflightPerStream }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    }),
  );
  server.addService(serverServiceDefinition(Health), healthFrontImplementation(app, options.logger));
  const bind = (address: string): Promise<number> =>
    new Promise((resolve, reject) => {
      server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
    });
  const take = options.modelInferFastPath === false ? declineAll : fastPath;
  let front: TakingFront | undefined;
  let closing: Promise<void> | undefined;
  const shutdownGrpcJs = (graceMs: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => server.forceShutdown(), graceMs);
      timer.unref();
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return {
    relayedStreams: () => front?.relayedStreams() ?? 0,
    async listen(port = 0, host = '0.0.0.0') {
      if (options.rawH2 !== true) {
        const bound = await bind(grpcBindAddress(host, port));
        if (take !== declineAll) takeStreamsAhead(server, take);
        return { port: bound };
      }
      const internalPort = await bind('127.0.0.1:0');
      const streams = serverOptions['grpc.max_concurrent_streams'];
      const maxConcurrentStreams = typeof streams === 'number' ? streams : DEFAULT_FRONT_MAX_CONCURRENT_STREAMS;
      // On our own reader every other unary call is served in place too: relayed, it paid a second hop.
      front = rawH2TakingFront(firstTaker(take, inPlaceFrontUnary(app, limits)), internalPort, { limits: { maxConcurrentStreams, ...options.rawH2Limits } });
      try {
        return await front.listen(port, host);
      } catch (error) {
        server.forceShutdown(); // the port is taken: grpc-js must not stay behind on loopback
        throw error;
      }
    },
    close(graceMs = 10_000) {
      return (closing ??= (async () => {
        const started = Date.now();
        await front?.close(graceMs);
        await shutdownGrpcJs(Math.max(0, graceMs - (Date.now() - started)));
      })());
    },
  };
}

const declineAll = (): boolean => false;
