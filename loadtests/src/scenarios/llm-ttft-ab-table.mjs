// Summarizes llm-ttft-probe runs in turns (folders PREFIX-<side>-<turn>, as ab-turns.sh in
// loadtests/results/2026-11-26g-ttft20 writes them): per side, each run's added first token (p50 of the
// pairs' differences) and, from the marks, each gateway step's wall p50 and CPU p50 (process.cpuUsage,
// which does not move with how busy the box is the way wall time does).
// usage: node loadtests/src/scenarios/llm-ttft-ab-table.mjs PREFIX > table.md
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const prefix = process.argv[2];
const dir = dirname(prefix);
const runs = readdirSync(dir)
  .filter((name) => name.startsWith(`${basename(prefix)}-`) && statSync(join(dir, name)).isDirectory())
  .map((name) => {
    const [side, turn] = name.slice(basename(prefix).length + 1).split('-');
    const day = readdirSync(join(dir, name))[0];
    return { side, turn: Number(turn), folder: join(dir, name, day) };
  })
  .filter((run) => existsSync(join(run.folder, 'llm-ttft-marks.txt')))
  .sort((a, b) => a.turn - b.turn || a.side.localeCompare(b.side));

const p50 = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)] ?? NaN;
};
const STEPS = ['request -> node stream opened', 'node stream opened -> node headers', 'node headers -> node first data', 'node first data -> first client write'];
const rows = [];
for (const run of runs) {
  const probe = JSON.parse(readFileSync(join(run.folder, 'llm-ttft-probe.json'), 'utf8'));
  const marksText = readFileSync(join(run.folder, 'llm-ttft-marks.txt'), 'utf8');
  const wall = [...marksText.matchAll(/^(?:request event -> node stream opened|node stream opened -> node headers|node headers -> node first data|node first data -> first write to client): p50 (\d+)/gm)].map((m) => Number(m[1]));
  const cpu = [...marksText.matchAll(/gateway CPU p50 (\d+)/g)].map((m) => Number(m[1]));
  rows.push({ side: run.side, turn: run.turn, addedMedianMs: probe.medianDiffUs / 1000, addedP50DiffMs: (probe.gateway.p50Us - probe.direct.p50Us) / 1000, wallUs: wall, cpuUs: cpu });
}
const line = (cells) => `| ${cells.join(' | ')} |`;
const out = [line(['run', 'added, median of pairs (ms)', ...STEPS.map((s) => `${s}: wall / CPU µs`)]), line(['---', '---', ...STEPS.map(() => '---')])];
for (const row of rows) out.push(line([`${row.side} ${row.turn}`, row.addedMedianMs.toFixed(2), ...STEPS.map((_, k) => `${row.wallUs[k] ?? '?'} / ${row.cpuUs[k] ?? '?'}`)]));
for (const side of ['base', 'head']) {
  const mine = rows.filter((row) => row.side === side);
  if (mine.length === 0) continue;
  out.push(line([`${side}, median of runs`, p50(mine.map((r) => r.addedMedianMs)).toFixed(2), ...STEPS.map((_, k) => `${p50(mine.map((r) => r.wallUs[k]))} / ${p50(mine.map((r) => r.cpuUs[k]))}`)]));
}
process.stdout.write(`${out.join('\n')}\n`);
process.stderr.write(JSON.stringify(rows) + '\n');
