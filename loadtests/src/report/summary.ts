/**
 * The benchmark summary: one table of every scenario's targets (PASS / MISS / N/A with the measured
 * figure) and the plots, from the JSON files of one results folder (`loadtests/results/<date>/`).
 *
 * It is written twice: to `<results>/<date>/summary.md`, and, when the results are the repository's
 * own (the default results root), into `docs/benchmarks.md` between the markers
 * `<!-- bench:begin -->` and `<!-- bench:end -->`; the hand-written text around them is kept. A
 * missing doc is created with a short introduction. Results elsewhere (`--out /tmp/x`) never touch
 * the doc: its links would point outside the repository.
 *
 * Targets come in two shapes: `{name, verdict, detail}` (gateway and the suite's scenarios) and
 * `{name, pass, protocol, detail}` (batching); both are read. Rendering is pure and unit-tested.
 * Batching and gateway plots are drawn here from their JSON (result-charts.ts), so any folder gets them.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RESULTS_ROOT } from '../lib/output/results-files.js';
import { writePlots } from '../perf/perf-plots.js';
import { resultCharts } from './result-charts.js';

export const BEGIN_MARKER = '<!-- bench:begin -->';
export const END_MARKER = '<!-- bench:end -->';
export const DOC_PATH = fileURLToPath(new URL('../../../docs/benchmarks.md', import.meta.url));
/** Suite order; other JSON files in the folder follow, by name. */
export const SCENARIO_ORDER = ['batching', 'gateway', 'cache-ratio', 'node-kill', 'redis-stop', 'soak'] as const;

const INTRO = `# Benchmarks

\`npm run bench\` runs the whole suite within a 15-minute budget (\`--quick\`: a 2-3 minute smoke):
batching, gateway overhead (added latency, cache-hit throughput against bare Hono, tier overload at
twice capacity, power of two choices against round robin with one slow node), the cache at 0, 50 and
90% hit ratio, a node killed under load, Redis stopped under load, and a soak. One scenario:
\`npm run bench -- <scenario>\`; the 10-minute soak: \`npm run bench -- soak --soak-minutes 10\`.
Each scenario's source states what it measures and how (\`loadtests/src/scenarios/\`).

Results land in \`loadtests/results/<date>/\` (JSON with every figure, CSV, SVG plots). The section
below is generated from the latest run (\`npm run bench -- report\` regenerates it); edit only
outside the markers.

`;

export interface TargetRow {
  readonly scenario: string;
  readonly name: string;
  readonly verdict: string;
  readonly detail: string;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly json: Record<string, unknown>;
}

export interface SuiteStepStatus {
  readonly name: string;
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly elapsedS: number;
  readonly note?: string;
}

export interface SummaryInput {
  /** The results folder's date, YYYY-MM-DD. */
  readonly date: string;
  readonly scenarios: readonly ScenarioResult[];
  /** Plot paths relative to the place the summary is written. */
  readonly plots: readonly string[];
  /** Links to the results folder, relative to the place the summary is written. */
  readonly resultsLink: string;
  readonly suite?: { readonly steps: readonly SuiteStepStatus[]; readonly budgetMinutes: number; readonly elapsedS: number; readonly soakMinutes?: number; readonly quick: boolean };
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The targets of one scenario's JSON, in either shape. */
export function targetRows(result: ScenarioResult): TargetRow[] {
  const targets = Array.isArray(result.json.targets) ? (result.json.targets as unknown[]) : [];
  return targets.flatMap((t): TargetRow[] => {
    if (typeof t !== 'object' || t === null) return [];
    const o = t as Record<string, unknown>;
    const verdict = typeof o.verdict === 'string' ? o.verdict : typeof o.pass === 'boolean' ? (o.pass ? 'PASS' : 'MISS') : 'N/A';
    const name = str(o.protocol) !== '' ? `${str(o.name)} (${str(o.protocol)})` : str(o.name);
    return [{ scenario: result.scenario, name, verdict, detail: str(o.detail) }];
  });
}

/** Markdown table cells must not break the row. */
export function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

const BADGE: Record<string, string> = { PASS: '✅ PASS', MISS: '❌ MISS', 'N/A': '➖ N/A' };

export function renderSummary(input: SummaryInput): string {
  const out: string[] = [];
  out.push(`## Results of ${input.date}`, '');
  const machine = input.scenarios.map((s) => s.json.machine).find((m) => typeof m === 'object' && m !== null) as Record<string, unknown> | undefined;
  if (machine !== undefined) {
    out.push(`Machine: ${String(machine.cores)} cores (${str(machine.cpuModel)}), ${String(machine.memoryGiB)} GiB, Node ${str(machine.node)}. ` +
      'The load generator, Redis, the nodes and the gateway share it, so absolute figures are this machine\'s.', '');
  }
  if (input.suite !== undefined) {
    const s = input.suite;
    out.push(`Suite: ${s.quick ? 'quick smoke (`--quick`: short windows, figures are indicative only), ' : ''}` +
      `${(s.elapsedS / 60).toFixed(1)} of ${s.budgetMinutes} budgeted minutes` +
      (s.soakMinutes !== undefined ? `; soak ${s.soakMinutes.toFixed(2)} min (scaled to the budget left; the full soak is \`npm run bench -- soak --soak-minutes 10\`)` : '') + '.', '');
    out.push('| scenario | status | time |', '| --- | --- | --- |');
    for (const step of s.steps) out.push(`| ${step.name} | ${step.status}${step.note !== undefined ? `: ${cell(step.note)}` : ''} | ${step.elapsedS.toFixed(0)} s |`);
    out.push('');
  }
  const rows = input.scenarios.flatMap(targetRows);
  const counts = ['PASS', 'MISS', 'N/A'].map((v) => `${rows.filter((r) => r.verdict === v).length} ${v}`).join(', ');
  out.push(`### Targets (${counts})`, '');
  out.push('| scenario | target | verdict | measured |', '| --- | --- | --- | --- |');
  for (const r of rows) out.push(`| ${r.scenario} | ${cell(r.name)} | ${BADGE[r.verdict] ?? r.verdict} | ${cell(r.detail)} |`);
  if (rows.length === 0) out.push('| - | no results found | - | - |');
  out.push('');
  const missing = SCENARIO_ORDER.filter((name) => !input.scenarios.some((s) => s.scenario === name));
  if (missing.length > 0) out.push(`Not in this folder: ${missing.join(', ')}.`, '');
  if (input.plots.length > 0) {
    out.push('### Plots', '');
    for (const plot of input.plots) {
      const name = (plot.split('/').pop() ?? plot).replace(/\.svg$/, '');
      out.push(`**${name}**`, '', `![${name}](${plot})`, '');
    }
  }
  out.push(`Raw results: [${input.resultsLink}](${input.resultsLink}) (JSON: every figure and the command that produced it; CSV per scenario).`);
  return `${out.join('\n')}\n`;
}

/** The doc with its generated section replaced (or appended, with the intro when the doc is new). */
export function replaceGenerated(doc: string | undefined, generated: string): string {
  const block = `${BEGIN_MARKER}\n${generated.trimEnd()}\n${END_MARKER}\n`;
  if (doc === undefined || doc.trim() === '') return `${INTRO}${block}`;
  const begin = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER, begin + 1);
  if (begin < 0 || end < 0) return `${doc.trimEnd()}\n\n${block}`;
  return `${doc.slice(0, begin)}${block}${doc.slice(end + END_MARKER.length).replace(/^\n/, '')}`;
}

