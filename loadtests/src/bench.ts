/**
 * `npm run bench -- <scenario> [flags]`: load tests against real node processes. Each scenario is one
 * module under scenarios/; this file only parses the shared flags and dispatches.
 */
import { parseBenchArgs, type BenchOptions } from './lib/options/bench-options.js';
import { extractSuiteArgs } from './lib/options/suite-options.js';
import { runBatchingScenario } from './scenarios/batching.js';
import { runBatchingPerCoreScenario } from './scenarios/batching-per-core.js';
import { runCacheRatioScenario } from './scenarios/cache-ratio.js';
import { runGatewayScenario } from './scenarios/gateway.js';
import { runLlmScenario } from './scenarios/llm.js';
import { runLlmBatchingScenario } from './scenarios/llm-batching.js';
import { runLlmIdleBurstScenario } from './scenarios/llm-idle-burst.js';
import { runNodeKillScenario } from './scenarios/node-kill.js';
import { runRedisStopScenario } from './scenarios/redis-stop.js';
import { runSoakScenario } from './scenarios/soak.js';
import { runReport, runSuite } from './scenarios/suite.js';

const SCENARIOS: Readonly<Record<string, (options: BenchOptions) => Promise<number>>> = {
  batching: runBatchingScenario,
  'batching-per-core': runBatchingPerCoreScenario,
  gateway: runGatewayScenario,
  'gateway-grpc-vs-http': async (options) => (await import('./scenarios/gateway-grpc-vs-http.js')).runGatewayGrpcVsHttpScenario(options),
  'cache-ratio': runCacheRatioScenario,
  llm: runLlmScenario,
  'llm-batching': runLlmBatchingScenario,
  'llm-idle': runLlmIdleBurstScenario,
  'llm-h2-ab': async (options) => (await import('./scenarios/llm-h2-ab.js')).runLlmH2AbScenario(options),
  'llm-interval': async (options) => (await import('./scenarios/llm-interval.js')).runLlmIntervalScenario(options),
  'llm-ttft-probe': async (options) => (await import('./scenarios/llm-ttft-probe.js')).runLlmTtftProbeScenario(options),
  models: async (options) => (await import('./scenarios/many-models.js')).runManyModelsScenario(options),
  'node-kill': runNodeKillScenario,
  'redis-stop': runRedisStopScenario,
  soak: runSoakScenario,
  suite: runSuite,
  report: runReport,
};

const USAGE = `Usage: npm run bench [-- <scenario>] [options]   (no scenario: the suite)

Scenarios
  ${Object.keys(SCENARIOS).join(', ')}

Options
  --warmup S          seconds of warm-up before each measurement (default 2)
  --duration S        seconds of each measurement window (default 8)
  --concurrency LIST  closed-loop concurrencies, e.g. 1,8,64 (default: the scenario's)
  --quick             smoke run: 0.5 s + 1.5 s windows, fewer points, no tuning
  --out DIR           results root (default loadtests/results)
  --per-core          gateway: the gateway alone on core 0 and everything else on core 1, with anchors
  --budget-minutes M  suite: total budget (default 15, 3 with --quick); the soak gets what is left
  --soak-minutes M    soak length (default: scaled to the suite's budget; 1 alone, 1/3 with --quick)
`;

const suiteArgs = extractSuiteArgs(process.argv.slice(2));
if (suiteArgs.kind === 'error') {
  process.stderr.write(`bench: ${suiteArgs.message}\n\n${USAGE}`);
  process.exit(2);
}
const args = parseBenchArgs(suiteArgs.argv);
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
  process.exit(await scenario({ ...args.options, ...suiteArgs.extras }));
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
