// The streamed answer head, rendered in full (030ec03's renderStreamHead) and from the memo (this branch), µs per
// call: warm (a loop of 200,000) and spaced (one call every 2 ms, as one stream at a time calls it; 300 calls).
// usage: taskset -c 1 npx tsx loadtests/results/2026-11-28b-token20/head-memo-cost.mts /tmp/t20-old-stream-writer.ts
import { renderStreamHead as memo } from '../../../shared/src/http/raw-http1/stream-writer.js';
const { renderStreamHead: full } = (await import(process.argv[2]!)) as { renderStreamHead: typeof memo };
const headers = () => ({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', 'Transfer-Encoding': 'chunked', 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '99' });
const warm = (f: typeof memo): number => {
  const n = 200_000; const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f(200, headers(), 5000, false);
  return Number(process.hrtime.bigint() - t) / 1000 / n;
};
const spaced = async (f: typeof memo): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    await new Promise((r) => setTimeout(r, 2));
    const h = headers(); const t = process.hrtime.bigint(); f(200, h, 5000, false); times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  times.sort((a, b) => a - b); return times[150]!;
};
for (let round = 1; round <= 3; round++) {
  console.log(`round ${round}: spaced p50 full ${(await spaced(full)).toFixed(2)} µs, memo ${(await spaced(memo)).toFixed(2)} µs; warm full ${warm(full).toFixed(3)} µs, memo ${warm(memo).toFixed(3)} µs`);
}
