// Bundle entry of `tessera-jobs` (scripts/build.mjs): what bin/tessera-jobs.js runs from source.
import { runJobsCli } from '../../gateway/src/jobs-entry.js';

await runJobsCli(process.argv.slice(2));
process.exit(process.exitCode ?? 0);
