/**
 * `tessera-perf`: the load tool's entry. Reads the model's metadata, builds the requests, sweeps the
 * concurrencies or request rates (measure-point.ts), and writes the console table, the perf_analyzer
 * CSV, the JSON and the plots. Exit status: 0 when every request succeeded, 1 when some failed or the
 * run could not start, 2 for a bad command line.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ModelStatsSnapshot } from '../lib/sampling/node-stats.js';
import { toPerfCsv } from '../lib/output/perf-csv.js';
import { createProgress, isInteractive, type Progress } from '../lib/output/progress.js';
import { buildRequests } from './model-inputs.js';
import { measurePoint, type PerfPoint } from './measure-point.js';
import { PERF_USAGE, parsePerfArgs, type PerfOptions } from './perf-options.js';
import { perfCharts, writePlots } from './perf-plots.js';
import { loadLabel, perfJson, pointsTable, tiersTable } from './perf-report.js';
import { createPerfTarget } from './perf-target.js';

export interface PerfIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly interactive: boolean;
}

const defaultIo = (): PerfIo => ({
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  interactive: isInteractive(),
});

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function writeOut(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

export async function runPerfCli(argv: readonly string[], io: PerfIo = defaultIo()): Promise<number> {
  const args = parsePerfArgs(argv);
  if (args.kind === 'help') {
    io.stdout(PERF_USAGE);
    return 0;
  }
  if (args.kind === 'error') {
    io.stderr(`tessera-perf: ${args.message}\n\n${PERF_USAGE}`);
    return 2;
  }
  try {
    return await runPerf(args.options, io);
  } catch (error) {
    io.stderr(`tessera-perf: ${message(error)}\n`);
    return 1;
  }
}

export async function runPerf(options: PerfOptions, io: PerfIo): Promise<number> {
  const target = createPerfTarget(options);
  const progress: Progress = createProgress({ interactive: io.interactive, write: io.stderr });
  const startedAt = new Date();
  try {
    const model = await target.fetchMetadata();
    const fileJson = options.inputData.kind === 'file' ? (JSON.parse(await readFile(options.inputData.path, 'utf8')) as unknown) : undefined;
    const requests = buildRequests({ model, shapes: options.shapes, inputData: options.inputData, fileJson, seed: options.seed, ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}) });

    let readStats: (() => Promise<ModelStatsSnapshot>) | undefined = () => target.readStats();
    let statsNote: string | undefined;
    try {
      await target.readStats();
    } catch (error) {
      readStats = undefined;
      statsNote = `server breakdown unavailable from ${target.statsSource} (${message(error)}); pass --stats-url http://NODE:PORT`;
      progress.line(`note: ${statsNote}`);
    }

    const setup = options.protocol === 'grpc' ? 'grpc' : options.json ? 'http-json' : 'http-binary';
    const { sweep } = options;
    const what = sweep.mode === 'rate' ? `request rate (${sweep.distribution})` : 'concurrency';
    progress.line(
      `tessera-perf: ${model.name} at ${options.host}:${options.port} over ${setup}, ${what} ${sweep.values.join(', ')}; ` +
        `inputs ${requests[0]?.inputs.map((t) => `${t.name} ${t.datatype}[${t.shape.join(',')}]`).join(', ')}`,
    );
    const points: PerfPoint[] = [];
    for (const [i, value] of sweep.values.entries()) {
      const label = sweep.mode === 'rate' ? `rate ${value}/s` : `concurrency ${value}`;
      progress.update(i / sweep.values.length, `${label}: warming up`);
      const point = await measurePoint(
        {
          mode: sweep.mode,
          value,
          distribution: sweep.mode === 'rate' ? sweep.distribution : 'constant',
          maxOutstanding: options.maxOutstanding,
          seed: options.seed,
          warmupMs: options.warmupMs,
          measurementIntervalMs: options.measurementIntervalMs,
          stabilityPercentage: options.stabilityPercentage,
          maxTrials: options.maxTrials,
          ...(options.latencySloMs !== undefined ? { latencySloMs: options.latencySloMs } : {}),
        },
        {
          model: model.name,
          protocol: options.protocol,
          setup,
          tags: target.tags,
          requests,
          createClients: (n) => target.createClients(n),
          ...(readStats !== undefined ? { readStats } : {}),
          onTrial: (trial, w) =>
            progress.update(
              (i + trial / options.maxTrials) / sweep.values.length,
              `${label}: window ${trial}/${options.maxTrials}, ${w.inferencesPerSec.toFixed(1)} inf/s, avg ${(w.latencyUs / 1000).toFixed(2)} ms`,
            ),
        },
      );
      points.push(point);
      progress.line(
        `${label}: ${point.inferencesPerSec.toFixed(1)} inf/s, p99 ${(point.latency.p99Us / 1000).toFixed(2)} ms` +
          `${point.stable ? '' : `, NOT stable after ${point.trials} windows`}` +
          `${point.errors > 0 ? `, ${point.errors} errors (${point.firstError})` : ''}` +
          `${point.dropped > 0 ? `, ${point.dropped} dropped at --max-outstanding` : ''}`,
      );
    }
    progress.done();

    const out: string[] = ['', pointsTable(points)];
    if (target.tags.length > 1 || options.latencySloMs !== undefined) out.push('', tiersTable(points, options.latencySloMs));
    if (statsNote !== undefined) out.push('', `note: ${statsNote}`);
    const written: string[] = [];
    if (options.csvPath !== undefined) {
      await writeOut(options.csvPath, toPerfCsv(points));
      written.push(options.csvPath);
    }
    if (options.jsonPath !== undefined) {
      const doc = perfJson(options, { startedAt: startedAt.toISOString(), model, statsSource: readStats ? target.statsSource : null }, points);
      await writeOut(options.jsonPath, `${JSON.stringify(doc, null, 2)}\n`);
      written.push(options.jsonPath);
    }
    if (options.plotDir !== undefined) {
      const plots = await writePlots(options.plotDir, perfCharts(points, model.name, options.latencySloMs));
      written.push(...plots.svg, ...plots.png);
      if (plots.note !== undefined) out.push('', `note: ${plots.note}`);
    }
    if (written.length > 0) out.push('', `wrote ${written.join(', ')}`);
    io.stdout(`${out.join('\n')}\n`);

    const unstable = points.filter((p) => !p.stable);
    if (unstable.length > 0) {
      io.stderr(`tessera-perf: no stable measurement at ${unstable.map(loadLabel).join(', ')} within ${options.maxTrials} windows; reported from the last three\n`);
    }
    return points.some((p) => p.errors > 0) ? 1 : 0;
  } finally {
    progress.done();
    target.close();
  }
}
