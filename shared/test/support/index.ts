// Test utilities shared by the node's and the gateway's integration suites.
export * from './chunked-post.js';
export * from './redis-server.js';
export * from './wait-for.js';
