// Reaching nodes over gRPC: the transport (on our own HTTP/2 client), its per-node circuit breakers
// and the error mapping.
export * from './grpc-node-transport.js';
export * from './h2-transport.js';
export * from './transport-registry.js';
export * from './node-breakers.js';
export * from './grpc-errors.js';
export * from './load-trailer.js';
export * from './metadata-json.js';
