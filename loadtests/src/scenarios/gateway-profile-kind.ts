/**
 * One gateway bundle under one kind of request only, for a CPU profile of that kind: the per-core stack
 * (gateway-per-core-stack.ts: gateway on core 0, Redis, node and this load generator on core 1), then
 * `simple` at PROFILE_RATE req/s for PROFILE_S seconds, of PROFILE_KIND = grpc-hit | http-hit |
 * grpc-miss | http-miss (a miss sends `cache-control: no-store`); PROFILE_MODEL=fp32 sends a 4 KB FP32
 * tensor each way (identity_fp32) instead; PROFILE_C=n runs a closed loop of n callers instead of the rate.
 *
 *   BENCH_GATEWAY_CPU_PROF=<dir> [TESSERA_BUNDLE_DIR=<bundle>] PROFILE_KIND=grpc-hit PROFILE_RATE=1000 \
 *     node --import tsx loadtests/src/scenarios/gateway-profile-kind.ts
 *
 * The gateway writes its .cpuprofile into BENCH_GATEWAY_CPU_PROF when it stops.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import { closedPoint, ratePoint } from './gateway-per-core-points.js';
import { FP32_4K_REQUEST, pinSelf, SIMPLE_REQUEST, startPerCoreStack } from './gateway-per-core-stack.js';

const KINDS = ['grpc-hit', 'http-hit', 'grpc-miss', 'http-miss'] as const;
const kind = (process.env.PROFILE_KIND ?? 'grpc-hit') as (typeof KINDS)[number];
if (!KINDS.includes(kind)) throw new Error(`PROFILE_KIND must be one of ${KINDS.join(', ')}`);
const seconds = Number(process.env.PROFILE_S ?? 10);
const rate = Number(process.env.PROFILE_RATE ?? 1000);
const callers = process.env.PROFILE_C === undefined ? undefined : Number(process.env.PROFILE_C);
const log = (message: string): void => void process.stderr.write(`${message}\n`);
const request = process.env.PROFILE_MODEL === 'fp32' ? FP32_4K_REQUEST : SIMPLE_REQUEST;

pinSelf(1);
const work = await mkdtemp(join(tmpdir(), 'gateway-profile-'));
const stack = await startPerCoreStack(work, log);
try {
  const auth = { authorization: `Bearer ${stack.key}` };
  const headers = kind.endsWith('miss') ? { ...auth, 'cache-control': 'no-store' } : auth;
  const client = kind.startsWith('grpc') ? createGrpcInferClient('127.0.0.1', stack.grpcPort, headers) : createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers });
  await client.infer(request);
  const call = (): Promise<unknown> => client.infer(request);
  const timing = { warmupS: 1, durationS: seconds };
  const p = callers === undefined ? await ratePoint(kind, call, rate, stack.gateway, timing) : await closedPoint(kind, call, callers, stack.gateway, timing);
  log(`${kind}: ${p.requestsPerSec.toFixed(0)} req/s, CPU ${p.cpuUsPerRequest.toFixed(1)} µs per request (main thread ${p.mainThreadUsPerRequest.toFixed(1)}), errors ${p.errors}, dropped ${p.dropped}`);
  await client.close();
} finally {
  await stack.close();
  await rm(work, { recursive: true, force: true });
}
