/**
 * Sequences through the gateway stay per tenant even for models that key their own state by CORRID (Triton's
 * `simple_string_dyna_sequence` keeps a running sum per correlation id): the node gets a per-tenant id of the
 * client's id type (a string id stays a string, so a TYPE_STRING CORRID takes it), never the client's value.
 * Real redis-server, node process and gateway.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { spawnNode, type SpawnedNode } from '../../gateway/test/support/test-node-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEYS = { a: 'tsk_sec-corrid-tenant-a', b: 'tsk_sec-corrid-tenant-b' };

describe('sequence ids through the gateway: the client id type reaches CORRID, its value never does', () => {
  let redis: RedisServer;
  let repository: string;
  let node: SpawnedNode;
  let gateway: RunningGateway;

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await mkdtemp(join(tmpdir(), 'tessera-corrid-'));
    await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', repository, '--only', 'simple_dyna_sequence,simple_string_dyna_sequence']);
    node = await spawnNode(repository, ['--redis-url', redis.url, '--node-id', 'corrid-node', '--advertise-host', '127.0.0.1']);
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
    await waitFor(() => gateway.directory.candidates('simple_string_dyna_sequence').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    if (node !== undefined) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  async function step(key: string, model: string, id: number | string, value: number, flags: { start?: boolean; end?: boolean }) {
    const res = await fetch(`${gateway.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({
        parameters: { sequence_id: id, ...(flags.start ? { sequence_start: true } : {}), ...(flags.end ? { sequence_end: true } : {}) },
        inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
      }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const answer = JSON.parse(text) as { outputs: { data: number[] }[]; parameters?: Record<string, unknown> };
    return { output: answer.outputs[0]!.data[0]!, parameters: answer.parameters };
  }

  it('a string id reaches a TYPE_STRING CORRID as a string (before: refused as a numeric id)', async () => {
    expect((await step(KEYS.a, 'simple_string_dyna_sequence', '1002', 20, { start: true })).output).toBe(20);
    expect((await step(KEYS.a, 'simple_string_dyna_sequence', '1002', -11, {})).output).toBe(9);
    const last = await step(KEYS.a, 'simple_string_dyna_sequence', '1002', -1, { end: true });
    // The model added the CORRID it saw: a per-tenant id, not the client's 1002.
    expect(last.output).not.toBe(8 + 1002);
  });

  it('two tenants interleaving one string id get two running sums, though the model keys its sums by CORRID', async () => {
    expect((await step(KEYS.a, 'simple_string_dyna_sequence', '77', 10, { start: true })).output).toBe(10);
    expect((await step(KEYS.b, 'simple_string_dyna_sequence', '77', 500, { start: true })).output).toBe(500);
    expect((await step(KEYS.a, 'simple_string_dyna_sequence', '77', 1, {})).output).toBe(11);
    expect((await step(KEYS.b, 'simple_string_dyna_sequence', '77', 1, {})).output).toBe(501);
  });

  it('a numeric id stays numeric (a UINT64 CORRID takes it), and its value stays per tenant', async () => {
    await step(KEYS.a, 'simple_dyna_sequence', 5, 0, { start: true });
    await step(KEYS.b, 'simple_dyna_sequence', 5, 0, { start: true });
    const a = await step(KEYS.a, 'simple_dyna_sequence', 5, 0, { end: true });
    const b = await step(KEYS.b, 'simple_dyna_sequence', 5, 0, { end: true });
    // Each tenant's last answer is its own CORRID (the input was 0): two different ids, neither the client's 5.
    expect(a.output).not.toBe(b.output);
    expect([a.output, b.output]).not.toContain(5);
  });
});
