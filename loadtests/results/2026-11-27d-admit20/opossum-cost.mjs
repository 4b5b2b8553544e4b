// µs per call: a promise resolved on a later macrotask, awaited directly vs through the node breaker (opossum fire).
import { createRequire } from 'node:module';
const require = createRequire('/work/wt-admit20/package.json');
const CircuitBreaker = require('opossum');
const breaker = new CircuitBreaker((thunk) => thunk(), { timeout: false, errorThresholdPercentage: 50, volumeThreshold: 5, resetTimeout: 5000, rollingCountTimeout: 10000, errorFilter: () => false, name: 'n', rollingPercentilesEnabled: false, enableSnapshots: false });
breaker.on('success', () => {});
breaker.on('failure', () => {});
const N = 3000;
const run = async (through) => {
  const pre = [], post = [];
  for (let i = 0; i < N; i++) {
    let resolveIt;
    const t0 = process.hrtime.bigint();
    const p = new Promise((r) => (resolveIt = r));
    const q = through ? breaker.fire(() => p) : p;
    const t1 = process.hrtime.bigint();
    await new Promise((r) => setImmediate(r));
    let t2;
    const done = q.then(() => process.hrtime.bigint());
    t2 = process.hrtime.bigint();
    resolveIt(1);
    const t3 = await done;
    pre.push(Number(t1 - t0) / 1000);
    post.push(Number(t3 - t2) / 1000);
    await new Promise((r) => setTimeout(r, 0));
  }
  const p50 = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(2);
  console.log(through ? 'opossum' : 'direct ', 'call p50', p50(pre), 'µs; resolve -> continuation p50', p50(post), 'µs');
};
for (let k = 0; k < 2; k++) { await run(false); await run(true); }
