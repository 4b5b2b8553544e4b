/**
 * Helpers shared by the end-to-end suites: a temporary model repository, a real node started in-process
 * on port 0 (127.0.0.1 only), a grpc-js client built from our generated protobuf-es code, and a tiny
 * Prometheus text reader.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, credentials } from '@grpc/grpc-js';
import { configText, writeExampleRepository } from '../src/example-models/index.js';
import { buildStringIdentityOnnx } from '../src/example-models/simple-models.js';
import { parseNodeArgs } from '../src/cli/node-options.js';
import { startNode, type RunningNode } from '../src/cli/start-node.js';
import { silentLogger } from '../../shared/src/logging/index.js';

/** A fresh temporary directory holding the named example models (never mlp_large: ~100 MB). */
export async function exampleRepository(only: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-e2e-'));
  await writeExampleRepository(dir, { only });
  return dir;
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}

/** The node's own command line, every endpoint on 127.0.0.1 port 0. */
export function nodeArgs(repository: string, extra: readonly string[] = []): string[] {
  return [
    '--model-repository', repository,
    '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0',
    '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
    '--exit-timeout-secs', '5',
    ...extra,
  ];
}

export interface TestNode extends RunningNode {
  readonly http: string;
  readonly metrics: string;
  readonly grpcTarget: string;
}

/** Starts a real node exactly as `tessera-node` would, from parsed command-line flags. */
export async function startTestNode(repository: string, extra: readonly string[] = []): Promise<TestNode> {
  const parsed = parseNodeArgs(nodeArgs(repository, extra));
  if (parsed.kind !== 'options') throw new Error(`bad test node flags: ${JSON.stringify(parsed)}`);
  const node = await startNode(parsed.options, silentLogger);
  return {
    ...node,
    stop: () => node.stop(),
    http: `http://127.0.0.1:${node.httpPort}`,
    metrics: `http://127.0.0.1:${node.metricsPort}/metrics`,
    grpcTarget: `127.0.0.1:${node.grpcPort}`,
  };
}

export function grpcClient(target: string): Client {
  return new Client(target, credentials.createInsecure());
}

/** `name{labels} value` lines → value, keyed by `name{labels}` exactly as printed. */
export function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

export function int32Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(new Int32Array(values).buffer);
}

export function fp32Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(new Float32Array(values).buffer);
}

export function int32Values(data: Uint8Array): number[] {
  const copy = data.slice();
  return [...new Int32Array(copy.buffer, 0, copy.byteLength / 4)];
}

export function fp32Values(data: Uint8Array): number[] {
  const copy = data.slice();
  return [...new Float32Array(copy.buffer, 0, copy.byteLength / 4)];
}

const ESM_PACKAGE_JSON = '{ "type": "module" }\n';

/**
 * Writes a typescript-backend model `name` (FP32 [-1] → OUTPUT0, max_batch_size 8) whose version
 * `version` runs `executeBody` — the body of `async function execute(requests)`, which may use
 * `params` (the config's string parameters) and `sleep(ms)`.
 */
export async function writeScriptModel(
  repository: string,
  name: string,
  options: { version?: number; executeBody: string; parameters?: Record<string, string>; withConfig?: boolean },
): Promise<void> {
  const dir = join(repository, name);
  const versionDir = join(dir, String(options.version ?? 1));
  await mkdir(versionDir, { recursive: true });
  const source = [
    "import { writeFileSync } from 'node:fs';",
    'let params = {};',
    'const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));',
    'export function initialize(args) { params = args.parameters ?? {}; }',
    `export async function execute(requests) {\n${options.executeBody}\n}`,
    '',
  ].join('\n');
  await writeFile(join(versionDir, 'model.js'), source);
  await writeFile(join(versionDir, 'package.json'), ESM_PACKAGE_JSON);
  if (options.withConfig ?? true) {
    await writeFile(
      join(dir, 'config.pbtxt'),
      configText({
        name,
        backend: 'typescript',
        defaultModelFilename: 'model.js',
        maxBatchSize: 8,
        inputs: [{ name: 'INPUT0', dataType: 'TYPE_FP32', dims: [-1] }],
        outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_FP32', dims: [-1] }],
        ...(options.parameters === undefined ? {} : { parameters: options.parameters }),
      }),
    );
  }
}

/** A typescript-backend BYTES identity model `name` (TYPE_STRING [-1] → OUTPUT0, max_batch_size 8). */
export async function writeBytesIdentityModel(repository: string, name: string): Promise<void> {
  await writeScriptModel(repository, name, {
    withConfig: false,
    executeBody: 'return requests.map((r) => ({ outputs: { OUTPUT0: { datatype: "BYTES", shape: [...r.inputs.INPUT0.shape], data: r.inputs.INPUT0.data } } }));',
  });
  await writeFile(
    join(repository, name, 'config.pbtxt'),
    configText({
      name,
      backend: 'typescript',
      defaultModelFilename: 'model.js',
      maxBatchSize: 8,
      inputs: [{ name: 'INPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
      outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
    }),
  );
}

/** An ONNX string Identity model `name` (TYPE_STRING [-1], max_batch_size 8): what onnxruntime strings cannot hold. */
export async function writeOnnxStringIdentityModel(repository: string, name: string): Promise<void> {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await writeFile(join(repository, name, '1', 'model.onnx'), buildStringIdentityOnnx());
  await writeFile(
    join(repository, name, 'config.pbtxt'),
    configText({
      name,
      platform: 'onnxruntime_onnx',
      maxBatchSize: 8,
      inputs: [{ name: 'INPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
      outputs: [{ name: 'OUTPUT0', dataType: 'TYPE_STRING', dims: [-1] }],
    }),
  );
}

/** An execute body answering OUTPUT0 = INPUT0 × factor. */
export function scaleBody(factor: number): string {
  return (
    'return requests.map((r) => ({ outputs: { OUTPUT0: { datatype: "FP32", shape: [...r.inputs.INPUT0.shape], ' +
    `data: r.inputs.INPUT0.data.map((x) => x * ${factor}) } } }));`
  );
}
