/**
 * For worker-pool.test.ts: a process whose pool keeps an idle thread through a long grace. It prints how
 * many threads the pool still has and returns; the process must then end on its own, not after the grace.
 */
import { WorkerPool } from '../../src/backends/worker/worker-pool.js';
import type { TestSessionInit } from './pool-test-worker.js';

const pool = new WorkerPool({ entry: new URL('./pool-test-worker.ts', import.meta.url), size: 1, idleGraceMs: 600_000 });
const init: TestSessionInit = { name: 'idle_0', opens: new SharedArrayBuffer(4) };
const session = await pool.open(init, { instanceName: 'idle_0' });
await session.close();
process.stdout.write(`${pool.stats().threads}\n`);
