export * from './grpc-front-server.js';
export { inferenceFrontImplementation, healthFrontImplementation, type FrontApp, type FrontOptions } from './inference-front.js';
