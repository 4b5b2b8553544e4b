// Bundle entry of `tessera-perf` (scripts/build.mjs): what bin/tessera-perf.js runs from source.
import { runPerfCli } from '../../loadtests/src/perf/cli.js';

process.exitCode = await runPerfCli(process.argv.slice(2));
