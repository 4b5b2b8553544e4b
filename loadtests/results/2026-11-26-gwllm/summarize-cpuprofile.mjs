import { readFileSync } from 'node:fs';
const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const startAfterUs = Number(process.argv[3] ?? 0); // skip startup
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
let t = 0; const self = new Map(); const incl = new Map(); let total = 0;
const name = (n) => { const cf = n.callFrame; const u = cf.url.includes('node_modules') ? cf.url.split('node_modules/')[1].split('/').slice(0,1).join('/') : cf.url.split('/').slice(-2).join('/'); return `${cf.functionName || '(anon)'} [${u}]`; };
prof.samples.forEach((id, i) => {
  t += prof.timeDeltas[i] ?? 0; if (t < startAfterUs) return;
  const n = byId.get(id); const us = prof.timeDeltas[i + 1] ?? prof.timeDeltas[i] ?? 0;
  if (n.callFrame.functionName === '(idle)') return;
  total += us; const k = name(n); self.set(k, (self.get(k) ?? 0) + us);
  const seen = new Set(); let cur = id; while (cur !== undefined) { const nn = byId.get(cur); const kk = name(nn); if (!seen.has(kk)) { seen.add(kk); incl.set(kk, (incl.get(kk) ?? 0) + us); } cur = parent.get(cur); }
});
console.log('busy ms after start', (total/1000).toFixed(0));
console.log('--- self'); for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((us / total * 100).toFixed(1).padStart(5), '%', k);
console.log('--- inclusive'); for (const [k, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log((us / total * 100).toFixed(1).padStart(5), '%', k);
