// usage: node prof-window.mjs FILE.cpuprofile SKIP_SECONDS [TOP_N]: self and inclusive time of the samples after SKIP_SECONDS
import { readFileSync } from 'node:fs';
const [file, skip='4', N='50', inf='0'] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map(n => [n.id, n]));
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = p.startTime; const self = new Map(), incl = new Map(); let busy = 0; const end = p.endTime;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i]; if (t < p.startTime + Number(skip) * 1e6) continue;
  const dt = p.timeDeltas[i+1] ?? 0; const n = byId.get(p.samples[i]); const name = n.callFrame.functionName || '(anon)';
  if (name === '(idle)' || name === '(program)') continue;
  busy += dt; const key = `${name} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const seen = new Set(); let id = n.id;
  while (id !== undefined) { const m = byId.get(id); const k = `${m.callFrame.functionName || '(anon)'} ${m.callFrame.url.split('/').pop()}:${m.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + dt); } id = parent.get(id); }
}
const per = Number(inf) > 0 ? Number(inf) : 0;
const show = (m) => [...m].sort((a,b)=>b[1]-a[1]).slice(0, Number(N)).map(([k,v]) => `${(100*v/busy).toFixed(1).padStart(5)}% ${(v/1000).toFixed(0).padStart(6)}ms ${per? (v/per).toFixed(1).padStart(6)+'us/inf':''} ${k}`).join('\n');
console.log(`busy ${(busy/1000).toFixed(0)} ms after ${skip}s, span ${((end-p.startTime)/1e6).toFixed(1)}s`);
console.log('--- self'); console.log(show(self)); console.log('--- inclusive'); console.log(show(incl));
