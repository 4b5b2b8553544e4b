// Tables of ab-all.sh's runs: node ab-table.mjs DIR (DIR holds ttft-{base,head}-N and llm-{base,head}-N).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
const dir = process.argv[2] ?? '.';
const load = (name, file) => {
  const root = join(dir, name);
  if (!existsSync(root)) return undefined;
  const day = readdirSync(root)[0];
  return JSON.parse(readFileSync(join(root, day, file), 'utf8'));
};
const f = (v, d = 1) => (v === undefined ? '-' : v.toFixed(d));
console.log('| turn | side | added first token, median of pair diffs ms | gateway TTFT p50 / p99 ms | direct p50 / p99 ms | gateway CPU per stream ms (whole, idle incl.) |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (let t = 1; t <= 3; t++) for (const side of ['base', 'head']) {
  const j = load(`ttft-${side}-${t}`, 'llm-ttft-probe.json');
  if (j) console.log(`| ${t} | ${side} | ${f(j.medianDiffUs / 1000, 2)} | ${f(j.gateway.p50Us / 1000, 2)} / ${f(j.gateway.p99Us / 1000, 2)} | ${f(j.direct.p50Us / 1000, 2)} / ${f(j.direct.p99Us / 1000, 2)} | ${f(j.gatewayCpuUsPerStream / 1000, 2)} |`);
}
console.log('\n| turn | side | gateway CPU µs/token gross 1 / 16 / 64 | net of idle | gateway-h1 (node:http upstream) | bare node:http relay anchor (before/after mean) | write floor |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (let t = 1; t <= 3; t++) for (const side of ['base', 'head']) {
  const j = load(`llm-${side}-${t}`, 'llm.json');
  if (!j) continue;
  const s = (k) => j.summary.map((x) => f(x[k])).join(' / ');
  console.log(`| ${t} | ${side} | ${s('gatewayCpuUsPerToken')} | ${s('gatewayCpuUsPerTokenNetOfIdle')} | ${s('gatewayH1CpuUsPerToken')} | ${s('anchorCpuUsPerToken')} | ${s('writeFloorCpuUsPerToken')} |`);
}
