import { readFileSync } from 'node:fs';
const [file] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map();
const dt = p.timeDeltas; const byId = new Map(p.nodes.map((n) => [n.id, n]));
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (dt[i] ?? 0));
let busy = 0; const groups = {};
const pick = (n) => { const u = n.callFrame.url, f = n.callFrame.functionName;
  if (u.includes('abort_controller')) return 'node:internal/abort_controller';
  if (u.includes('event_target')) return 'node:internal/event_target';
  if (/AbortController|AbortSignal|createAbortSignal/.test(f)) return 'AbortController/Signal (by name)';
  if (u.includes('/dist/') && /^(add|remove)(EventListener|AbortHandler)$/.test(f)) return 'bundle ' + f + ' (the watch)';
  return undefined; };
for (const [id, us] of self) { const n = byId.get(id); if (n.callFrame.functionName === '(idle)' || n.callFrame.functionName === '(program)') continue; busy += us; const g = pick(n); if (g) groups[g] = (groups[g] ?? 0) + us; }
console.log(`busy ${(busy / 1000).toFixed(0)} ms`);
for (const [g, us] of Object.entries(groups)) console.log(`${(100 * us / busy).toFixed(2)}%  ${(us / 1000).toFixed(1)} ms  ${g}`);
