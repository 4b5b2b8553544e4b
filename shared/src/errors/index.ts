export * from './tessera-error.js';
export * from './status-map.js';
