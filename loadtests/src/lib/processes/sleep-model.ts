/**
 * The bench fleets' model with a known service time: a typescript-backend model whose execute()
 * sleeps `delay_ms` per batch, then echoes INPUT0 (FP32[4]) as OUTPUT0. Without batching
 * (max_batch_size 0) a node's capacity is instances / service time, and it costs no CPU, so the load
 * generator, the gateways and the nodes can share one small machine (`simple` is too fast to
 * saturate a node).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ESM_PACKAGE_JSON, configText } from '../../../../gpu-node/src/example-models/index.js';

export const SLEEP_INPUT = 'INPUT0';
export const SLEEP_OUTPUT = 'OUTPUT0';
export const SLEEP_ELEMENTS = 4;

const SLEEP_MODEL_SOURCE = `// Written by loadtests/src/lib/processes/sleep-model.ts: a model with a known service time.
let delayMs = 0;
export function initialize(args) {
  delayMs = Number(args.parameters.delay_ms ?? '0');
}
export async function execute(requests) {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  return requests.map((request) => {
    const input = request.inputs.${SLEEP_INPUT};
    return { outputs: { ${SLEEP_OUTPUT}: { datatype: 'FP32', shape: [...input.shape], data: input.data } } };
  });
}
`;

/** Writes model `name` into repository `repo`: `instances` CPU instances, `delayMs` per batch. */
export async function writeSleepModel(repo: string, name: string, delayMs: number, instances: number): Promise<void> {
  const config = configText({
    name,
    backend: 'typescript',
    defaultModelFilename: 'model.js',
    maxBatchSize: 0,
    inputs: [{ name: SLEEP_INPUT, dataType: 'TYPE_FP32', dims: [SLEEP_ELEMENTS] }],
    outputs: [{ name: SLEEP_OUTPUT, dataType: 'TYPE_FP32', dims: [SLEEP_ELEMENTS] }],
    instanceGroups: [{ count: instances, kind: 'KIND_CPU' }],
    parameters: { delay_ms: String(delayMs) },
  });
  await mkdir(join(repo, name, '1'), { recursive: true });
  await writeFile(join(repo, name, 'config.pbtxt'), config);
  await writeFile(join(repo, name, '1', 'model.js'), SLEEP_MODEL_SOURCE);
  await writeFile(join(repo, name, '1', 'package.json'), ESM_PACKAGE_JSON);
}
