import { unstable_dev } from 'wrangler';
const t = Date.now();
const worker = await unstable_dev('gateway/src/entry-workers.ts', {
  config: 'gateway/wrangler.toml',
  vars: { TESSERA_ADMIN_KEY: 'admin-secret', TESSERA_FLEET_TOKEN: 'fleet-secret', GATEWAY_CONFIG: '{}' },
  experimental: { disableExperimentalWarning: true }, ip: '127.0.0.1', persist: false, logLevel: 'warn',
});
console.log('started', Date.now() - t, worker.address, worker.port);
const u = `http://127.0.0.1:${worker.port}`;
let r = await fetch(`${u}/v2/health/live`); console.log(r.status);
r = await fetch(`${u}/v2`); console.log(r.status, await r.text());
r = await fetch(`${u}/admin/fleet`, {headers:{authorization:'Bearer admin-secret'}}); console.log(r.status, await r.text());
r = await fetch(`${u}/admin/fleet/report`, {method:'POST', headers:{authorization:'Bearer fleet-secret'}, body: JSON.stringify({version:1,nodeId:'n1',httpAddress:'127.0.0.1:9',grpcAddress:null,startedAt:1,sentAt:Date.now(),seq:1,ttlMs:60000,models:[{name:'simple',versions:['1'],queued:0,inflight:0,capacity:8,execTimeEmaMs:null}],draining:false})}); console.log(r.status, await r.text());
r = await fetch(`${u}/admin/fleet`, {headers:{authorization:'Bearer admin-secret'}}); console.log(r.status, await r.text());
await worker.stop();
