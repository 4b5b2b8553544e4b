// Routing: node load figures, pickers, version splits and the Dispatcher that ties them to admission.
export * from './dispatcher.js';
export * from './node-load.js';
export * from './pickers.js';
export * from './upstream-errors.js';
export * from './version-chooser.js';
export * from './version-splits.js';
