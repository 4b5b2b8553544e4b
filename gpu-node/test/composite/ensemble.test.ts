/**
 * Ensembles end to end: a real node (ports 0) over a temporary repository holding the example
 * pipeline (mlp_preprocess → mlp_small → mlp_postprocess as `mlp_pipeline`), small script-model
 * ensembles for failure and concurrency, and broken ensembles that must fail to load with a reason
 * while everything else serves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleRepository, removeDir, scaleBody, startTestNode, writeScriptModel, type TestNode } from '../support.js';
import { ENSEMBLE_VERSION_FILES, ensembleConfig, indexEntry, inferJson, writeModelFolder } from './helpers.js';

const PIPELINE_MODELS = ['mlp_small', 'mlp_preprocess', 'mlp_postprocess', 'mlp_pipeline'];
const STEP_DELAY_MS = 400;

let node: TestNode;
let repo: string | undefined;

beforeAll(async () => {
  repo = await exampleRepository(PIPELINE_MODELS);
  await writeScriptModel(repo, 'double', { executeBody: scaleBody(2) });
  await writeScriptModel(repo, 'picky', {
    executeBody:
      'return requests.map((r) => r.inputs.INPUT0.data.some((x) => x > 100) ? { error: "value too large" } : ' +
      '{ outputs: { OUTPUT0: { datatype: "FP32", shape: [...r.inputs.INPUT0.shape], data: r.inputs.INPUT0.data } } });',
  });
  await writeScriptModel(repo, 'slow_a', { executeBody: `await sleep(${STEP_DELAY_MS});\n${scaleBody(3)}` });
  await writeScriptModel(repo, 'slow_b', { executeBody: `await sleep(${STEP_DELAY_MS});\n${scaleBody(5)}` });
  const ensembles: Record<string, string> = {
    // double → picky: picky fails when a doubled value exceeds 100.
    fragile: ensembleConfig('fragile', { inputs: ['IN'], outputs: ['OUT'] }, [
      { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'doubled' } },
      { model: 'picky', inputs: { INPUT0: 'doubled' }, outputs: { OUTPUT0: 'OUT' } },
    ]),
    // Two independent steps on the same input: they must run at the same time.
    fanout: ensembleConfig('fanout', { inputs: ['IN'], outputs: ['A', 'B'] }, [
      { model: 'slow_a', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'A' } },
      { model: 'slow_b', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'B' } },
    ]),
    broken_missing_model: ensembleConfig('broken_missing_model', { inputs: ['IN'], outputs: ['OUT'] }, [
      { model: 'no_such_model', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
    ]),
    broken_ghost_tensor: ensembleConfig('broken_ghost_tensor', { inputs: ['IN'], outputs: ['OUT', 'x'] }, [
      { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'x' } },
      { model: 'double', inputs: { INPUT0: 'ghost' }, outputs: { OUTPUT0: 'OUT' } },
    ]),
    broken_unwritten_output: ensembleConfig('broken_unwritten_output', { inputs: ['IN'], outputs: ['OUT', 'EXTRA'] }, [
      { model: 'double', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
    ]),
    broken_io_name: ensembleConfig('broken_io_name', { inputs: ['IN'], outputs: ['OUT'] }, [
      { model: 'double', inputs: { NOT_AN_INPUT: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
    ]),
  };
  for (const [name, text] of Object.entries(ensembles)) await writeModelFolder(repo, name, text, ENSEMBLE_VERSION_FILES);
  node = await startTestNode(repo);
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo);
});

/** Deterministic features with varied scale, so the standardization step matters. */
function features(seed: number): number[] {
  return Array.from({ length: 256 }, (_, i) => Math.sin(i * 0.37 + seed) * (10 + seed) + seed);
}

