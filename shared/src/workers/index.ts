// Worker threads whose modules are TypeScript source (run through tsx in the thread).
export * from './module-worker.js';
