// The OpenTelemetry adapter (otel-tracer.ts) is deliberately not exported here: entry points import
// it by path, so nothing else pulls the SDK in.
export * from './trace-context.js';
export * from './tracer.js';
