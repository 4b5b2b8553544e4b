/**
 * End to end over HTTP, EXPLICIT model control: the repository API's load and unload routes (which
 * the default NONE mode refuses with 503) against a real node started on port 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, json } from './http-client.js';
import { exampleRepository, removeDir, startTestNode, type TestNode } from './support.js';

let explicit: TestNode;
let explicitRepo: string | undefined;

beforeAll(async () => {
  explicitRepo = await exampleRepository(['ts_scale']);
  explicit = await startTestNode(explicitRepo, ['--model-control-mode', 'explicit']);
});

afterAll(async () => {
  await explicit?.stop();
  await removeDir(explicitRepo);
});

describe('explicit model control (second node)', () => {
  const ex = (method: string, path: string, body?: string) => call(explicit.http, method, path, body);
  const tsInfer = () =>
    ex('POST', '/v2/models/ts_scale/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP32', data: [1, 3] }] }));

  it('nothing is loaded at start: the index names the model without a state', async () => {
    expect(json(await ex('POST', '/v2/repository/index'))).toEqual([{ name: 'ts_scale' }]);
    expect(json(await ex('POST', '/v2/repository/index', '{"ready":true}'))).toEqual([]);
    expectError(await ex('GET', '/v2/models/ts_scale/ready'), 400, /^Request for unknown model: 'ts_scale' is not found$/);
  });

  it('load → READY and served; unload → UNAVAILABLE "unloaded" and refused', async () => {
    const load = await ex('POST', '/v2/repository/models/ts_scale/load');
    expect(load.status, load.text).toBe(200);
    expect(json(await ex('POST', '/v2/repository/index'))).toEqual([{ name: 'ts_scale', version: '1', state: 'READY' }]);
    expect((await ex('GET', '/v2/models/ts_scale/ready')).status).toBe(200);
    expect((json(await tsInfer()) as { outputs: { data: number[] }[] }).outputs[0]?.data).toEqual([2, 6]);

    const unload = await ex('POST', '/v2/repository/models/ts_scale/unload');
    expect(unload.status, unload.text).toBe(200);
    // Unload returns without waiting; the index settles on UNAVAILABLE "unloaded".
    let entry: { state?: string; reason?: string } | undefined;
    for (let i = 0; i < 200; i++) {
      entry = (json(await ex('POST', '/v2/repository/index')) as { state?: string; reason?: string }[])[0];
      if (entry?.state === 'UNAVAILABLE') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(entry).toMatchObject({ state: 'UNAVAILABLE', reason: 'unloaded' });
    // Triton 7.4: without a version, an unloaded model "has no available versions" (404).
    expectError(await tsInfer(), 404, /'ts_scale' has no available versions/);
    expectError(await ex('GET', '/v2/models/ts_scale/ready'), 404, /'ts_scale' has no available versions/);
  });

  it('load with a config override applies it (factor 5 instead of 2)', async () => {
    const config = {
      name: 'ts_scale',
      backend: 'typescript',
      default_model_filename: 'model.js',
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
      parameters: { factor: { string_value: '5' } },
    };
    const load = await ex('POST', '/v2/repository/models/ts_scale/load', JSON.stringify({ parameters: { config: JSON.stringify(config) } }));
    expect(load.status, load.text).toBe(200);
    expect((json(await tsInfer()) as { outputs: { data: number[] }[] }).outputs[0]?.data).toEqual([5, 15]);
  });

  it("loading a model that does not exist: 500 with Triton's wording, and the node stays ready; a bad load parameter → 400", async () => {
    expect((await ex('GET', '/v2/health/ready')).status).toBe(200);
    const ghost = await ex('POST', '/v2/repository/models/ghost/load');
    expect(ghost.status, ghost.text).toBe(500);
    expect(json(ghost)).toEqual({ error: "failed to load 'ghost', failed to poll from model repository" });
    // A model that is not in the repository must not count against readiness.
    expect((await ex('GET', '/v2/health/ready')).status).toBe(200);
    expect(json(await ex('POST', '/v2/repository/index'))).not.toContainEqual(expect.objectContaining({ name: 'ghost' }));
    expectError(await ex('POST', '/v2/repository/models/ts_scale/load', '{"parameters":{"bogus":"1"}}'), 400, /'bogus'/);
  });

  it('a config override that cannot be parsed → 400 "failed to load"; a file name the file system refuses → 500, no errno text', async () => {
    const bad = await ex('POST', '/v2/repository/models/ts_scale/load', JSON.stringify({ parameters: { config: '{not json' } }));
    expect(bad.status, bad.text).toBe(400);
    expect(json(bad)).toMatchObject({ error: expect.stringMatching(/^failed to load 'ts_scale', Invalid config override: /) });
    const config = JSON.stringify({ name: 'ts_scale', backend: 'typescript' });
    const longName = `file:1/${'x'.repeat(300)}`;
    const refused = await ex('POST', '/v2/repository/models/ts_scale/load', JSON.stringify({ parameters: { config, [longName]: 'AAAA' } }));
    expect(refused.status, refused.text).toBe(500);
    expect(json(refused)).toEqual({ error: "failed to load 'ts_scale', failed to poll from model repository" });
    expect(refused.text).not.toMatch(/ENAMETOOLONG|errno/);
  });
});
