/**
 * H2StreamHeaderReader.get for the 8 names the pipeline asks per ModelInfer (counted on the bench: traceparent,
 * tracestate, x-request-id, authorization, x-api-key, x-tessera-deadline-ms, cache-control, pragma), on the
 * bench client's headers: ns per call. `node --import tsx loadtests/src/scenarios/grpc-front-header-micro.ts`
 */
import { H2StreamHeaderReader } from '../../../gateway/src/adapters/grpc-front/call-bridge.js';
const headers = Object.assign(Object.create(null), { ':path': '/inference.GRPCInferenceService/ModelInfer', ':method': 'POST', ':scheme': 'http', ':authority': '127.0.0.1:42501', 'content-type': 'application/grpc', te: 'trailers', authorization: 'Bearer tsk_0123456789abcdef', 'cache-control': 'no-store' });
const names = ['traceparent', 'tracestate', 'x-request-id', 'authorization', 'x-api-key', 'x-tessera-deadline-ms', 'cache-control', 'pragma'];
let sink = 0;
for (let round = 0; round < 7; round++) {
  const n = 300_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = new H2StreamHeaderReader(headers, Number.POSITIVE_INFINITY);
    for (const name of names) sink += r.get(name)?.length ?? 0;
  }
  const ns = Number(process.hrtime.bigint() - t0) / n;
  console.log(`round ${round}: ${ns.toFixed(0)} ns per call (8 lookups)`);
}
if (sink === 42) console.log('');
