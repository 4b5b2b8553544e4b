// `npm run build` (scripts/build.mjs): the bundle runs the node, its ONNX and TypeScript worker threads
// and the other commands without tsx, and carries none of esbuild's keepNames wrappers.
import { execFile, type ChildProcess } from 'node:child_process';
import { spawnNode } from '../../gateway/test/support/test-node-process.js';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

describe('production bundle', () => {
  let bundle: string;
  let repository: string;
  let node: ChildProcess | undefined;

  beforeAll(async () => {
    bundle = join(ROOT, '.tessera', `bundle-test-${process.pid}`);
    repository = await mkdtemp(join(tmpdir(), 'tessera-bundle-models-'));
    await run(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--outdir', bundle], { cwd: ROOT });
    await run(process.execPath, [join(bundle, 'tessera-models.js'), '--out', repository, '--only', 'simple,ts_scale,token_stream']);
  });
  afterAll(async () => {
    node?.kill('SIGKILL');
    await rm(bundle, { recursive: true, force: true });
    await rm(repository, { recursive: true, force: true });
  });

  it('has no keepNames wrappers and no static tsx import', async () => {
    const files = (await readdir(bundle)).filter((f) => f.endsWith('.js'));
    expect(files).toEqual(expect.arrayContaining(['tessera-node.js', 'tessera-gateway.js', 'onnxruntime-worker.js', 'typescript-worker.js']));
    for (const file of files) {
      const text = await readFile(join(bundle, file), 'utf8');
      expect(text, file).not.toMatch(/\b__name\(/);
      expect(text, file).not.toMatch(/^import[^;]*from\s*["']tsx/m);
    }
  });

  it('serves an ONNX, a TypeScript and a decoupled model (through /v1) from the bundled node', async () => {
    const started = await spawnNode(repository, [], { entry: join(bundle, 'tessera-node.js') });
    node = started.process;
    const infer = async (model: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${started.httpPort}/v2/models/${model}/infer`, { method: 'POST', body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { outputs: { name: string; data: number[] }[] } };
    };
    const ones = new Array(16).fill(1);
    const simple = await infer('simple', {
      inputs: [
        { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: ones.map((_, i) => i) },
        { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: ones },
      ],
    });
    expect(simple.status).toBe(200);
    expect(simple.body.outputs.find((o) => o.name === 'OUTPUT0')?.data).toEqual(ones.map((_, i) => i + 1));

    const metadata = (await (await fetch(`http://127.0.0.1:${started.httpPort}/v2/models/ts_scale`)).json()) as { inputs: { name: string; shape: number[] }[] };
    const input = metadata.inputs[0]!;
    const scaled = await infer('ts_scale', { inputs: [{ name: input.name, shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 4] }] });
    expect(scaled.status).toBe(200);
    expect(scaled.body.outputs[0]?.data).toHaveLength(4);

    // The decoupled example and the OpenAI API, with its tokenizer, from the bundle too.
    const completion = await fetch(`http://127.0.0.1:${started.httpPort}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'token_stream', prompt: 'bundled tokens', max_tokens: 8 }),
    });
    expect(await completion.json()).toMatchObject({ choices: [{ text: 'bundled tokens' }], usage: { prompt_tokens: 4 } });

    const metrics = await (await fetch(`http://127.0.0.1:${started.metricsPort}/metrics`)).text();
    expect(metrics).toContain('tessera_model_instance_info{model="simple",version="1",instance="simple_0",kind="cpu",device="-1",provider="cpu"} 1');
  });

  it('runs the gateway, jobs and perf commands', async () => {
    for (const [command, usage] of [
      ['tessera-gateway', /^usage: tessera-gateway/],
      ['tessera-jobs', /^usage: tessera-jobs/],
      ['tessera-perf', /^Usage: tessera-perf/],
    ] as const) {
      const { stdout, stderr } = await run(process.execPath, [join(bundle, `${command}.js`), '--help']).catch((e: { stdout: string; stderr: string }) => e);
      expect(`${stdout}${stderr}`, command).toMatch(usage);
    }
  });
});
