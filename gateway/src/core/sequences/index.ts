// Sequence affinity: every request of a sequence goes to the node that holds its state.
export * from './binding-codec.js';
export * from './sequence-params.js';
export * from './sequence-router.js';
export * from './sequence-ttl.js';
export * from './node-sequence-id.js';
