// gRPC plumbing shared by the node's server and the gateway's client: service definitions built from
// the protobuf-es schemas, and the pure ModelInfer conversions.
export * from './service-definition.js';
export * from './parameter-codec.js';
export * from './typed-contents.js';
export * from './infer-codec.js';
export * from './unary-client.js';
export * from './grpc-frame.js';
export * from './grpc-message-header.js';
export * from './grpc-message-reader.js';
export * from './grpc-timeout.js';
export * from './infer-request-encoder.js';
export * from './forwardable-framing.js';
export * from './unsent-budget.js';
export * from './infer-response-encoder.js';
export * from './forwarded-response.js';
export * from './infer-request-scan.js';
export * from './wire-cursor.js';
export * from './plain-tensor.js';
export * from './plain-infer-request.js';
export * from './grpc-js-internals.js';
export * from './grpc-listener.js';
export * from './h2-unary-call.js';
export * from './in-place-unary.js';
