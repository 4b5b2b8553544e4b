/**
 * What the suite's scenarios (cache-ratio, node-kill, redis-stop, soak) write, in one shape so the
 * summary (report/summary.ts) reads every scenario alike:
 *
 *   loadtests/results/<date>/<scenario>.json   { scenario, command, startedAt, elapsedS, machine, targets, figures, notes, plots }
 *   loadtests/results/<date>/<scenario>.csv
 *   loadtests/results/<date>/plots/<scenario>-<chart>.svg (and .png when a converter is installed)
 *
 * Targets have the gateway scenario's shape: name, PASS / MISS / N/A (N/A when the figure could not be
 * measured), the figure, its bound and unit, and a detail line.
 */
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { writePlots, type WrittenPlots } from '../perf/perf-plots.js';
import { DEFAULT_RESULTS_ROOT, localDate, writeResults } from '../lib/output/results-files.js';
import type { LineChart } from '../lib/charts/svg-chart.js';

export type Verdict = 'PASS' | 'MISS' | 'N/A';

export interface Target {
  readonly name: string;
  readonly verdict: Verdict;
  readonly value: number;
  readonly bound: number;
  readonly unit: string;
  readonly detail: string;
}

export function target(name: string, value: number, bound: number, unit: string, pass: (v: number, b: number) => boolean, detail: string): Target {
  const verdict: Verdict = Number.isFinite(value) ? (pass(value, bound) ? 'PASS' : 'MISS') : 'N/A';
  return { name, verdict, value, bound, unit, detail };
}

export const atMost = (v: number, b: number): boolean => v <= b;
export const atLeast = (v: number, b: number): boolean => v >= b;

export function targetLines(targets: readonly Target[]): string[] {
  return targets.map((t) => `${t.verdict.padEnd(4)}  ${t.name}: ${t.detail}`);
}

export function machineInfo(): Record<string, unknown> {
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

export const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export interface ScenarioOutput {
  readonly scenario: string;
  readonly started: Date;
  readonly elapsedS: number;
  readonly options: Record<string, unknown>;
  readonly figures: unknown;
  readonly targets: readonly Target[];
  readonly notes: readonly string[];
  readonly csv: string;
  readonly charts: Readonly<Record<string, LineChart>>;
}

export interface WrittenOutput {
  readonly json: string;
  readonly csv: string;
  readonly plots: WrittenPlots;
}

export async function writeScenarioOutput(outRoot: string | undefined, out: ScenarioOutput): Promise<WrittenOutput> {
  const root = outRoot ?? DEFAULT_RESULTS_ROOT;
  const plotDir = join(root, localDate(out.started), 'plots');
  const charts = Object.fromEntries(Object.entries(out.charts).map(([name, chart]) => [`${out.scenario}-${name}`, chart]));
  const plots = await writePlots(plotDir, charts);
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trimEnd();
  const json = {
    scenario: out.scenario,
    command,
    startedAt: out.started.toISOString(),
    elapsedS: out.elapsedS,
    machine: machineInfo(),
    options: out.options,
    targets: out.targets,
    figures: out.figures,
    notes: out.notes,
    // Relative to the JSON file, so the folder can move.
    plots: plots.svg.map((p) => `plots/${p.split(/[\\/]/).pop() as string}`),
    ...(plots.note !== undefined ? { plotsNote: plots.note } : {}),
  };
  const paths = await writeResults(root, out.scenario, out.started, json, out.csv);
  return { ...paths, plots };
}

/** A vertical marker line at `x` for a LineChart (the chart has no annotations of its own). */
export function markerSeries(name: string, x: number, yMax: number): { name: string; points: Array<{ x: number; y: number }> } {
  return { name, points: [{ x, y: 0 }, { x, y: yMax }] };
}
