import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFleet } from '../scenarios/gateway-fleet.js';
import { sleepRequest } from '../scenarios/gateway-phases.js';
import { createHttpInferClient } from '../lib/http-client.js';
import { scrapeMetrics, selectSamples } from '../lib/prom-text.js';
const work = await mkdtemp(join(tmpdir(), 'gwdbg-'));
const fleet = await startFleet(work, { serviceMs: 20, slowFactor: 3, workInstances: 2, steadyInstances: 2 }, (m) => console.error(m));
try {
  const key = { authorization: `Bearer ${fleet.keys.free}` };
  const client = createHttpInferClient('127.0.0.1', fleet.gateways.p2c.port, 200, { headers: key });
  const req = sleepRequest('steady');
  const t0 = performance.now();
  const results = await Promise.allSettled(Array.from({ length: 150 }, async () => { const s = performance.now(); try { await client.infer(req); return performance.now() - s; } catch (e) { throw new Error(`${(performance.now()-s).toFixed(1)} ${(e as Error).message}`); } }));
  console.log('elapsed', performance.now() - t0);
  const ok = results.filter((r) => r.status === 'fulfilled');
  console.log('ok', ok.length, 'max', Math.max(...ok.map((r) => (r as PromiseFulfilledResult<number>).value)));
  const bad = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason.message));
  console.log('failed', bad.length, bad.slice(0, 5));
  const s = await scrapeMetrics(`http://127.0.0.1:${fleet.gateways.p2c.port}/metrics`);
  for (const x of s.filter((x) => /admission|queue_wait_seconds_count|upstream_duration_seconds_count/.test(x.name))) console.log(x.name, JSON.stringify(x.labels), x.value);
  await client.close();
} finally { await fleet.close(); }
