// Bundle entry of `tessera-gateway` (scripts/build.mjs): what bin/tessera-gateway.js runs from source.
import { runCli } from '../../gateway/src/entry-node.js';

await runCli(process.argv.slice(2));
process.exit(process.exitCode ?? 0);
