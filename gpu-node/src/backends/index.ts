export type * from './backend.js';
export * from './registry.js';
export * from './instance-specs.js';
export * from './gpu-probe.js';
export * from './onnxruntime/index.js';
export * from './typescript/index.js';
