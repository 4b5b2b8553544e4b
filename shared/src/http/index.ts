export * from './server-timeouts.js';
