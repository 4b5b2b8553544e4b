/**
 * Optional inputs and `reshape` end to end, against a typescript model that reports what it received:
 * an omitted optional input is accepted and never reaches the backend; an input's `reshape.shape` is
 * what the backend sees while the client sends `dims`; an output the backend produces in its reshape
 * shape reaches the client in `dims` (same bytes either way).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { inferJson, writeModelFolder } from './helpers.js';

const MODULE = `
// SHAPE0: the shape INPUT0 arrived in; GOT: the inputs received; OUT: INPUT0 as received (reshaped).
export function execute(requests) {
  return requests.map((r) => {
    const x = r.inputs.INPUT0;
    const rows = x.shape[0];
    return { outputs: {
      SHAPE0: { datatype: 'INT32', shape: [rows, x.shape.length], data: Array(rows).fill(x.shape).flat() },
      GOT: { datatype: 'BYTES', shape: [rows, 1], data: Array(rows).fill(Object.keys(r.inputs).sort().join(',')) },
      OUT: { datatype: 'FP32', shape: [...x.shape], data: x.data },
    } };
  });
}
`;

const CONFIG = `name: "shapes"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 4
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 1 ] optional: true }
]
output [
  { name: "SHAPE0" data_type: TYPE_INT32 dims: [ 3 ] },
  { name: "GOT" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] reshape: { shape: [ 2, 2 ] } }
]
`;

let node: TestNode;
let repo: string | undefined;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-shapes-'));
  await writeModelFolder(repo, 'shapes', CONFIG, { '1/model.js': MODULE, '1/package.json': '{ "type": "module" }\n' });
  node = await startTestNode(repo);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo);
});

const input0 = { name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] };

describe('optional inputs', () => {
  it('may be omitted, and the backend then does not receive them', async () => {
    const answer = await inferJson(node.http, 'shapes', [input0]);
    expect(answer.status).toBe(200);
    expect(answer.outputs.GOT?.data).toEqual(['INPUT0']);
  });

  it('are passed when given', async () => {
    const answer = await inferJson(node.http, 'shapes', [input0, { name: 'INPUT1', datatype: 'FP32', shape: [1, 1], data: [9] }]);
    expect(answer.outputs.GOT?.data).toEqual(['INPUT0,INPUT1']);
  });

  it('a required input still may not be omitted', async () => {
    const answer = await inferJson(node.http, 'shapes', [{ name: 'INPUT1', datatype: 'FP32', shape: [1, 1], data: [9] }]);
    expect(answer.status).toBe(400);
    expect(answer.error).toMatch(/missing required input\(s\) \['INPUT0'\]/);
  });
});

describe('reshape', () => {
  it('the backend sees reshape.shape, the client sends and receives dims, the bytes unchanged', async () => {
    const answer = await inferJson(node.http, 'shapes', [{ ...input0, shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] }]);
    expect(answer.status).toBe(200);
    expect(answer.outputs.SHAPE0?.data).toEqual([2, 2, 2, 2, 2, 2]);
    expect(answer.outputs.OUT).toMatchObject({ shape: [2, 4], data: [1, 2, 3, 4, 5, 6, 7, 8] });
  });

  it('model metadata shows dims, not the reshape', async () => {
    const meta = (await (await fetch(`${node.http}/v2/models/shapes`)).json()) as { inputs: { name: string; shape: number[] }[] };
    expect(meta.inputs.find((i) => i.name === 'INPUT0')?.shape).toEqual([-1, 4]);
  });
});
