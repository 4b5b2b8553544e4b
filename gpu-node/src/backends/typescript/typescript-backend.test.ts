import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataType } from '../../../../shared/src/gen/model_config_pb.js';
import type { Tensor } from '../../../../shared/src/tensors/index.js';
import type { BackendInstance, ExecutionRequest, ExecutionResult } from '../backend.js';
import { cpuSpec, int32Tensor, int32Values, modelConfig, request, tempRepo, typedTensor, type TempRepo } from '../../../test/support/backend-test-support.js';
import { createTypescriptBackend } from './typescript-backend.js';

const ESM_PACKAGE = JSON.stringify({ type: 'module' });

/**
 * A model that logs its lifecycle to a file, echoes INPUT (INT32) as OUTPUT plus OUTPUT_SUM, and
 * misbehaves on request: parameter `mode` = throw | error | bad_type | bad_size | exit | uncaught.
 */
const RECORDING_MODEL = `
import { appendFileSync } from 'node:fs';
let log;
let name;
export function initialize(args) {
  log = args.parameters.log_path;
  name = args.instanceName;
  appendFileSync(log, 'initialize ' + name + ' ' + args.kind + ' ' + args.device + ' ' + args.config.name + '\\n');
}
export async function execute(requests) {
  appendFileSync(log, 'execute ' + requests.length + '\\n');
  const mode = requests[0].parameters.mode;
  if (mode === 'throw') throw new Error('the model refuses');
  if (mode === 'exit') process.exit(7);
  if (mode === 'uncaught') { setTimeout(() => { throw new Error('kaboom'); }); return new Promise(() => {}); }
  return requests.map((r) => {
    const input = r.inputs.INPUT;
    const m = r.parameters.mode;
    if (m === 'error') return { error: 'this request is bad' };
    if (m === 'bad_type') return { outputs: { OUTPUT: { datatype: 'FLOAT7', shape: [1], data: [1] } } };
    if (m === 'bad_size') return { outputs: { OUTPUT: { datatype: 'INT32', shape: [3], data: new Int32Array(2) } } };
    const sum = input.data.reduce((a, b) => a + b, 0);
    return {
      outputs: {
        OUTPUT: { datatype: 'INT32', shape: input.shape, data: input.data },
        OUTPUT_SUM: { datatype: 'INT64', shape: [1, 1], data: [BigInt(sum)] },
      },
    };
  });
}
export function finalize() { appendFileSync(log, 'finalize ' + name + '\\n'); }
`;

/** Two instances of this model can only both finish if both are executing at the same time. */
const RENDEZVOUS_MODEL = `
let channel;
let name;
export function initialize(args) {
  name = args.instanceName;
  channel = new BroadcastChannel(args.parameters.channel);
}
export async function execute(requests) {
  const released = new Promise((resolve) => {
    channel.onmessage = (event) => { if (event.data === 'release') resolve(); };
  });
  channel.postMessage('started ' + name);
  await released;
  return requests.map(() => ({ outputs: { OUTPUT: { datatype: 'BOOL', shape: [1], data: [true] } } }));
}
export function finalize() { channel.close(); }
`;

const TYPESCRIPT_MODEL = `
interface Input { datatype: string; shape: number[]; data: Uint8Array[] }
export function execute(requests: { inputs: Record<string, Input> }[]): unknown[] {
  return requests.map((r) => {
    const words: string[] = r.inputs.TEXT!.data.map((b) => new TextDecoder().decode(b).toUpperCase());
    return { outputs: { UPPER: { datatype: 'BYTES', shape: [words.length], data: words } } };
  });
}
`;

/**
 * A decoupled model: per request, INPUT[0] responses counting down, then by parameter `end`: 'final'
 * (last one flagged), 'close' (bare final flag), 'none' (left to the backend), 'error' (an error
 * response after one response), 'wait' (waits for its signal, then records it). After completing, it
 * tries one more send and records whether that threw.
 */