const toPosix = (p: string): string => p.split(sep).join('/');

/** The newest `YYYY-MM-DD` folder under `root`, or undefined. */
export async function latestResultsDate(root: string): Promise<string | undefined> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && /^\d{4}-\d{2}-\d{2}$/.test(e.name)).map((e) => e.name).sort().pop();
}

export async function loadResults(dir: string): Promise<ScenarioResult[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json') && f !== 'suite.json');
  const names = files.map((f) => f.replace(/\.json$/, ''));
  const ordered = [...SCENARIO_ORDER.filter((n) => names.includes(n)), ...names.filter((n) => !(SCENARIO_ORDER as readonly string[]).includes(n)).sort()];
  const results: ScenarioResult[] = [];
  for (const scenario of ordered) {
    try {
      results.push({ scenario, json: JSON.parse(await readFile(join(dir, `${scenario}.json`), 'utf8')) as Record<string, unknown> });
    } catch {
      // a half-written file from an interrupted run: left out, and listed as missing
    }
  }
  return results;
}

export interface WrittenSummary {
  readonly summaryPath: string;
  /** The doc, when it was updated. */
  readonly docPath?: string;
}

/** Writes `<root>/<date>/summary.md` and, for the repository's results, docs/benchmarks.md. */
export async function writeSummary(root: string, date: string, suite?: SummaryInput['suite'], docPath = DOC_PATH): Promise<WrittenSummary> {
  const dir = join(root, date);
  const scenarios = await loadResults(dir);
  for (const { scenario, json } of scenarios) {
    const charts = resultCharts(scenario, json);
    if (Object.keys(charts).length > 0) await writePlots(join(dir, 'plots'), charts);
  }
  const plotFiles = (await readdir(join(dir, 'plots')).catch(() => [] as string[])).filter((f) => f.endsWith('.svg')).sort((a, b) => {
    const rank = (f: string): number => {
      const i = SCENARIO_ORDER.findIndex((s) => f.startsWith(`${s}-`));
      return i < 0 ? SCENARIO_ORDER.length : i;
    };
    return rank(a) - rank(b) || a.localeCompare(b);
  });
  const local = renderSummary({ date, scenarios, plots: plotFiles.map((f) => `plots/${f}`), resultsLink: '.', ...(suite !== undefined ? { suite } : {}) });
  const summaryPath = join(dir, 'summary.md');
  await writeFile(summaryPath, local);
  if (root !== DEFAULT_RESULTS_ROOT) return { summaryPath };
  const fromDoc = toPosix(relative(dirname(docPath), dir));
  const generated = renderSummary({
    date,
    scenarios,
    plots: plotFiles.map((f) => `${fromDoc}/plots/${f}`),
    resultsLink: `${fromDoc}/`,
    ...(suite !== undefined ? { suite } : {}),
  });
  const doc = await readFile(docPath, 'utf8').catch(() => undefined);
  await writeFile(docPath, replaceGenerated(doc, generated));
  return { summaryPath, docPath };
}
