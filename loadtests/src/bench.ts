/**
 * `npm run bench -- <scenario> [flags]`: load tests against real node processes. Each scenario is one
 * module under scenarios/; this file only parses the shared flags and dispatches.
 */
import { parseBenchArgs, type BenchOptions } from './lib/bench-options.js';
import { runBatchingScenario } from './scenarios/batching.js';
import { runGatewayScenario } from './scenarios/gateway.js';

const SCENARIOS: Readonly<Record<string, (options: BenchOptions) => Promise<number>>> = {
  batching: runBatchingScenario,
  gateway: runGatewayScenario,
};

const USAGE = `Usage: npm run bench -- <scenario> [options]

Scenarios
  ${Object.keys(SCENARIOS).join(', ')}

Options
  --warmup S          seconds of warm-up before each measurement (default 2)
  --duration S        seconds of each measurement window (default 8)
  --concurrency LIST  closed-loop concurrencies, e.g. 1,8,64 (default: the scenario's)
  --quick             smoke run: 0.5 s + 1.5 s windows, fewer points, no tuning
  --out DIR           results root (default loadtests/results)
`;

const args = parseBenchArgs(process.argv.slice(2));
if (args.kind === 'help') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (args.kind === 'error') {
  process.stderr.write(`bench: ${args.message}\n\n${USAGE}`);
  process.exit(2);
}
const scenario = SCENARIOS[args.options.scenario];
if (scenario === undefined) {
  process.stderr.write(`bench: unknown scenario '${args.options.scenario}'\n\n${USAGE}`);
  process.exit(2);
}
try {
  process.exit(await scenario(args.options));
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
