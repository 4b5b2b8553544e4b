// Entry of every worker thread whose module is TypeScript source (tests under vitest, the CLI under
// tsx). Node 20 ignores `--import tsx` in a Worker's execArgv (module hooks are not per-thread there),
// so the worker registers tsx itself and then imports the real entry: the ESM hooks for `import`, and
// the CommonJS hooks for files Node reads as CommonJS (a model.ts with no package.json above it).
// Compiled `.js` entries skip this file entirely.
import { workerData } from 'node:worker_threads';
import { register as registerCjs } from 'tsx/cjs/api';
import { register as registerEsm } from 'tsx/esm/api';

registerCjs();
registerEsm();
await import(workerData.entry);
