export type * from './node-core.js';
export { createNodeCore, DEFAULT_EXTENSIONS, type NodeCoreOptions, type TesseraNodeCore } from './node-core-impl.js';
export { abortSignalOf } from '../scheduler/call-cancellation.js';
