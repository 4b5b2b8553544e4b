// Test helpers for the model machinery (fake backend, temporary repositories); not used by production code.
export * from './fake-backend.js';
export * from './test-repository.js';
