export * from './api-key.js';
export * from './authenticate.js';
export * from './seed-tenants.js';
export * from './sha256.js';
export * from './tenant-scope.js';
export * from './key-hash-memo.js';
