export * from './gateway-config.js';
export * from './default-tiers.js';
export * from './load-gateway-config.js';
