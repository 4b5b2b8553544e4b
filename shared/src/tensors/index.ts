export * from './tensor.js';
