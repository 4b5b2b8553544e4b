/**
 * The core over the real example repository, config reader and onnxruntime backend (CPU): what the
 * fake-backend tests assume about the other parts holds for the real ones.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBytesElements } from '../../../shared/src/tensors/index.js';
import { writeExampleRepository } from '../example-models/index.js';
import { int32Input } from '../../test/support/models/test-repository.js';
import { createNodeCore, type TesseraNodeCore } from './node-core-impl.js';

describe('NodeCore with the example repository and onnxruntime', () => {
  let dir: string;
  let core: TesseraNodeCore;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-examples-'));
    await writeExampleRepository(dir, { only: ['simple', 'simple_identity'] });
    core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['*'] });
    await core.start();
  });

  afterAll(async () => {
    await core?.shutdown({ timeoutMs: 10_000 });
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the models READY and serves metadata from their configs', async () => {
    const index = await core.repositoryIndex(true);
    expect(index.map((e) => `${e.name}:${e.version}:${e.state}`)).toEqual(['simple:1:READY', 'simple_identity:1:READY']);
    expect(core.isReady()).toBe(true);
    expect(core.modelMetadata('simple')).toMatchObject({
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
    });
  });

  it('infers, validates and counts statistics', async () => {
    const a = Array.from({ length: 16 }, (_, i) => i);
    const b = Array.from({ length: 16 }, () => 1);
    const response = await core.infer({
      id: 'x',
      modelName: 'simple',
      inputs: [int32Input('INPUT0', a), int32Input('INPUT1', b)],
      outputs: [{ name: 'OUTPUT0' }],
      parameters: {},
    });
    expect(response.outputs.map((o) => o.name)).toEqual(['OUTPUT0']);
    const out = response.outputs[0];
    expect(out?.shape).toEqual([1, 16]);
    expect(Array.from(new Int32Array(out!.data.slice().buffer))).toEqual(a.map((v) => v + 1));

    const strings = await core.infer({
      id: '',
      modelName: 'simple_identity',
      inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [1, 1], data: encodeBytesElements(['hello']) }],
      parameters: {},
    });
    expect(strings.outputs[0]?.datatype).toBe('BYTES');

    await expect(
      core.infer({ id: 'bad', modelName: 'simple', inputs: [int32Input('INPUT0', a)], parameters: {} }),
    ).rejects.toMatchObject({ code: 'INVALID_ARG' });
    const [stats] = core.statistics('simple');
    expect(stats).toMatchObject({ inference_count: 1, execution_count: 1, inference_stats: { success: { count: 1 } } });
    expect(stats?.inference_stats.compute_infer.ns).toBeGreaterThan(0);
  });

  it('unloads and reloads through the repository API', async () => {
    await core.unloadModel('simple_identity');
    await expect(
      core.infer({ id: '', modelName: 'simple_identity', inputs: [], parameters: {} }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await core.loadModel('simple_identity');
    expect(core.isModelReady('simple_identity')).toBe(true);
  });
});
