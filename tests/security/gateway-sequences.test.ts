/**
 * Attack 2 (issue 14): two tenants using the same `sequence_id` must not share one sequence on the
 * node. Real redis-server, a real node process serving the stateful `silero_vad` (sequence batcher,
 * implicit LSTM state carried from request to request), a real gateway. Tenants A and B interleave
 * one id (numeric, then string) with different audio; each must get exactly what its own stream
 * computes alone on the node, and the client's id is the one quoted back in errors.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { startSileroNode, writeSileroRepository, type SileroNode } from '../../gateway/test/sequences/silero-node.js';

const KEYS = { a: 'tsk_sec-seq-tenant-a', b: 'tsk_sec-seq-tenant-b' };
const CHUNKS = 8;
const SAMPLES = 512;

/** Two different 16 kHz streams: a tone that comes and goes (A) and a quieter, lower one (B). */
function chunk(stream: 'a' | 'b', i: number): number[] {
  return Array.from({ length: SAMPLES }, (_, k) => {
    const t = (i * SAMPLES + k) / 16_000;
    const amplitude = stream === 'a' ? (i % 3 === 0 ? 0.02 : 0.6) : i % 2 === 0 ? 0.3 : 0.01;
    return Math.round(amplitude * Math.sin(2 * Math.PI * (stream === 'a' ? 220 : 140) * t) * 1e4) / 1e4;
  });
}

function body(sequenceId: number | string, stream: 'a' | 'b', i: number): string {
  return JSON.stringify({
    parameters: { sequence_id: sequenceId, ...(i === 0 ? { sequence_start: true } : {}), ...(i === CHUNKS - 1 ? { sequence_end: true } : {}) },
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, SAMPLES], data: chunk(stream, i) }],
  });
}

async function probability(res: Response): Promise<string> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const parsed = JSON.parse(text) as { outputs: { name: string; data: number[] }[] };
  return parsed.outputs.find((o) => o.name === 'output')!.data[0]!.toFixed(6);
}

describe('sequences per tenant (redis + silero_vad node + gateway)', () => {
  let redis: RedisServer;
  let repository: string;
  let node: SileroNode;
  let gateway: RunningGateway;
  const expected: Record<'a' | 'b', string[]> = { a: [], b: [] };

  const viaGateway = (key: string, payload: string) =>
    fetch(`${gateway.url}/v2/models/silero_vad/infer`, { method: 'POST', body: payload, headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await writeSileroRepository();
    node = await startSileroNode('sec-seq-node', repository, redis.url);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEYS.a) }] },
          { id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEYS.b) }] },
        ],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('silero_vad').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    // What each stream computes alone, straight on the node (ids nobody else uses).
    for (const [stream, id] of [['a', 900_001], ['b', 900_002]] as const) {
      for (let i = 0; i < CHUNKS; i++) {
        expected[stream].push(await probability(await fetch(`${node.httpUrl}/v2/models/silero_vad/infer`, { method: 'POST', body: body(id, stream, i) })));
      }
    }
    expect(expected.a).not.toEqual(expected.b);
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  for (const sequenceId of [7, 'shared-session'] as const) {
    it(`two tenants interleaving sequence_id ${JSON.stringify(sequenceId)} each get their own accumulated state`, async () => {
      const got: Record<'a' | 'b', string[]> = { a: [], b: [] };
      for (let i = 0; i < CHUNKS; i++) {
        got.a.push(await probability(await viaGateway(KEYS.a, body(sequenceId, 'a', i))));
        got.b.push(await probability(await viaGateway(KEYS.b, body(sequenceId, 'b', i))));
      }
      expect(got.a).toEqual(expected.a);
      expect(got.b).toEqual(expected.b);
    });
  }

  it('a tenant cannot continue (or end) another tenant’s live sequence: it is unknown to it, quoted with its own id', async () => {
    const started = await viaGateway(KEYS.a, body(42, 'a', 0));
    await probability(started);
    const hijack = await viaGateway(KEYS.b, JSON.stringify({
      parameters: { sequence_id: 42, sequence_end: true },
      inputs: [{ name: 'input', datatype: 'FP32', shape: [1, SAMPLES], data: chunk('b', 1) }],
    }));
    expect(hijack.status).toBe(400);
    expect(((await hijack.json()) as { error: string }).error).toBe(
      "sequence 42 of model 'silero_vad' is not known to the gateway: send sequence_start first",
    );
    // A's sequence is untouched: its next chunk is what its own stream computes.
    expect(await probability(await viaGateway(KEYS.a, body(42, 'a', 1)))).toBe(expected.a[1]);
  });
});
