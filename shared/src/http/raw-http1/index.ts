export * from './head-reader.js';
export * from './answer-writer.js';
export * from './connection.js';
export * from './front-door.js';
export * from './last-target.js';
export * from './stream-writer.js';
export * from './handler-chain.js';
