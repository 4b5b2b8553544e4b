/**
 * Test support for the gateway's LLM routes: a real redis-server, a real node process serving
 * `token_stream` (the example decoupled model, vLLM-style I/O, streaming its prompt back token by
 * token) and a copy named `token_stream_b` (another tenant's model), and a real gateway on loopback
 * with the tenants and tiers the suites need. The models log each cancellation they see to a file,
 * which is how tests learn that closing the client stopped the model. The gateway may not import
 * gpu-node: the repository is written by `bin/tessera-models.js` and its config edited as text.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { spawnNode, type SpawnedNode } from './test-node-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const LLM_KEYS = {
  /** Tier `llm-open`: no token limit, completion cache on; model token_stream. */
  a: 'tsk_llm-tenant-a',
  /** Same tier and model as A: another tenant that must not read A's cache. */
  a2: 'tsk_llm-tenant-a2',
  /** Tier `llm-open`; model token_stream_b only. */
  b: 'tsk_llm-tenant-b',
  /** Tier `llm-metered`: 120 tokens per minute (burst 120); model token_stream. */
  metered: 'tsk_llm-metered',
  /** Tier `llm-small`: bodies of at most 4 KiB. */
  small: 'tsk_llm-small',
} as const;

export interface LlmRepositoryFiles {
  readonly dir: string;
  readonly cancelLog: string;
  cancellations(): Promise<string[]>;
}

/** `token_stream` (and `token_stream_b`) with `tokenDelayMs` per token and a cancellation log. */
export async function writeLlmRepository(tokenDelayMs: number): Promise<LlmRepositoryFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-llm-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', dir, '--only', 'token_stream']);
  const cancelLog = join(dir, 'cancelled.log');
  const configPath = join(dir, 'token_stream', 'config.pbtxt');
  const config = (await readFile(configPath, 'utf8'))
    .replace(/(key: "token_delay_ms" value: \{ string_value: )"[^"]*"/, `$1"${tokenDelayMs}"`)
    .concat(`parameters { key: "cancel_log" value: { string_value: ${JSON.stringify(cancelLog)} } }\n`);
  await writeFile(configPath, config);
  await cp(join(dir, 'token_stream'), join(dir, 'token_stream_b'), { recursive: true });
  await writeFile(join(dir, 'token_stream_b', 'config.pbtxt'), config.replace('name: "token_stream"', 'name: "token_stream_b"'));
  return {
    dir,
    cancelLog,
    async cancellations() {
      const text = await readFile(cancelLog, 'utf8').catch(() => '');
      return text.split('\n').filter((line) => line !== '');
    },
  };
}

