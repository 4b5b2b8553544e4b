export { UNLOADED_REASON, VersionLifecycle, type ModelState } from './model-state.js';
