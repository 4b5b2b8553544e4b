// The gateway's response cache layer: policy, single-flight coalescing, the in-process L1, store failure handling.
export * from './cache-types.js';
export * from './cache-control.js';
export * from './cache-layer.js';
export { bypassRunOf } from './bypass-run.js';
export * from './response-id.js';
export { LocalCache } from './local-cache.js';
export { SingleFlight, type FlightTicket } from './single-flight.js';
export type { WallClock } from './store-health.js';
