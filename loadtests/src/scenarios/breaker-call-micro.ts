/**
 * What an upstream call pays around the node's opossum breaker (guardedCall -> NodeBreakers.run ->
 * opossum fire), with the call itself an already settled promise: ns and bytes allocated per call,
 * calls awaited one at a time, the breaker closed. `node --expose-gc --max-semi-space-size=256 --import tsx loadtests/src/scenarios/breaker-call-micro.ts`
 */
import { createNodeBreakers } from '../../../gateway/src/adapters/grpc/node-breakers.js';
import { guardedCall } from '../../../gateway/src/adapters/grpc/guarded-call.js';
import type { NodeView } from '../../../gateway/src/core/ports/index.js';

const breakers = createNodeBreakers();
const node = { id: 'n1', httpAddress: null, grpcAddress: '127.0.0.1:1' } as unknown as NodeView;
const answer = { ok: true };
const call = (): Promise<typeof answer> => Promise.resolve(answer);
const gc = (globalThis as { gc?: () => void }).gc;

for (let round = 0; round < 7; round++) {
  const n = 50_000;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await guardedCall(breakers, node, { deadline: Date.now() + 10_000 }, call);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  // Allocation per call: run with --max-semi-space-size=256 so that no scavenge falls in the window.
  const bytes = (process.memoryUsage().heapUsed - heapBefore) / n;
  console.log(`round ${round}: ${ns.toFixed(0)} ns per call, heap growth ${bytes.toFixed(0)} B per call`);
}
breakers.close();
