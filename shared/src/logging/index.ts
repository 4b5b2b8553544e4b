export * from './logger-interface.js';
export * from './logger.js';
