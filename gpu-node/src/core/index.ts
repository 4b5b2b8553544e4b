export type * from './node-core.js';
