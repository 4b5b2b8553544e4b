/**
 * `npm run bench [-- --quick] [--budget-minutes M] [--soak-minutes M]`: every scenario in order, within
 * a total time budget, then the summary (report/summary.ts) into the results folder and
 * docs/benchmarks.md.
 *
 *   batching → gateway → cache-ratio → node-kill → redis-stop → soak
 *
 * Budget: 15 minutes by default (3 with --quick). Batching (about 6 min) and gateway (about 5 min) run
 * with their own defaults; the fault and cache scenarios take about 2 min together; the soak gets what
 * is left, minus a reserve for its own start and the summary, between SOAK_MIN and SOAK_MAX minutes.
 * So the default suite runs a short soak (about 1-2 min, stated in the summary); the 10-minute soak is
 * `npm run bench -- soak --soak-minutes 10`, or the suite with `--budget-minutes 25`. An explicit
 * `--soak-minutes` is used as given. The budget only scales the soak: no scenario is skipped (a
 * partial suite is worth less than a late one), so a slow machine overruns it, and the summary shows
 * by how much. A scenario that fails is reported and the suite goes on. Exit status: 1 when any
 * scenario failed, else 0 (a MISS is a finding, not a failure).
 */
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import type { SuiteExtras } from '../lib/options/suite-options.js';
import { latestResultsDate, writeSummary, type SuiteStepStatus } from '../report/summary.js';
import { runBatchingScenario } from './batching.js';
import { runCacheRatioScenario } from './cache-ratio.js';
import { runGatewayScenario } from './gateway.js';
import { runNodeKillScenario } from './node-kill.js';
import { runRedisStopScenario } from './redis-stop.js';
import { runSoakScenario } from './soak.js';

export const DEFAULT_BUDGET_MINUTES = 15;
export const QUICK_BUDGET_MINUTES = 3;
/** Reserved after the soak's load: its fleet start and drain check, the summary. */
const RESERVE_S = 45;
const QUICK_RESERVE_S = 20;
const SOAK_MIN = 0.5;
const QUICK_SOAK_MIN = 1 / 6;
const SOAK_MAX = 10;
const QUICK_SOAK_MAX = 1 / 3;

type Scenario = (options: BenchOptions & SuiteExtras) => Promise<number>;

export const SUITE: ReadonlyArray<{ readonly name: string; readonly run: Scenario }> = [
  { name: 'batching', run: runBatchingScenario },
  // The gateway issue's benchmark: added latency, cache-hit throughput vs bare Hono, tier overload at
  // 2x capacity, p2c vs round robin with one 3x slower node (gateway.ts).
  { name: 'gateway', run: runGatewayScenario },
  { name: 'cache-ratio', run: runCacheRatioScenario },
  { name: 'node-kill', run: runNodeKillScenario },
  { name: 'redis-stop', run: runRedisStopScenario },
  { name: 'soak', run: runSoakScenario },
];

/** Soak minutes for what is left of the budget; pure, unit-tested. */
export function scaledSoakMinutes(budgetMinutes: number, elapsedS: number, quick: boolean): number {
  const leftS = budgetMinutes * 60 - elapsedS - (quick ? QUICK_RESERVE_S : RESERVE_S);
  const [min, max] = quick ? [QUICK_SOAK_MIN, QUICK_SOAK_MAX] : [SOAK_MIN, SOAK_MAX];
  return Math.min(max, Math.max(min, leftS / 60));
}

const log = (message: string): void => void process.stderr.write(`[bench suite] ${message}\n`);

export async function runSuite(options: BenchOptions & SuiteExtras): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const elapsedS = (): number => (performance.now() - t0) / 1000;
  const budgetMinutes = options.budgetMinutes ?? (options.quick ? QUICK_BUDGET_MINUTES : DEFAULT_BUDGET_MINUTES);
  const steps: SuiteStepStatus[] = [];
  let soakMinutes: number | undefined;
  log(`${SUITE.length} scenarios within ${budgetMinutes} min${options.quick ? ' (quick)' : ''}: ${SUITE.map((s) => s.name).join(', ')}`);
  for (const [i, step] of SUITE.entries()) {
    if (elapsedS() >= budgetMinutes * 60) log(`over the ${budgetMinutes} min budget already; ${step.name} runs anyway (at its shortest, for the soak)`);
    const stepOptions: BenchOptions & SuiteExtras = { ...options, scenario: step.name };
    if (step.name === 'soak') {
      soakMinutes = options.soakMinutes ?? scaledSoakMinutes(budgetMinutes, elapsedS(), options.quick);
      Object.assign(stepOptions, { soakMinutes });
    }
    log(`${i + 1}/${SUITE.length} ${step.name} (at ${(elapsedS() / 60).toFixed(1)} min)${soakMinutes !== undefined && step.name === 'soak' ? `: ${soakMinutes.toFixed(2)} min` : ''}`);
    const stepStart = performance.now();
    try {
      const code = await step.run(stepOptions);
      steps.push({ name: step.name, status: code === 0 ? 'ok' : 'failed', elapsedS: (performance.now() - stepStart) / 1000, ...(code !== 0 ? { note: `exit status ${code}` } : {}) });
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0] ?? error.message : String(error);
      steps.push({ name: step.name, status: 'failed', elapsedS: (performance.now() - stepStart) / 1000, note: message });
      log(`${step.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
  const root = options.outRoot ?? DEFAULT_RESULTS_ROOT;
  const written = await writeSummary(root, localDate(started), {
    steps,
    budgetMinutes,
    elapsedS: elapsedS(),
    quick: options.quick,
    ...(soakMinutes !== undefined ? { soakMinutes } : {}),
  });
  const table = steps.map((s) => `  ${s.name.padEnd(12)} ${s.status.padEnd(8)} ${s.elapsedS.toFixed(0).padStart(5)} s${s.note !== undefined ? `  ${s.note}` : ''}`);
  process.stdout.write(
    [`suite: ${(elapsedS() / 60).toFixed(1)} of ${budgetMinutes} min`, ...table, `summary: ${written.summaryPath}`, ...(written.docPath !== undefined ? [`doc: ${written.docPath}`] : []), ''].join('\n'),
  );
  return steps.some((s) => s.status === 'failed') ? 1 : 0;
}

/** `npm run bench -- report`: the summary of the newest results folder, without running anything. */
export async function runReport(options: BenchOptions): Promise<number> {
  const root = options.outRoot ?? DEFAULT_RESULTS_ROOT;
  const date = await latestResultsDate(root);
  if (date === undefined) {
    process.stderr.write(`bench report: no results folder under ${root}\n`);
    return 1;
  }
  const written = await writeSummary(root, date);
  process.stdout.write(`summary: ${written.summaryPath}${written.docPath !== undefined ? `\ndoc: ${written.docPath}` : ''}\n`);
  return 0;
}
