// Cost of one promise hop (new Promise + resolve from a later callback + await resume) vs a plain callback.
const N = 200000;
function viaCallback(done) { setImmediate(() => done(1)); }
function viaPromise() { return new Promise((resolve) => setImmediate(() => resolve(1))); }
async function runPromise() { let s = 0; for (let i = 0; i < N; i++) s += await viaPromise(); return s; }
function runCallback() { return new Promise((res) => { let s = 0, i = 0; const step = (v) => { s += v; if (++i < N) viaCallback(step); else res(s); }; viaCallback(step); }); }
for (let r = 0; r < 3; r++) {
  let t = process.cpuUsage(); await runCallback(); const cb = process.cpuUsage(t);
  t = process.cpuUsage(); await runPromise(); const pr = process.cpuUsage(t);
  console.log(`round ${r}: callback ${((cb.user + cb.system) / N).toFixed(3)} µs/hop, promise ${((pr.user + pr.system) / N).toFixed(3)} µs/hop, diff ${(((pr.user + pr.system) - (cb.user + cb.system)) / N).toFixed(3)}`);
}
