/**
 * The ts_scale module driven directly through its contract, as the typescript backend will drive it,
 * imported from a generated repository in a temp dir (the file the backend would load, not the source).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeExampleRepository } from './example-repository.js';

interface TensorArg {
  datatype: string;
  shape: number[];
  data: unknown;
}
type Result = { outputs: Record<string, TensorArg> } | { error: string };
interface ModelModule {
  initialize(args: unknown): void | Promise<void>;
  execute(requests: unknown[]): Promise<Result[]>;
  finalize(): void | Promise<void>;
}

let repo: string;
let imports = 0;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-ts-scale-'));
  await writeExampleRepository(repo, { only: ['ts_scale'] });
});

afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

/** A fresh module instance per test: the module keeps its factor in module state. */
async function load(): Promise<ModelModule> {
  const url = pathToFileURL(join(repo, 'ts_scale', '1', 'model.js'));
  url.searchParams.set('instance', String(imports++));
  return (await import(url.href)) as ModelModule;
}

const fp32 = (values: number[], shape: number[]): TensorArg => ({ datatype: 'FP32', shape, data: Float32Array.from(values) });

describe('ts_scale model module', () => {
  it('multiplies every request of a batch by the configured factor', async () => {
    const model = await load();
    await model.initialize({ modelName: 'ts_scale', modelVersion: 1, parameters: { factor: '2' } });
    const results = await model.execute([
      { inputs: { INPUT0: fp32([1, -2.5, 3], [1, 3]) } },
      { inputs: new Map([['INPUT0', fp32([0.25, 4, 5, 6], [2, 2])]]) },
    ]);
    expect(results).toHaveLength(2);
    const [first, second] = results.map((r) => ('outputs' in r ? r.outputs.OUTPUT0 : undefined));
    expect(first?.datatype).toBe('FP32');
    expect(first?.shape).toEqual([1, 3]);
    expect(first?.data).toBeInstanceOf(Float32Array);
    expect(Array.from(first?.data as Float32Array)).toEqual([2, -5, 6]);
    expect(second?.shape).toEqual([2, 2]);
    expect(Array.from(second?.data as Float32Array)).toEqual([0.5, 8, 10, 12]);
    await model.finalize();
  });

  it('reads the factor from a protobuf-es ModelConfig when no flat parameters are given', async () => {
    const model = await load();
    await model.initialize({ config: { parameters: { factor: { stringValue: '-0.5' } } } });
    const [result] = await model.execute([{ inputs: { INPUT0: fp32([4], [1, 1]) } }]);
    expect(result).toEqual({ outputs: { OUTPUT0: { datatype: 'FP32', shape: [1, 1], data: Float32Array.of(-2) } } });
  });

  it('fails initialize on a factor that is not a number', async () => {
    const model = await load();
    expect(() => model.initialize({ parameters: { factor: 'two' } })).toThrow(/finite number/);
  });

  it('answers a bad request with an error while the others in the batch succeed', async () => {
    const model = await load();
    await model.initialize({ parameters: { factor: '3' } });
    const results = await model.execute([
      { inputs: {} },
      { inputs: { INPUT0: { datatype: 'INT32', shape: [1], data: Int32Array.of(1) } } },
      { inputs: { INPUT0: fp32([1], [1, 1]) } },
    ]);
    expect(results[0]).toEqual({ error: 'ts_scale: missing input INPUT0' });
    expect(results[1]).toMatchObject({ error: expect.stringMatching(/must be FP32/) });
    expect(results[2]).toEqual({ outputs: { OUTPUT0: { datatype: 'FP32', shape: [1, 1], data: Float32Array.of(3) } } });
  });
});
