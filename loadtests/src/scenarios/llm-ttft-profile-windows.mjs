// Where a gateway's CPU went inside one step of its streams' first token: a --cpu-prof profile of the
// gateway and the llm-ttft-probe marks of the same run (LLM_TTFT_PROBE_MARKS=1 with
// LLM_TTFT_PROBE_PROFILE_DIR and LLM_TTFT_PROBE_NODE_FLAGS="--cpu-prof-interval 50") share one clock
// (CLOCK_MONOTONIC), so the samples between marks A and B of each stream are that step's. Prints the
// functions' self and inclusive µs per stream. Marks: 0 request event, 1 node stream opened, 2 node
// headers, 3 node's first data, 4 first write to the client.
// usage: node loadtests/src/scenarios/llm-ttft-profile-windows.mjs PROFILE_DIR MARKS_JSON A B
import { readFileSync, readdirSync } from 'node:fs';
const [profDir, marksFile, a, b] = process.argv.slice(2);
const p = JSON.parse(readFileSync(`${profDir}/${readdirSync(profDir)[0]}`, 'utf8'));
const { marks } = JSON.parse(readFileSync(marksFile, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)[0]}:${n.callFrame.lineNumber}`;
let ts = p.startTime; const times = p.timeDeltas.map((d) => (ts += d));
const wins = marks.map((m) => [m[Number(a)] / 1000, m[Number(b)] / 1000]).sort((x, y) => x[0] - y[0]);
const self = new Map(), incl = new Map(); let total = 0, wall = 0;
for (const [s, e] of wins) wall += e - s;
let w = 0;
for (let i = 0; i < p.samples.length; i++) {
  const t = times[i]; const d = p.timeDeltas[i + 1] ?? 0;
  while (w < wins.length && wins[w][1] < t) w++;
  if (w >= wins.length) break;
  if (t < wins[w][0]) continue;
  total += d;
  const n = byId.get(p.samples[i]);
  self.set(name(n), (self.get(name(n)) ?? 0) + d);
  const seen = new Set(); let cur = n.id;
  while (cur !== undefined) { const k = name(byId.get(cur)); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + d); } cur = parent.get(cur); }
}
const per = (v) => (v / wins.length).toFixed(1).padStart(7);
console.log(`windows ${wins.length}, wall per window ${(wall / wins.length).toFixed(0)} µs, sampled per window ${(total / wins.length).toFixed(0)} µs`);
console.log('--- self per window µs'); for (const [k, v] of [...self].sort((x, y) => y[1] - x[1]).slice(0, 30)) console.log(per(v), k);
console.log('--- inclusive per window µs'); for (const [k, v] of [...incl].sort((x, y) => y[1] - x[1]).slice(0, 80)) console.log(per(v), k);
