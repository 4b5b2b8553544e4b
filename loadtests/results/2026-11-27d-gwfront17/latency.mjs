// Per point and side: median p50 / p99 (ms) and req/s over the rounds of one gateway-interleaved-ab.ts report,
// and per round whether B's net CPU was below A's. Usage: node latency.mjs run1/gateway-ab-rate.json
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const median = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  const n = v.length;
  return n === 0 ? NaN : n % 2 === 1 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
};
const of = (point, side) => report.samples.filter((s) => s.point === point && s.side === side).sort((a, b) => a.round - b.round);
console.log('| point | A p50 ms | B p50 ms | A p99 ms | B p99 ms | rounds B CPU < A |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const point of [...new Set(report.samples.map((s) => s.point))]) {
  const a = of(point, 'A');
  const b = of(point, 'B');
  const ms = (samples, key) => median(samples.map((s) => (s[key] ?? NaN) / 1000)).toFixed(3);
  const lower = a.filter((s, i) => b[i] !== undefined && b[i].netCpuUs < s.netCpuUs).length;
  console.log(`| ${point} | ${ms(a, 'p50Us')} | ${ms(b, 'p50Us')} | ${ms(a, 'p99Us')} | ${ms(b, 'p99Us')} | ${lower} of ${a.length} |`);
}
