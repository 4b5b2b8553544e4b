export { UNLOADED_REASON, VersionLifecycle, type ModelState } from './model-state.js';
export { collectAfterUnload } from './collect-after-unload.js';
