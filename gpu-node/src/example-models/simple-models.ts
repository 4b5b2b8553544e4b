/**
 * Triton's classic `simple` (rebuilt as ONNX) and `simple_identity` (a TypeScript model) examples: the models Triton's
 * client examples (simple_http_infer_client, simple_grpc_string_infer_client, ...) are written against.
 */
import { readFile } from 'node:fs/promises';
import { configText } from './config-text.js';
import type { ExampleModel } from './example-model.js';
import { encodeModel, OnnxDataType } from './onnx-writer.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

const PRODUCER = 'tessera-example-models';
const BYTES_IDENTITY_MODULE = new URL('./bytes-identity-model.js', import.meta.url);

/** INPUT0, INPUT1 INT32 [16] → OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1. */
export function buildSimpleOnnx(): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.INT32, shape: ['batch', 16] });
  return encodeModel({
    producerName: PRODUCER,
    graph: {
      name: 'simple',
      nodes: [
        { opType: 'Add', name: 'add', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT0'] },
        { opType: 'Sub', name: 'sub', inputs: ['INPUT0', 'INPUT1'], outputs: ['OUTPUT1'] },
      ],
      inputs: [io('INPUT0'), io('INPUT1')],
      outputs: [io('OUTPUT0'), io('OUTPUT1')],
    },
  });
}

/**
 * An ONNX Identity on a string tensor, [batch, count]: not an example model (onnxruntime strings cannot hold a NUL,
 * which Triton's `simple_identity` clients send) but the fixture that shows how the node refuses such bytes.
 */
export function buildStringIdentityOnnx(): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.STRING, shape: ['batch', 'count'] });
  return encodeModel({
    producerName: PRODUCER,
    graph: {
      name: 'simple_identity',
      nodes: [{ opType: 'Identity', name: 'identity', inputs: ['INPUT0'], outputs: ['OUTPUT0'] }],
      inputs: [io('INPUT0')],
      outputs: [io('OUTPUT0')],
    },
  });
}

export const simpleModel: ExampleModel = {
  name: 'simple',
  description: 'INT32 [16] pair → sum and difference (Triton\'s "simple")',
  build: async () => [
    {
      path: 'config.pbtxt',
      contents: configText({
        name: 'simple',
        platform: 'onnxruntime_onnx',
        maxBatchSize: 8,
        inputs: [
          { name: 'INPUT0', dataType: 'TYPE_INT32', dims: [16] },
          { name: 'INPUT1', dataType: 'TYPE_INT32', dims: [16] },
        ],
        outputs: [
          { name: 'OUTPUT0', dataType: 'TYPE_INT32', dims: [16] },
          { name: 'OUTPUT1', dataType: 'TYPE_INT32', dims: [16] },
        ],
      }),
    },
    { path: '1/model.onnx', contents: buildSimpleOnnx() },
  ],
};

/**
 * `simple_identity`: BYTES [-1] back unchanged, on the typescript backend so that every byte travels (Triton's
 * example client sends "he\0llo"); the module is in bytes-identity-model.js.
 */
export const simpleIdentityModel: ExampleModel = {
  name: 'simple_identity',
  description: 'BYTES [-1] → the same bytes (NUL and non-UTF-8 included), a TypeScript model',
  build: async () => [
    {
      path: 'config.pbtxt',
      contents: configText({
        name: 'simple_identity',
        backend: 'typescript',
        defaultModelFilename: 'model.js',
        maxBatchSize: 8,
        inputs: [{ name: 'INPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
        outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
      }),
    },
    { path: '1/model.js', contents: await readFile(BYTES_IDENTITY_MODULE, 'utf8') },
    { path: '1/package.json', contents: ESM_PACKAGE_JSON },
  ],
};
