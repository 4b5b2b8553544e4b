// Bundle entry of `tessera-models` (scripts/build.mjs): what bin/tessera-models.js runs from source.
import { runCli } from '../../gpu-node/src/example-models/cli.js';

process.exitCode = await runCli(process.argv.slice(2));
