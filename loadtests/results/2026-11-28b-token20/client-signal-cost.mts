// A stream's "client gone" signal as the LLM path uses it (made, two listeners added and removed, never aborted):
// an AbortController (030ec03) against ClientGone (this branch), µs per stream, one stream every 2 ms (cold-ish,
// as at one stream; 300 per round, p50) and warm (200,000 in a loop).
// usage: taskset -c 1 npx tsx loadtests/results/2026-11-28b-token20/client-signal-cost.mts
import { ClientGone } from '../../../gateway/src/adapters/node-http/client-gone.js';

const listenerA = (): void => undefined;
const listenerB = (): void => undefined;
const withController = (): void => {
  const controller = new AbortController();
  const signal = controller.signal;
  if (signal.aborted) return;
  signal.addEventListener('abort', listenerA, { once: true });
  signal.addEventListener('abort', listenerB, { once: true });
  signal.removeEventListener('abort', listenerA);
  signal.removeEventListener('abort', listenerB);
};
const withClientGone = (): void => {
  const signal = new ClientGone();
  if (signal.aborted) return;
  signal.addEventListener('abort', listenerA);
  signal.addEventListener('abort', listenerB);
  signal.removeEventListener('abort', listenerA);
  signal.removeEventListener('abort', listenerB);
};
const spaced = async (f: () => void): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    await new Promise((r) => setTimeout(r, 2));
    const t = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[150]!;
};
const warm = (f: () => void): number => {
  const n = 200_000;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / 1000 / n;
};
for (let round = 1; round <= 3; round++) {
  const a = await spaced(withController);
  const b = await spaced(withClientGone);
  console.log(`round ${round}: spaced p50 AbortController ${a.toFixed(2)} µs, ClientGone ${b.toFixed(2)} µs; warm ${warm(withController).toFixed(3)} µs, ${warm(withClientGone).toFixed(3)} µs`);
}
