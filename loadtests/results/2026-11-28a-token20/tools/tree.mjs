// usage: node tree.mjs PROFDIR MARKS A B [minUs]
import { readFileSync, readdirSync } from 'node:fs';
const [profDir, marksFile, a, b, minArg] = process.argv.slice(2);
const min = Number(minArg ?? 5);
const p = JSON.parse(readFileSync(`${profDir}/${readdirSync(profDir)[0]}`, 'utf8'));
const { marks } = JSON.parse(readFileSync(marksFile, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber}`;
let ts = p.startTime; const times = p.timeDeltas.map((d) => (ts += d));
const wins = marks.map((m) => [m[Number(a)] / 1000, m[Number(b)] / 1000]).sort((x, y) => x[0] - y[0]);
const tot = new Map();
let w = 0;
for (let i = 0; i < p.samples.length; i++) {
  const t = times[i]; const d = p.timeDeltas[i + 1] ?? 0;
  while (w < wins.length && wins[w][1] < t) w++;
  if (w >= wins.length) break;
  if (t < wins[w][0]) continue;
  let cur = p.samples[i];
  while (cur !== undefined) { tot.set(cur, (tot.get(cur) ?? 0) + d); cur = parent.get(cur); }
}
const N = wins.length;
const print = (id, depth) => {
  const v = (tot.get(id) ?? 0) / N; if (v < min) return;
  const n = byId.get(id);
  console.log(`${'  '.repeat(depth)}${v.toFixed(1)} ${name(n)}`);
  for (const c of (n.children ?? []).slice().sort((x, y) => (tot.get(y) ?? 0) - (tot.get(x) ?? 0))) print(c, depth + 1);
};
print(p.nodes[0].id, 0);
