// The node's gRPC endpoint (port 8001): KServe v2 GRPCInferenceService and grpc.health.v1.Health.
export { createGrpcServer, DEFAULT_GRPC_PORT, DEFAULT_MAX_MESSAGE_BYTES } from './grpc-server.js';
export type { GrpcServer, GrpcServerOptions } from './grpc-server.js';
export { INFLIGHT_KEY, QUEUE_DEPTH_KEY, STREAM_ERROR_HEADER } from './infer-handlers.js';
