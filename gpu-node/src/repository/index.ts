export * from './version-policy.js';
export * from './model-directory.js';
export * from './override-directory.js';
export type * from './load-options.js';
export type * from './repository-index.js';
export { RepositoryManager, LOAD_UNLOAD_NOT_ALLOWED, type ControlMode, type RepositoryManagerOptions } from './repository-manager.js';
