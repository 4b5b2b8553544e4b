// CPU per wave-request batch key (shape.slice(1).join(',') and the `name:dims` string, as inputKey builds it) on
// the shape array as a fresh JSON.parse gives it and as the header memo (shared/src/kserve/header-memo.ts) hands it
// out: frozen. Also the reuse check a memo would do instead (compare the dims with the last ones).
const N = 1_000_000;
const plain = JSON.parse('{"name":"INPUT0","shape":[1,1024]}');
const frozen = JSON.parse('{"name":"INPUT0","shape":[1,1024]}');
Object.freeze(Object.freeze(frozen).shape);
const key = (input) => `${input.name}:${input.shape.slice(1).join(',')}`;
const last = [1, 1024];
const same = (shape) => { if (shape.length !== last.length) return false; for (let i = 1; i < shape.length; i++) if (shape[i] !== last[i]) return false; return true; };
let sink = 0;
const ns = (f) => { const t = process.cpuUsage(); for (let i = 0; i < N; i++) sink += f(); const u = process.cpuUsage(t); return ((1000 * (u.user + u.system)) / N).toFixed(0); };
for (let r = 0; r < 3; r++) {
  console.log(`round ${r}: key on plain shape ${ns(() => key(plain).length)} ns, on frozen shape ${ns(() => key(frozen).length)} ns; reuse check on frozen ${ns(() => (same(frozen.shape) ? 1 : 0))} ns`);
}
if (sink === 0) console.log('');
