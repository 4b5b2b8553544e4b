// Summarizes gateway-c1-sched.ts runs taken in turns: node summarize-turns.mjs <dir> (runs in <dir>/<variant>-<turn>/sched-join.json).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
/** Each run folder's join (name, parsed sched-join.json), skipping folders without one. */
function* runJoins() {
  for (const name of readdirSync(dir).sort()) {
    let json;
    try {
      json = JSON.parse(readFileSync(join(dir, name, 'sched-join.json'), 'utf8'));
    } catch {
      continue;
    }
    yield [name, json];
  }
}
const rows = [];
for (const [name, json] of runJoins()) {
  const s = json.summary;
  const g = s.gateway[0];
  const n = s.nginx[0];
  const d = s.direct[0];
  rows.push([name, json.flags || '(image flags)',
    `${(g.p50Us - d.p50Us).toFixed(0)} / ${(g.p99Us - d.p99Us).toFixed(0)}`,
    `${(n.p50Us - d.p50Us).toFixed(0)} / ${(n.p99Us - d.p99Us).toFixed(0)}`,
    `${(g.ownP50Us - d.ownP50Us).toFixed(0)} / ${(g.ownP99Us - d.ownP99Us).toFixed(0)}`,
    `${(n.ownP50Us - d.ownP50Us).toFixed(0)} / ${(n.ownP99Us - d.ownP99Us).toFixed(0)}`,
    `${g.cpuMainUs} / ${g.cpuAllUs}`,
    `${g.all['gateway other threads']} → ${g.slow['gateway other threads']}`,
    `${g.all['server main waiting for its own threads']} → ${g.slow['server main waiting for its own threads']}`,
    `${g.all['server main running']} → ${g.slow['server main running']}`,
    `${g.all['server main waiting for another process']} → ${g.slow['server main waiting for another process']}`,
  ]);
}
console.log('| run | gateway flags | gateway added p50 / p99 µs | nginx added p50 / p99 | gateway added, less foreign waits | nginx added, less foreign waits | gateway CPU per request: main / all threads µs | gateway other threads run, all → slowest 5% | main waiting for own threads | main running | main waiting for another process |');
console.log(`|${' --- |'.repeat(11)}`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);

// Causes of the slowest 5% and 1%, summed over the runs of each flag set, per target.
const byFlags = new Map();
for (const [name, json] of runJoins()) {
  const key = json.flags || '(image flags)';
  const entry = byFlags.get(key) ?? { runs: 0 };
  entry.runs++;
  for (const [target, rounds] of Object.entries(json.summary)) {
    for (const s of rounds) {
      for (const [which, counts] of [['5%', s.categories], ['1%', s.categoriesP99]]) {
        const k = `${target} slowest ${which}`;
        entry[k] ??= {};
        for (const [cause, n] of Object.entries(counts)) entry[k][cause] = (entry[k][cause] ?? 0) + n;
      }
    }
  }
  byFlags.set(key, entry);
}
for (const [flags, entry] of byFlags) {
  console.log(`\n${flags} (${entry.runs} runs):\n\n| requests | causes (count) |\n| --- | --- |`);
  for (const [k, counts] of Object.entries(entry)) {
    if (k === 'runs') continue;
    console.log(`| ${k} | ${Object.entries(counts).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join('; ')} |`);
  }
}
