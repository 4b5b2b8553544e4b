/**
 * Sequence affinity end to end: a real redis-server, two real nodes serving the stateful `silero_vad`
 * (sequence batcher, implicit LSTM state) and TWO gateways sharing Redis. A stream sent alternately
 * through both gateways lands on one node and computes what a direct run on that node computes; when
 * that node dies the next request gets a clear 503, and a new START goes to the other node.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { startSileroNode, writeSileroRepository, type SileroNode } from './silero-node.js';

const KEY = 'tsk_seq-e2e-tenant';
const CHUNKS = 10;
const SAMPLES = 512;

/** A deterministic 16 kHz chunk: a tone that comes and goes, so the detector's state matters. */
function chunk(i: number): number[] {
  return Array.from({ length: SAMPLES }, (_, k) => {
    const t = (i * SAMPLES + k) / 16_000;
    return Math.round((i % 3 === 0 ? 0.02 : 0.6) * Math.sin(2 * Math.PI * 220 * t) * 1e4) / 1e4;
  });
}

function inferBody(sequenceId: number, i: number, flags: { start?: boolean; end?: boolean } = {}): string {
  return JSON.stringify({
    parameters: { sequence_id: sequenceId, ...(flags.start ? { sequence_start: true } : {}), ...(flags.end ? { sequence_end: true } : {}) },
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, SAMPLES], data: chunk(i) }],
  });
}

async function probability(res: Response): Promise<number> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as { outputs: { name: string; data: number[] }[] };
  return body.outputs.find((o) => o.name === 'output')!.data[0]!;
}

describe('sequence affinity end to end (redis + two silero_vad nodes + two gateways)', () => {
  let redis: RedisServer;
  let repository: string;
  let nodes: SileroNode[] = [];
  let gateways: RunningGateway[] = [];

  const viaGateway = (g: RunningGateway, body: string) =>
    fetch(`${g.url}/v2/models/silero_vad/infer`, { method: 'POST', body, headers: { authorization: `Bearer ${KEY}` } });

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await writeSileroRepository();
    nodes = await Promise.all(['seq-node-a', 'seq-node-b'].map((id) => startSileroNode(id, repository, redis.url)));
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { premium: { queueTimeoutMs: 20_000 } },
        tenants: [{ id: 'streamer', tier: 'premium', keys: [{ id: 's1', hash: await sha256Hex(KEY) }] }],
        // Every model cached: sequence requests must still bypass the cache.
        cache: { models: { '*': { enabled: true } } },
      }),
    );
    gateways = await Promise.all(
      [0, 1].map(() => startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } })),
    );
    await waitFor(() => gateways.every((g) => g.directory.candidates('silero_vad').length === 2), {
      what: 'both nodes in both gateways',
      timeoutMs: 30_000,
    });
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close({ graceMs: 1000 })));
    await Promise.all(nodes.map((n) => n.stop()));
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  it('keeps a stream on one node across two gateways, computes what that node computes alone, and fails clearly when it dies', async () => {
    const sequenceId = 1001;
    const before = await Promise.all(nodes.map((n) => n.inferenceCount()));
    const streamed: number[] = [];
    for (let i = 0; i < CHUNKS; i++) {
      const res = await viaGateway(gateways[i % 2]!, inferBody(sequenceId, i, { start: i === 0 }));
      expect(res.headers.get('x-cache')).toBe('BYPASS');
      streamed.push(await probability(res));
    }
    const after = await Promise.all(nodes.map((n) => n.inferenceCount()));
    const delta = after.map((n, i) => n - before[i]!);
    expect(delta.sort()).toEqual([0, CHUNKS]);
    const holder = nodes[after[0]! - before[0]! === CHUNKS ? 0 : 1]!;
    const other = nodes.find((n) => n !== holder)!;

    // The same stream straight to the holding node, as another sequence: the same probabilities.
    const direct: number[] = [];
    for (let i = 0; i < CHUNKS; i++) {
      const body = inferBody(2002, i, { start: i === 0, end: i === CHUNKS - 1 });
      direct.push(await probability(await fetch(`${holder.httpUrl}/v2/models/silero_vad/infer`, { method: 'POST', body })));
    }
    expect(streamed.map((p) => p.toFixed(6))).toEqual(direct.map((p) => p.toFixed(6)));
    // The state mattered: the stream is not a constant answer.
    expect(new Set(streamed.map((p) => p.toFixed(3))).size).toBeGreaterThan(1);

    await holder.kill();
    const lost = await viaGateway(gateways[1]!, inferBody(sequenceId, CHUNKS));
    expect(lost.status).toBe(503);
    expect(((await lost.json()) as { error: string }).error).toMatch(
      /^the node holding sequence 1001 of model 'silero_vad' is gone\b.*; start the sequence again$/,
    );

    // Not known any more (the binding was deleted): a clear 400 asking for a START.
    const unknown = await viaGateway(gateways[0]!, inferBody(sequenceId, CHUNKS));
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toBe(
      "sequence 1001 of model 'silero_vad' is not known to the gateway: send sequence_start first",
    );

    const otherBefore = await other.inferenceCount();
    await probability(await viaGateway(gateways[0]!, inferBody(sequenceId, 0, { start: true })));
    await probability(await viaGateway(gateways[1]!, inferBody(sequenceId, 1, { end: true })));
    expect(await other.inferenceCount()).toBe(otherBefore + 2);
  });
});
