export { createTypescriptBackend, TYPESCRIPT_DEFAULT_FILENAME } from './typescript-backend.js';
export type * from './contract.js';