export interface LlmFleet {
  readonly redis: RedisServer;
  readonly node: SpawnedNode;
  readonly gateway: RunningGateway;
  readonly repository: LlmRepositoryFiles;
  /** Fetch through the gateway with a tenant key. */
  call(key: string, path: string, body?: unknown, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

export interface LlmFleetOptions {
  readonly tokenDelayMs?: number;
  readonly maxStreamsPerNode?: number;
  /**
   * How the gateway reaches the node's LLM routes: 'h2' (the node advertises --llm-h2c-port), 'http1'
   * (node:http), 'raw' (raw HTTP/1.1 writes for every stream, llm-raw-upstream.ts); absent: the
   * gateway's default choice (raw at few streams, HTTP/2 above).
   */
  readonly upstream?: 'h2' | 'http1' | 'raw';
  /** Which front door reads the client's LLM requests: 'raw' (llm-raw-front.ts) or 'node-http' (native-llm.ts); absent: the default. */
  readonly front?: LlmFront;
  /** More flags for the node (e.g. `--stream-interval 4`). */
  readonly nodeArgs?: readonly string[];
}

export type LlmFront = 'raw' | 'node-http';
/** Both front doors, for suites that must behave the same on each. */
export const LLM_FRONTS: readonly LlmFront[] = ['raw', 'node-http'];

export async function startLlmFleet(options: LlmFleetOptions = {}): Promise<LlmFleet> {
  const repository = await writeLlmRepository(options.tokenDelayMs ?? 2);
  const redis = await startRedisServer();
  const h2 = options.upstream !== 'http1';
  const raw = options.upstream === undefined ? {} : { nodeRawBelowStreams: options.upstream === 'raw' ? 256 : 0 };
  const node = await spawnNode(repository.dir, ['--redis-url', redis.url, '--node-id', 'llm-node', '--advertise-host', '127.0.0.1', ...(h2 ? ['--llm-h2c-port', '0'] : []), ...(options.nodeArgs ?? [])]);
  const tenant = async (id: string, tier: string, key: string, models: string[]) => ({ id, tier, allowedModels: models, keys: [{ id: `${id}-k`, hash: await sha256Hex(key) }] });
  const config = loadGatewayConfig(
    JSON.stringify({
      metrics: { requireAdminKey: false },
      rateLimitLeaseMs: 0,
      // The cache tests assert HIT/MISS: on a loaded box a Redis GET or SET can take past the 250 ms default.
      cache: { commandTimeoutMs: 5_000 },
      llm: { chargeEveryTokens: 4, nodeHttp2: h2, ...raw, ...(options.front === undefined ? {} : { rawFront: options.front === 'raw' }), ...(options.maxStreamsPerNode === undefined ? {} : { maxStreamsPerNode: options.maxStreamsPerNode }) },
      tiers: {
        'llm-open': {
          priority: 2, queueTimeoutMs: 20_000, queueShare: 1, cacheTtlSeconds: 300, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 },
          llm: { tokensPerMinute: 0, cacheCompletions: true },
        },
        'llm-metered': {
          priority: 2, queueTimeoutMs: 20_000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'],
          rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 },
          llm: { tokensPerMinute: 120, tokensBurst: 120 },
        },
        'llm-small': {
          priority: 3, queueTimeoutMs: 20_000, queueShare: 1, cacheTtlSeconds: 0, allowedModels: ['*'], maxRequestBytes: 4096,
          rateLimits: { requestsPerSecond: 0, burst: 0, elementsPerSecond: 0, elementsBurst: 0 },
        },
      },
      tenants: [
        await tenant('llm-a', 'llm-open', LLM_KEYS.a, ['token_stream']),
        await tenant('llm-a2', 'llm-open', LLM_KEYS.a2, ['token_stream']),
        await tenant('llm-b', 'llm-open', LLM_KEYS.b, ['token_stream_b']),
        await tenant('llm-metered', 'llm-metered', LLM_KEYS.metered, ['token_stream']),
        await tenant('llm-small', 'llm-small', LLM_KEYS.small, ['token_stream']),
      ],
    }),
  );
  const gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
  const ready = (): boolean => {
    const found = gateway.directory.candidates('token_stream');
    return found.length === 1 && (!h2 || typeof found[0]!.llmH2Address === 'string') && gateway.directory.candidates('token_stream_b').length === 1;
  };
  await waitFor(ready, {
    what: 'the LLM node in the fleet view',
    timeoutMs: 30_000,
  });
  return {
    redis,
    node,
    gateway,
    repository,
    call(key, path, body, init = {}) {
      return fetch(`${gateway.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
      });
    },
    async stop() {
      await gateway.close({ graceMs: 500 });
      if (node.process.exitCode === null && node.process.signalCode === null) {
        node.process.kill('SIGTERM');
        const timer = setTimeout(() => node.process.kill('SIGKILL'), 5000);
        await node.exited;
        clearTimeout(timer);
      }
      await redis.stop();
      await rm(repository.dir, { recursive: true, force: true });
    },
  };
}

/** The `data:` payloads of an SSE body, in order. */
export function ssePayloads(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => event.replace(/^data: /, ''));
}

/** `n` words: a prompt long enough that streaming it takes a while. */
export function longPrompt(n: number): string {
  return Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
}
