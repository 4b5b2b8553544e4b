/**
 * CPU per upstream call of watching its deadline: a Node timer per call (as h2-call.ts did) against the
 * shared CallDeadlines (h2-call-deadlines.ts). Each call arms its deadline (a 5 s timeout, as the bench's
 * calls carry, from a clock that moves a little between calls so the remaining times differ by the ms,
 * as they do) and clears it when it ends, a few calls in flight at a time.
 *
 *   taskset -c 0 node --import tsx loadtests/src/perf/call-deadline-cost.ts [calls=200000] [rounds=3]
 */
import { CallDeadlines } from '../../../gateway/src/adapters/grpc/h2-call-deadlines.js';

const CALLS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const TIMEOUT_MS = 5000;
const IN_FLIGHT = 4;
const noop = (): void => undefined;

async function perTimer(): Promise<number> {
  const t0 = process.hrtime.bigint();
  const live: NodeJS.Timeout[] = [];
  for (let i = 0; i < CALLS; i++) {
    live.push(setTimeout(noop, TIMEOUT_MS - (i % 7)));
    if (live.length > IN_FLIGHT) clearTimeout(live.shift());
    if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
  }
  for (const t of live) clearTimeout(t);
  return Number(process.hrtime.bigint() - t0) / 1000 / CALLS;
}

async function shared(): Promise<number> {
  const deadlines = new CallDeadlines();
  const t0 = process.hrtime.bigint();
  const live: ReturnType<CallDeadlines['add']>[] = [];
  for (let i = 0; i < CALLS; i++) {
    live.push(deadlines.add(Date.now() + TIMEOUT_MS - (i % 7), noop));
    if (live.length > IN_FLIGHT) deadlines.cancel(live.shift()!);
    if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
  }
  for (const e of live) deadlines.cancel(e);
  return Number(process.hrtime.bigint() - t0) / 1000 / CALLS;
}

for (let round = 0; round < ROUNDS; round++) {
  const a = await perTimer();
  const b = await shared();
  process.stdout.write(`round ${round}: a timer per call ${a.toFixed(3)} µs, shared deadlines ${b.toFixed(3)} µs per call\n`);
}
process.exit(0);
