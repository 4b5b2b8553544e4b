export * from './version-policy.js';
export * from './model-directory.js';
export * from './override-directory.js';
