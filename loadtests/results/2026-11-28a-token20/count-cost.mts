// µs per call of the gateway's prompt token count (cl100k_base, gpt-tokenizer) and its byte bound, by prompt length.
import { loadCl100kCounter } from '../../../shared/src/llm/cl100k-counter.js';
const counter = await loadCl100kCounter();
const words = 'the gateway relays a stream of tokens from the node to its client while it meters them and'.split(' ');
const text = (chars: number): string => { let s = ''; let i = 0; while (s.length < chars) s += words[i++ % words.length] + ' '; return s.slice(0, chars); };
for (const chars of [32, 256, 2048, 16384, 131072]) {
  const t = text(chars);
  const first = performance.now(); const tokens = counter.count(t); const firstUs = (performance.now() - first) * 1000;
  const n = Math.max(3, Math.floor(200000 / chars));
  for (let i = 0; i < 10; i++) counter.count(t);
  let start = performance.now(); for (let i = 0; i < n; i++) counter.count(t); const countUs = ((performance.now() - start) * 1000) / n;
  start = performance.now(); for (let i = 0; i < n * 10; i++) counter.upperBound!(t); const boundUs = ((performance.now() - start) * 1000) / (n * 10);
  console.log(`${chars} chars, ${tokens} tokens: count first call ${firstUs.toFixed(1)} µs, warm ${countUs.toFixed(1)} µs (${((countUs * 1000) / Math.max(1, tokens)).toFixed(0)} ns/token); bound ${boundUs.toFixed(2)} µs`);
}
