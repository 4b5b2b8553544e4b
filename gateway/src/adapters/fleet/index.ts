// Where the gateway learns its fleet: Redis registrations and events, or a static list (embedded mode).
export * from './redis-node-directory.js';
export * from './static-node-directory.js';
export { NodeState, loadFigure } from './fleet-state.js';
