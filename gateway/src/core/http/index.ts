export * from './access-error.js';
export * from './responses.js';
export * from './read-body.js';
export * from './http-answer.js';
export * from './payload-too-large.js';
export * from './cancellation.js';
