// Reaching nodes over gRPC: the transport, its per-node circuit breakers and the error mapping.
export * from './grpc-transport.js';
export * from './node-breakers.js';
export * from './grpc-errors.js';
export * from './metadata-json.js';