const DECOUPLED_MODEL = `
import { appendFileSync } from 'node:fs';
let log;
export function initialize(args) { log = args.parameters.log_path; }
const out = (v) => ({ outputs: { OUTPUT: { datatype: 'INT32', shape: [1], data: [v] } } });
export async function execute(requests) {
  await Promise.all(requests.map(async (r) => {
    const n = r.inputs.INPUT.data[0];
    const end = r.parameters.end;
    if (end === 'wait') {
      r.sender.send(out(1));
      await new Promise((resolve) => r.signal.addEventListener('abort', resolve, { once: true }));
      appendFileSync(log, 'saw abort; send answers ' + r.sender.send(out(2)) + '\\n');
      return;
    }
    for (let i = n; i > 0; i--) r.sender.send(out(i), { final: end === 'final' && i === 1 });
    if (end === 'close') r.sender.close();
    if (end === 'error') r.sender.send({ error: 'gave up' });
    if (end === 'final' || end === 'close') {
      try { r.sender.send(out(0)); appendFileSync(log, 'late send accepted\\n'); }
      catch { appendFileSync(log, 'late send threw\\n'); }
    }
  }));
}
`;

function outputsOf(result: ExecutionResult | undefined): readonly Tensor[] {
  if (result === undefined || 'error' in result) throw new Error(`expected outputs, got ${JSON.stringify(result)}`);
  return result.outputs;
}