describe('mlp_pipeline (the example ensemble)', () => {
  it('is READY, platform ensemble, and answers like its three steps run by hand', async () => {
    const meta = (await (await fetch(`${node.http}/v2/models/mlp_pipeline`)).json()) as { platform: string };
    expect(meta.platform).toBe('ensemble');

    const input = features(1);
    const whole = await inferJson(node.http, 'mlp_pipeline', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 256], data: input }]);
    expect(whole.status).toBe(200);

    const pre = await inferJson(node.http, 'mlp_preprocess', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 256], data: input }]);
    const logits = await inferJson(node.http, 'mlp_small', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 256], data: pre.outputs.OUTPUT0?.data ?? [] },
    ]);
    const post = await inferJson(node.http, 'mlp_postprocess', [
      { name: 'INPUT0', datatype: 'FP32', shape: [1, 10], data: logits.outputs.OUTPUT0?.data ?? [] },
    ]);
    expect(post.status).toBe(200);
    expect(whole.outputs.PROBS).toEqual(post.outputs.PROBS);
    expect(whole.outputs.CLASSES).toEqual(post.outputs.CLASSES);
    expect(whole.outputs.PROBS).toMatchObject({ datatype: 'FP32', shape: [1, 3] });
    expect(whole.outputs.CLASSES).toMatchObject({ datatype: 'INT32', shape: [1, 3] });
    // Top-3 of a softmax: descending probabilities, three distinct classes of 10.
    const probs = whole.outputs.PROBS?.data as number[];
    expect([...probs].sort((a, b) => b - a)).toEqual(probs);
    expect(new Set(whole.outputs.CLASSES?.data).size).toBe(3);
  });

  it('carries a batch through every step, and returns only the outputs asked for', async () => {
    const data = [...features(2), ...features(3)];
    const batch = await inferJson(node.http, 'mlp_pipeline', [{ name: 'INPUT', datatype: 'FP32', shape: [2, 256], data }], [
      { name: 'CLASSES' },
    ]);
    expect(batch.status).toBe(200);
    expect(Object.keys(batch.outputs)).toEqual(['CLASSES']);
    expect(batch.outputs.CLASSES?.shape).toEqual([2, 3]);
    const second = await inferJson(node.http, 'mlp_pipeline', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 256], data: features(3) }]);
    expect(batch.outputs.CLASSES?.data.slice(3)).toEqual(second.outputs.CLASSES?.data);
  });

  it('counts each step in its composing model statistics and the request in the ensemble own', async () => {
    const stats = async (model: string) =>
      ((await (await fetch(`${node.http}/v2/models/${model}/stats`)).json()) as {
        model_stats: { inference_stats: { success: { count: number } } }[];
      }).model_stats[0]?.inference_stats.success.count ?? 0;
    const [ensembleBefore, smallBefore] = [await stats('mlp_pipeline'), await stats('mlp_small')];
    await inferJson(node.http, 'mlp_pipeline', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 256], data: features(4) }]);
    expect(await stats('mlp_pipeline')).toBe(ensembleBefore + 1);
    expect(await stats('mlp_small')).toBe(smallBefore + 1);
  });

  it('rejects a request the ensemble config does not accept before running any step', async () => {
    const wrong = await inferJson(node.http, 'mlp_pipeline', [{ name: 'INPUT', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }]);
    expect(wrong.status).toBe(400);
    expect(wrong.error).toMatch(/unexpected shape for input 'INPUT' for model 'mlp_pipeline'/);
  });
});

describe('ensemble scheduling', () => {
  it('runs a good request through both steps', async () => {
    const ok = await inferJson(node.http, 'fragile', [{ name: 'IN', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }]);
    expect(ok.status).toBe(200);
    expect(ok.outputs.OUT?.data).toEqual([2, 4, 6]);
  });

  it('fails the request with the failing step named', async () => {
    const bad = await inferJson(node.http, 'fragile', [{ name: 'IN', datatype: 'FP32', shape: [1, 2], data: [1, 60] }]);
    expect(bad.status).toBe(500);
    expect(bad.error).toMatch(/^in ensemble 'fragile', step 1 \('picky'\) failed: .*value too large/);
  });

  it('runs independent steps concurrently', async () => {
    const started = Date.now();
    const answer = await inferJson(node.http, 'fanout', [{ name: 'IN', datatype: 'FP32', shape: [1, 2], data: [1, 2] }]);
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.outputs.A?.data).toEqual([3, 6]);
    expect(answer.outputs.B?.data).toEqual([5, 10]);
    // Sequential steps would take two delays; concurrent ones take about one.
    expect(elapsed).toBeLessThan(2 * STEP_DELAY_MS - 50);
  });
});

describe('broken ensembles', () => {
  const cases: [string, RegExp][] = [
    ['broken_missing_model', /step 0 \('no_such_model'\) needs model 'no_such_model', which is not available/],
    ['broken_ghost_tensor', /ensemble tensor 'ghost' is read by a step but is neither an ensemble input nor written by any step/],
    ['broken_unwritten_output', /output 'EXTRA' for ensemble 'broken_unwritten_output' is not written/],
    ['broken_io_name', /maps 'NOT_AN_INPUT', which is not an input of model 'double'.*required input 'INPUT0'/],
  ];
  it.each(cases)('%s fails to load with its reason', async (name, reason) => {
    const entry = await indexEntry(node.http, name);
    expect(entry?.state).toBe('UNAVAILABLE');
    expect(entry?.reason).toMatch(reason);
    const answer = await inferJson(node.http, name, [{ name: 'IN', datatype: 'FP32', shape: [1, 1], data: [1] }]);
    expect(answer.status).not.toBe(200);
  });

  it('leaves every other model READY', async () => {
    for (const name of [...PIPELINE_MODELS, 'double', 'picky', 'fragile', 'fanout']) {
      expect((await indexEntry(node.http, name))?.state, name).toBe('READY');
    }
  });
});
