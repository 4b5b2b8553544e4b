/**
 * `model_warmup` end to end on an explicit-mode node: a typescript model that counts its executions
 * is not READY while its warmup runs, and READY only after `count` executions per sample (the first
 * client request is execution count+1 and sees the warmup file's data as the previous input). A
 * warmup whose data file has the wrong size, or whose model fails, fails the load with a reason.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fp32Bytes, removeDir, startTestNode, type TestNode } from '../support.js';
import { inferJson, writeModelFolder } from './helpers.js';

const EXECUTE_DELAY_MS = 150;
const WARMUP_FILE_VALUES = [1.5, 2.5];

const COUNTING_MODULE = `
let executions = 0;
let previousSum = 0;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// COUNT: executions so far, this one included; PREVIOUS_SUM: the sum of the previous execution's INPUT0.
export async function execute(requests) {
  executions += 1;
  await sleep(${EXECUTE_DELAY_MS});
  const answers = requests.map((r) => {
    const rows = r.inputs.INPUT0.shape[0];
    return { outputs: {
      COUNT: { datatype: 'INT32', shape: [rows, 1], data: Array(rows).fill(executions) },
      PREVIOUS_SUM: { datatype: 'FP32', shape: [rows, 1], data: Array(rows).fill(previousSum) },
    } };
  });
  previousSum = requests.reduce((sum, r) => sum + r.inputs.INPUT0.data.reduce((a, b) => a + b, 0), 0);
  return answers;
}
`;

function countingConfig(name: string, warmup: string): string {
  return `name: "${name}"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [
  { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] },
  { name: "PREVIOUS_SUM" data_type: TYPE_FP32 dims: [ 1 ] }
]
model_warmup [
${warmup}
]
`;
}

const ZEROS = `  { name: "zeros" batch_size: 2 count: 2 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } } }`;
const RANDOM = `  { name: "random" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 2 ] random_data: true } } }`;
const fromFile = (file: string) =>
  `  { name: "from_file" batch_size: 1 count: 1 inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 2 ] input_data_file: "${file}" } } }`;

const moduleFiles = (source: string) => ({ '1/model.js': source, '1/package.json': '{ "type": "module" }\n' });

let node: TestNode;
let repo: string | undefined;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-warmup-'));
  await writeModelFolder(repo, 'counted', countingConfig('counted', [ZEROS, RANDOM, fromFile('input0.bin')].join(',\n')), {
    ...moduleFiles(COUNTING_MODULE),
    'warmup/input0.bin': fp32Bytes(WARMUP_FILE_VALUES),
  });
  await writeModelFolder(repo, 'short_file', countingConfig('short_file', fromFile('short.bin')), {
    ...moduleFiles(COUNTING_MODULE),
    'warmup/short.bin': new Uint8Array(3),
  });
  await writeModelFolder(repo, 'refuses_warmup', countingConfig('refuses_warmup', ZEROS), moduleFiles(
    'export function execute() { throw new Error("cannot warm up"); }\n',
  ));
  node = await startTestNode(repo, ['--model-control-mode', 'explicit']);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo);
});

const load = (model: string) => fetch(`${node.http}/v2/repository/models/${model}/load`, { method: 'POST' });
const readyStatus = async (model: string) => (await fetch(`${node.http}/v2/models/${model}/ready`)).status;

describe('model_warmup', () => {
  it('runs every sample count times before the version is READY', async () => {
    const loading = load('counted');
    // zeros ×2, random ×1 (count 0 = once), from_file ×1: four executions, each at least EXECUTE_DELAY_MS.
    await new Promise((resolve) => setTimeout(resolve, EXECUTE_DELAY_MS));
    expect(await readyStatus('counted')).not.toBe(200);
    expect((await loading).status).toBe(200);
    expect(await readyStatus('counted')).toBe(200);

    const first = await inferJson(node.http, 'counted', [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [0, 0] }]);
    expect(first.outputs.COUNT?.data).toEqual([5]);
    // The last warmup sample was the file's data.
    expect(first.outputs.PREVIOUS_SUM?.data).toEqual([WARMUP_FILE_VALUES.reduce((a, b) => a + b)]);
  });

  it('fails the load when a warmup data file does not fit the sample', async () => {
    const answer = await load('short_file');
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toMatch(
      /failed to prepare warmup sample 'from_file': .*input byte size mismatch for input 'INPUT0'/,
    );
  });

  it('fails the load when the model fails its warmup', async () => {
    const answer = await load('refuses_warmup');
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: string }).error).toMatch(
      /model instance '.*' failed warmup sample 'zeros': .*cannot warm up/,
    );
    expect(await readyStatus('refuses_warmup')).not.toBe(200);
  });
});
