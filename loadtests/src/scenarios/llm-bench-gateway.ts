/**
 * The gateway of the LLM benches: one tenant key on a tier with request and token limits on (through
 * Redis leases, never reached), started from the production bundle. `keepWarmMs` sets the config's
 * `rateLimitKeepWarmMs` (undefined: the gateway's default). LLM_BENCH_RAW_BELOW_STREAMS sets the config's
 * `llm.nodeRawBelowStreams` (raw HTTP/1.1 writes below that many streams per node; a build without the key refuses it).
 * LLM_BENCH_LEASE_MS sets `rateLimitLeaseMs` (0: every rate-limit and token decision a script call in Redis, as for a
 * tier whose lease is smaller than its prompts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchServer, type RunningServer } from '../lib/processes/server-process.js';
import { UNLIMITED_TIER } from './fleet-launch.js';

const GATEWAY_BIN = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));

export interface LlmBenchGatewayOptions {
  readonly work: string;
  /** Distinguishes the config files of several gateways in one work folder. */
  readonly name: string;
  readonly redisUrl: string;
  /** SHA-256 of the tenant's key (benchKey). */
  readonly keyHash: string;
  readonly keepWarmMs?: number;
  /** false: the node's LLM routes over HTTP/1.1 even when it advertises an HTTP/2 address (config llm.nodeHttp2). */
  readonly nodeHttp2?: boolean;
  /** A directory: the gateway runs with --cpu-prof there. */
  readonly profileDir?: string;
  /** Another production bundle (an absolute path, TESSERA_BUNDLE_DIR): a base build for an A/B. */
  readonly bundleDir?: string;
  /** `llm.nodeRawBelowStreams` for this gateway (else LLM_BENCH_RAW_BELOW_STREAMS, else the build's default). */
  readonly rawBelowStreams?: number;
  /** Node/V8 flags ahead of the script (a V8 flag measured against the same build without it). */
  readonly nodeFlags?: readonly string[];
}

export async function launchLlmBenchGateway(options: LlmBenchGatewayOptions): Promise<RunningServer> {
  const configFile = join(options.work, `gateway-${options.name}.json`);
  const rawBelow = options.rawBelowStreams ?? process.env.LLM_BENCH_RAW_BELOW_STREAMS;
  const leaseMs = process.env.LLM_BENCH_LEASE_MS;
  const llm = {
    ...(options.nodeHttp2 === undefined ? {} : { nodeHttp2: options.nodeHttp2 }),
    ...(rawBelow === undefined ? {} : { nodeRawBelowStreams: Number(rawBelow) }),
  };
  await writeFile(configFile, `${JSON.stringify({
    redisUrl: options.redisUrl,
    ...(options.keepWarmMs === undefined ? {} : { rateLimitKeepWarmMs: options.keepWarmMs }),
    ...(leaseMs === undefined ? {} : { rateLimitLeaseMs: Number(leaseMs) }),
    metrics: { requireAdminKey: false },
    ...(Object.keys(llm).length === 0 ? {} : { llm }),
    tiers: {
      'bench-llm': {
        priority: 1, queueTimeoutMs: 30_000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'], ...UNLIMITED_TIER,
        // Token limits on (every prompt and every 16 completion tokens charged through Redis leases), never reached.
        llm: { tokensPerMinute: 1_000_000_000 },
      },
    },
    tenants: [{ id: 'bench', tier: 'bench-llm', keys: [{ id: 'bench-1', hash: options.keyHash }] }],
  }, null, 2)}\n`);
  return launchServer({
    name: `tessera-gateway (${options.name})`,
    args: [...(options.nodeFlags ?? []), ...(options.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.profileDir]), GATEWAY_BIN, '--config', configFile, '--port', '0', '--host', '127.0.0.1'],
    startedMsg: 'tessera-gateway started',
    env: { REDIS_URL: '', ...(options.bundleDir === undefined ? {} : { TESSERA_BUNDLE_DIR: options.bundleDir }) },
  });
}
