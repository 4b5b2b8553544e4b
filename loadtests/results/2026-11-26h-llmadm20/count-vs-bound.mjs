// The prompt count against its bound, warm, in a loop (issue 20, eighth pass): taskset -c 0 node --import tsx loadtests/results/2026-11-26h-llmadm20/count-vs-bound.mjs
import { loadCl100kCounter } from '../../../shared/src/llm/cl100k-counter.ts';
const c = await loadCl100kCounter();
const prompts = ['tell me a story about a gateway', 'warm'];
for (const p of prompts) {
  for (let round = 0; round < 3; round++) {
    let n = 0; const t0 = process.hrtime.bigint();
    for (let i = 0; i < 20000; i++) n += c.count(p + (i % 2 === 0 ? '' : ' '));
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < 20000; i++) n += c.upperBound(p + (i % 2 === 0 ? '' : ' '));
    const t2 = process.hrtime.bigint();
    console.log(JSON.stringify(p), 'count µs/call', (Number(t1 - t0) / 20000 / 1000).toFixed(2), 'bound µs/call', (Number(t2 - t1) / 20000 / 1000).toFixed(3), n);
  }
}
