export * from './model-name.js';
