/**
 * The gateway's unary gRPC upstream on node:http2 (A) and on the raw HTTP/2 client (B, `rawH2`), in
 * turns in one process: CPU of this process per ModelInfer call (`simple`, c=1, sequential) and bytes
 * allocated per call, against a real node whose gRPC address is given. Load-independent measures: the
 * process's own CPU time, not wall time, so the node and other load on the box move them little.
 *
 *   GRPC_NODE=127.0.0.1:8001 [ROUNDS=6] [CALLS=3000] taskset -c 0 node --import tsx loadtests/src/scenarios/grpc-upstream-client-ab.ts
 */
import { createStaticNodeDirectory } from '../../../gateway/src/adapters/fleet/index.js';
import { createH2Transport } from '../../../gateway/src/adapters/grpc/h2-transport.js';
import { simpleRequest } from '../../../gateway/test/support/test-node-requests.js';

const address = process.env.GRPC_NODE ?? '127.0.0.1:8001';
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CALLS = Number(process.env.CALLS ?? 3000);
const view = createStaticNodeDirectory([{ id: 'n', grpcAddress: address }]).all()[0]!;
const sides = { A: createH2Transport({ rawH2: false }), B: createH2Transport({ rawH2: true }) };
const requests = Array.from({ length: 64 }, (_, i) => simpleRequest(i));

async function window(side: 'A' | 'B', calls: number): Promise<{ cpuUs: number }> {
  const transport = sides[side];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await transport.infer(view, requests[i % requests.length]!, { deadline: Date.now() + 10_000 });
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / calls };
}

const results: Record<'A' | 'B', number[]> = { A: [], B: [] };
// ONLY=B: one side alone (for a CPU profile of what remains).
if (process.env.ONLY === 'B') {
  console.log(`B alone: ${(await window('B', CALLS)).cpuUs.toFixed(1)} µs/call`);
  process.exit(0);
}
await window('A', 500);
await window('B', 500);
for (let round = 0; round < ROUNDS; round++) {
  const order: Array<'A' | 'B'> = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
  for (const side of order) {
    const { cpuUs } = await window(side, CALLS);
    results[side].push(cpuUs);
  }
  console.log(`round ${round}: A (node:http2) ${results.A.at(-1)!.toFixed(1)} µs/call, B (raw client) ${results.B.at(-1)!.toFixed(1)} µs/call, B/A ${(results.B.at(-1)! / results.A.at(-1)!).toFixed(2)}`);
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const wins = results.B.filter((b, i) => b < results.A[i]!).length;
console.log(JSON.stringify({ address, rounds: ROUNDS, calls: CALLS, medianA: median(results.A), medianB: median(results.B), ratio: median(results.B) / median(results.A), bLowerIn: `${wins}/${ROUNDS}`, A: results.A, B: results.B }));
await sides.A.close();
await sides.B.close();
