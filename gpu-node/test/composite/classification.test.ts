/**
 * The classification extension end to end, over HTTP (`"parameters": {"classification": K}`) and gRPC
 * (`int64_param`), against typescript models whose output has a `label_filename`: the output comes
 * back as BYTES "<value>:<index>[:<label>]", top-K by descending value, shape [batch, K] for a
 * batching model and [K] for a non-batching one. Also: a missing label file fails the load.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import type { Client } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { decodeBytesElements } from '../../../shared/src/tensors/index.js';
import { fp32Bytes, grpcClient, removeDir, startTestNode, type TestNode } from '../support.js';
import { indexEntry, inferJson, writeModelFolder } from './helpers.js';

const LABELS = ['ant', 'cat', 'dog', 'emu'];
const MODULE = [
  '// Identity on FP32 scores, plus the scores rounded as INT32, so both value formats show.',
  'export function execute(requests) {',
  '  return requests.map((r) => ({ outputs: {',
  '    SCORES: { datatype: "FP32", shape: [...r.inputs.INPUT0.shape], data: r.inputs.INPUT0.data },',
  '    ROUNDED: { datatype: "INT32", shape: [...r.inputs.INPUT0.shape], data: Array.from(r.inputs.INPUT0.data, Math.round) },',
  '  } }));',
  '}',
  '',
].join('\n');

function config(name: string, maxBatchSize: number, labelFile: string): string {
  return `name: "${name}"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: ${maxBatchSize}
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [
  { name: "SCORES" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "${labelFile}" },
  { name: "ROUNDED" data_type: TYPE_INT32 dims: [ 4 ] }
]
`;
}

const files = { '1/model.js': MODULE, '1/package.json': '{ "type": "module" }\n', 'labels.txt': `${LABELS.join('\n')}\n` };

let node: TestNode;
let repo: string | undefined;
let client: Client;

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-classify-'));
  await writeModelFolder(repo, 'scores', config('scores', 8, 'labels.txt'), files);
  await writeModelFolder(repo, 'scores_flat', config('scores_flat', 0, 'labels.txt'), files);
  await writeModelFolder(repo, 'scores_nolabels', config('scores_nolabels', 8, 'missing.txt'), files);
  node = await startTestNode(repo);
  client = grpcClient(node.grpcTarget);
}, 60_000);

afterAll(async () => {
  client?.close();
  await node?.stop();
  await removeDir(repo);
});

const classify = (k: number) => ({ parameters: { classification: k } });

describe('classification over HTTP', () => {
  it('returns the top-K of each batch entry as BYTES with labels', async () => {
    const answer = await inferJson(
      node.http,
      'scores',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 4], data: [0.5, 2, 1, -1, 3, 0.25, 3, 7] }],
      [{ name: 'SCORES', ...classify(2) }, { name: 'ROUNDED', ...classify(3) }],
    );
    expect(answer.status).toBe(200);
    expect(answer.outputs.SCORES).toEqual({
      name: 'SCORES',
      datatype: 'BYTES',
      shape: [2, 2],
      data: ['2.000000:1:cat', '1.000000:2:dog', '7.000000:3:emu', '3.000000:0:ant'],
    });
    // No label file: "<value>:<index>"; integers print as integers; ties keep the lower index first.
    expect(answer.outputs.ROUNDED).toMatchObject({ datatype: 'BYTES', shape: [2, 3], data: ['2:1', '1:0', '1:2', '7:3', '3:0', '3:2'] });
  });

  it('gives shape [K] for a non-batching model, caps K at the class count, and leaves other outputs alone', async () => {
    const answer = await inferJson(
      node.http,
      'scores_flat',
      [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 4, 2, 3] }],
      [{ name: 'SCORES', ...classify(10) }, { name: 'ROUNDED' }],
    );
    expect(answer.outputs.SCORES).toMatchObject({ shape: [4], data: ['4.000000:1:cat', '3.000000:3:emu', '2.000000:2:dog', '1.000000:0:ant'] });
    expect(answer.outputs.ROUNDED).toMatchObject({ datatype: 'INT32', shape: [4], data: [1, 4, 2, 3] });
  });
});

describe('classification over gRPC', () => {
  it('takes classification as int64_param and returns BYTES in raw_output_contents', async () => {
    const svc = clientServiceDefinition(GRPCInferenceService);
    const { response } = await callUnary(
      client,
      svc.modelInfer,
      create(ModelInferRequestSchema, {
        modelName: 'scores',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 4n] }],
        rawInputContents: [fp32Bytes([0.1, 0.9, 0.3, 0.2])],
        outputs: [{ name: 'SCORES', parameters: { classification: { parameterChoice: { case: 'int64Param', value: 2n } } } }],
      }),
    );
    const output = response.outputs[0];
    expect(output).toMatchObject({ name: 'SCORES', datatype: 'BYTES', shape: [1n, 2n] });
    const elements = decodeBytesElements(response.rawOutputContents[0] ?? new Uint8Array(), 2).map((e) => Buffer.from(e).toString());
    expect(elements).toEqual(['0.900000:1:cat', '0.300000:2:dog']);
  });
});

describe('label files', () => {
  it('a missing label file fails the load with a reason', async () => {
    const entry = await indexEntry(node.http, 'scores_nolabels');
    expect(entry?.state).toBe('UNAVAILABLE');
    expect(entry?.reason).toMatch(/failed to read label file 'missing.txt' of output 'SCORES'/);
  });
});
