// The gateway's runtime-agnostic core: the Hono app, auth, and the ports adapters implement.
export * from './app/index.js';
export * from './auth/index.js';
export * from './http/index.js';
export type * from './ports/index.js';
