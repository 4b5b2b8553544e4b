/**
 * A one-model repository for in-process node suites: `doubler`, OUTPUT0 = INPUT0 + INPUT0 over FP32
 * [batch, width], written by the project's ONNX writer into a fresh temporary folder, so each answer's
 * bytes follow from its caller's own row only.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeModel, OnnxDataType } from '../../../gpu-node/src/example-models/onnx-writer.js';

export interface DoublerOptions {
  readonly width: number;
  readonly maxBatchSize: number;
  /** Extra config.pbtxt lines (a dynamic_batching block, say). */
  readonly extraConfig?: readonly string[];
}

function doublerModel(width: number): Uint8Array {
  const io = (name: string) => ({ name, elemType: OnnxDataType.FLOAT, shape: ['batch', width] });
  return encodeModel({
    graph: { name: 'doubler', nodes: [{ opType: 'Add', inputs: ['INPUT0', 'INPUT0'], outputs: ['OUTPUT0'] }], inputs: [io('INPUT0')], outputs: [io('OUTPUT0')] },
  });
}

function doublerConfig({ width, maxBatchSize, extraConfig = [] }: DoublerOptions): string {
  return [
    'name: "doubler"',
    'platform: "onnxruntime_onnx"',
    `max_batch_size: ${maxBatchSize}`,
    `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${width} ] } ]`,
    `output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${width} ] } ]`,
    'instance_group [ { count: 1 kind: KIND_CPU } ]',
    ...extraConfig,
  ].join('\n');
}

/** Writes the repository; the caller removes the folder it returns. */
export async function writeDoublerRepository(prefix: string, options: DoublerOptions): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await mkdir(join(dir, 'doubler', '1'), { recursive: true });
  await writeFile(join(dir, 'doubler', 'config.pbtxt'), doublerConfig(options));
  await writeFile(join(dir, 'doubler', '1', 'model.onnx'), doublerModel(options.width));
  return dir;
}
