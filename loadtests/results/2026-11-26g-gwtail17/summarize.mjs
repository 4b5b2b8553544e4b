// Lines up the c1-tail runs of runs/<side>-<n>/gateway-c1-tail.json as one markdown table (A/B in turns).
// node loadtests/results/2026-11-26g-gwtail17/summarize.mjs RUN...
import { readFileSync } from 'node:fs';
const dir = new URL('./runs/', import.meta.url);
const r0 = (x) => (x === undefined || x === null ? '-' : Math.round(x).toLocaleString('en-US'));
const pct = (x) => `${Math.round(x * 100)}%`;
console.log('| run | gateway p50 / p99 µs | direct p50 / p99 | main-thread CPU per request p50 / p99 / mean | all: with timer, with Redis write | CPU top 1%: with timer, timer µs, with Redis | slowest 1%: main-thread ran µs, timer µs | log-batch timer (main: writes; b3: queues the write): n, µs | fleet-refresh timer: n, µs | scavenges / 1000 |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const run of process.argv.slice(2)) {
  const j = JSON.parse(readFileSync(new URL(`${run}/gateway-c1-tail.json`, dir), 'utf8'));
  const round = j.report.rounds[0];
  const set = (name) => round.sets.find((s) => s.name === name);
  const all = set('all'), top = set('most main-thread CPU, top 1%'), slow = set('slowest 1%');
  const timer = (re) => j.report.timersByLabel.filter((t) => re.test(t.label)).reduce((a, t) => [a[0] + t.count, a[1] + t.totalUs], [0, 0]);
  const flush = timer(/this\.(flush|due)\(\)/), refresh = timer(/refresh|periodic/);
  const g = round.paths.gateway, d = round.paths.direct, m = round.mainRun;
  console.log(`| ${run} | ${r0(g.p50Us)} / ${r0(g.p99Us)} | ${r0(d.p50Us)} / ${r0(d.p99Us)} | ${r0(m.p50Us)} / ${r0(m.p99Us)} / ${r0(j.report.gcCost.mainRunUsPerRequest)} | ${pct(all.withTimer)}, ${pct(all.withRedis)} | ${pct(top.withTimer)}, ${r0(top.timerUs)}, ${pct(top.withRedis)} | ${r0(slow.mainRunUs)}, ${r0(slow.timerUs)} | ${flush[0]}, ${r0(flush[1])} | ${refresh[0]}, ${r0(refresh[1])} | ${j.report.gcCost.minorPer1000.toFixed(1)} |`);
}