describe('typescript backend', () => {
  const backend = createTypescriptBackend();
  let repo: TempRepo;
  const open: BackendInstance[] = [];

  beforeAll(async () => {
    repo = await tempRepo();
  });
  afterAll(async () => {
    await Promise.all(open.map((i) => i.close()));
    await repo.remove();
  });

  async function recordingInstance(modelName: string, instanceName: string) {
    const logPath = join(repo.dir, `${modelName}.log`);
    const config = modelConfig({
      name: modelName,
      backend: 'typescript',
      maxBatchSize: 4,
      parameters: { log_path: { stringValue: logPath } },
    });
    const source = await repo.source(config, 'model.js', RECORDING_MODEL);
    await repo.source(config, 'package.json', ESM_PACKAGE);
    const inst = await backend.createInstance(source, cpuSpec(instanceName));
    open.push(inst);
    const log = async () => (await readFile(logPath, 'utf8')).trim().split('\n');
    return { inst, log };
  }

  const withMode = (mode: string | undefined, values = [1, 2]): ExecutionRequest => ({
    ...request([int32Tensor('INPUT', [1, values.length], values)]),
    parameters: mode === undefined ? {} : { mode },
  });

  it('runs the ts_scale example model with its configured factor', async () => {
    const config = modelConfig({
      name: 'ts_scale',
      backend: 'typescript',
      maxBatchSize: 8,
      input: [{ name: 'INPUT0', dataType: DataType.TYPE_FP32, dims: [-1n] }],
      parameters: { factor: { stringValue: '2' } },
    });
    const moduleSource = await readFile(new URL('../../example-models/ts-scale-model.js', import.meta.url), 'utf8');
    const source = await repo.source(config, 'model.js', moduleSource);
    await repo.source(config, 'package.json', ESM_PACKAGE);
    const inst = await backend.createInstance(source, cpuSpec('ts_scale_0'));
    open.push(inst);
    const { results, timing } = await inst.execute([
      request([typedTensor('INPUT0', 'FP32', [1, 3], new Float32Array([1, 2.5, -3]))]),
      request([typedTensor('INPUT0', 'FP32', [2, 1], new Float32Array([10, 20]))]),
    ]);
    const values = (r: ExecutionResult | undefined) => [...new Float32Array(outputsOf(r)[0]!.data.slice().buffer)];
    expect(values(results[0])).toEqual([2, 5, -6]);
    expect(outputsOf(results[1])[0]?.shape).toEqual([2, 1]);
    expect(values(results[1])).toEqual([20, 40]);
    expect(timing.computeInferNs).toBeGreaterThan(0);
  });

  it('calls initialize, execute and finalize, and returns only the requested outputs', async () => {
    const { inst, log } = await recordingInstance('recorder', 'recorder_0');
    const { results } = await inst.execute([withMode(undefined, [1, 2, 3]), { ...withMode(undefined, [5]), requestedOutputs: ['OUTPUT_SUM'] }]);
    const first = outputsOf(results[0]);
    expect(first.map((o) => o.name)).toEqual(['OUTPUT', 'OUTPUT_SUM']);
    expect(int32Values(first[0])).toEqual([1, 2, 3]);
    const second = outputsOf(results[1]);
    expect(second.map((o) => [o.name, o.datatype, o.shape])).toEqual([['OUTPUT_SUM', 'INT64', [1, 1]]]);
    expect(new BigInt64Array(second[0]!.data.slice().buffer)[0]).toBe(5n);
    await inst.close();
    expect(await log()).toEqual(['initialize recorder_0 cpu -1 recorder', 'execute 2', 'finalize recorder_0']);
  });

  it('turns a thrown error into INTERNAL for the whole batch, and bad responses into INTERNAL for their request', async () => {
    const { inst } = await recordingInstance('faulty', 'faulty_0');
    const thrown = await inst.execute([withMode('throw'), withMode(undefined)]);
    for (const result of thrown.results) {
      expect(result).toMatchObject({ error: { code: 'INTERNAL', message: "model 'faulty': execute() failed: the model refuses" } });
    }
    const { results } = await inst.execute([withMode('error'), withMode('bad_type'), withMode('bad_size'), withMode(undefined)]);
    expect(results[0]).toMatchObject({ error: { code: 'INTERNAL', message: 'this request is bad' } });
    expect(results[1]).toMatchObject({ error: { code: 'INTERNAL', message: `model 'faulty': output 'OUTPUT' has unknown datatype "FLOAT7"` } });
    expect(results[2]).toMatchObject({
      error: { code: 'INTERNAL', message: "model 'faulty': output 'OUTPUT' has 2 elements, but shape [3] needs 3" },
    });
    expect(int32Values(outputsOf(results[3])[0])).toEqual([1, 2]);
  });

  it('fails the in-flight batch when the worker crashes, then restarts the instance', async () => {
    const { inst, log } = await recordingInstance('crasher', 'crasher_0');
    const exited = await inst.execute([withMode('exit'), withMode(undefined)]);
    for (const result of exited.results) {
      expect(result).toMatchObject({
        error: { code: 'INTERNAL', message: 'instance crasher_0: worker thread crashed while executing (exit code 7)' },
      });
    }
    const uncaught = await inst.execute([withMode('uncaught')]);
    expect(uncaught.results[0]).toMatchObject({
      error: { code: 'INTERNAL', message: expect.stringMatching(/^instance crasher_0: worker thread crashed while executing \(kaboom\)/) },
    });
    const { results } = await inst.execute([withMode(undefined, [4])]);
    expect(int32Values(outputsOf(results[0])[0])).toEqual([4]);
    expect((await log()).filter((l) => l.startsWith('initialize'))).toHaveLength(3);
  });

  it('runs two instances at the same time (each waits until both have started)', async () => {
    const channelName = `tessera-rendezvous-${randomUUID()}`;
    const config = modelConfig({ name: 'rendezvous', backend: 'typescript', parameters: { channel: { stringValue: channelName } } });
    const source = await repo.source(config, 'model.mjs', RENDEZVOUS_MODEL);
    const instances = await Promise.all([0, 1].map((i) => backend.createInstance(source, cpuSpec(`rendezvous_${i}`))));
    open.push(...instances);
    const channel = new BroadcastChannel(channelName);
    const started = new Set<string>();
    const bothStarted = new Promise<void>((resolve) => {
      channel.onmessage = (event) => {
        started.add(String((event as MessageEvent).data));
        if (started.size === 2) resolve();
      };
    });
    const executions = instances.map((inst) => inst.execute([request([])]));
    await bothStarted;
    expect([...started].sort()).toEqual(['started rendezvous_0', 'started rendezvous_1']);
    channel.postMessage('release');
    const done = await Promise.all(executions);
    channel.close();
    for (const { results } of done) expect(outputsOf(results[0])[0]?.datatype).toBe('BOOL');
  });

  it('loads model.ts through tsx when model.js is absent', async () => {
    const config = modelConfig({ name: 'upper', backend: 'typescript' });
    const source = await repo.source(config, 'model.ts', TYPESCRIPT_MODEL);
    const inst = await backend.createInstance({ ...source, modelPath: join(source.versionDir, 'model.js') }, cpuSpec('upper_0'));
    open.push(inst);
    const text = { name: 'TEXT', datatype: 'BYTES' as const, shape: [2], data: new Uint8Array([2, 0, 0, 0, 104, 105, 1, 0, 0, 0, 120]) };
    const { results } = await inst.execute([request([text])]);
    const upper = outputsOf(results[0])[0];
    expect(upper?.shape).toEqual([2]);
    expect([...(upper?.data ?? [])]).toEqual([2, 0, 0, 0, 72, 73, 1, 0, 0, 0, 88]);
  });

  it('fails the load when the module has no execute or initialize throws', async () => {
    const config = modelConfig({ name: 'empty', backend: 'typescript' });
    const source = await repo.source(config, 'model.mjs', 'export const nothing = 1;');
    await expect(backend.createInstance(source, cpuSpec('empty_0'))).rejects.toMatchObject({
      message: expect.stringMatching(/model 'empty': '.*model\.mjs' does not export an execute\(requests\) function/),
    });
    const throwing = await repo.source(
      modelConfig({ name: 'bad_init', backend: 'typescript' }),
      'model.mjs',
      'export function initialize() { throw new Error("no weights"); }\nexport function execute() { return []; }',
    );
    await expect(backend.createInstance(throwing, cpuSpec('bad_init_0'))).rejects.toMatchObject({
      code: 'INTERNAL',
      message: "model 'bad_init': initialize() failed: no weights",
    });
  });

  describe('decoupled models', () => {
    async function decoupledInstance() {
      const logPath = join(repo.dir, `decoupled-${randomUUID()}.log`);
      const config = modelConfig({
        name: `decoupled_${randomUUID().slice(0, 8)}`,
        backend: 'typescript',
        maxBatchSize: 0,
        modelTransactionPolicy: { decoupled: true },
        parameters: { log_path: { stringValue: logPath } },
      });
      const source = await repo.source(config, 'model.js', DECOUPLED_MODEL);
      await repo.source(config, 'package.json', ESM_PACKAGE);
      const inst = await backend.createInstance(source, cpuSpec(`${config.name}_0`));
      open.push(inst);
      const log = async () => (await readFile(logPath, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
      return { inst, log };
    }

    function streaming(end: string, n: number, signal?: AbortSignal) {
      const seen: [number[], boolean][] = [];
      const execution: ExecutionRequest = {
        ...request([int32Tensor('INPUT', [1], [n])]),
        parameters: { end },
        onResponse: (outputs, final) => seen.push([int32Values(outputs[0]), final]),
        ...(signal === undefined ? {} : { signal }),
      };
      return { execution, seen };
    }

    it('streams every response with its final flag; a request ends with empty outputs; late sends throw', async () => {
      const { inst, log } = await decoupledInstance();
      const final = streaming('final', 3);
      const close = streaming('close', 2);
      const none = streaming('none', 1);
      const { results } = await inst.execute([final.execution, close.execution, none.execution]);
      expect(final.seen).toEqual([[[3], false], [[2], false], [[1], true]]);
      expect(close.seen).toEqual([[[2], false], [[1], false]]);
      expect(none.seen).toEqual([[[1], false]]);
      expect(results).toEqual([{ outputs: [] }, { outputs: [] }, { outputs: [] }]);
      expect(await log()).toEqual(['late send threw', 'late send threw']);
    });

    it('an error response fails only its own request', async () => {
      const { inst } = await decoupledInstance();
      const bad = streaming('error', 1);
      const good = streaming('final', 1);
      const { results } = await inst.execute([bad.execution, good.execution]);
      expect(bad.seen).toEqual([[[1], false]]);
      expect(results[0]).toMatchObject({ error: { code: 'INTERNAL', message: 'gave up' } });
      expect(results[1]).toEqual({ outputs: [] });
    });

    it("aborting a request's signal on the main thread aborts the model's signal in the worker", async () => {
      const { inst, log } = await decoupledInstance();
      const controller = new AbortController();
      const waiting = streaming('wait', 1, controller.signal);
      const running = inst.execute([waiting.execution]);
      while (waiting.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort();
      const { results } = await running;
      expect(results).toEqual([{ outputs: [] }]);
      expect(await log()).toEqual(['saw abort; send answers false']);
    });
  });
});
