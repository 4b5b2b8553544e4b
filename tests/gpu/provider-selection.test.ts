// KIND_GPU and KIND_AUTO on a machine that claims a GPU (a stand-in nvidia-smi) but has no Vulkan
// device: a real node process tries each GPU provider, fails KIND_GPU with every reason, and runs
// KIND_AUTO on the CPU, saying so in its log and its metrics.
import { execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnNode, type SpawnedNode } from '../../gateway/test/support/test-node-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FAKE_NVIDIA_SMI = `#!/bin/sh
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-1111-2222-3333-444444444444)" ;;
  *--query-gpu=*) echo "GPU-00000000-1111-2222-3333-444444444444, 0, 143771, 512, 75.00, 700.00" ;;
  *) exit 1 ;;
esac
`;

describe('GPU execution provider choice in a node process', () => {
  let dir: string;
  let node: SpawnedNode | undefined;
  let log = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-gpu-choice-'));
    const repo = join(dir, 'models');
    await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', join(dir, 'written'), '--only', 'simple']);
    const config = await readFile(join(dir, 'written', 'simple', 'config.pbtxt'), 'utf8');
    const onnx = await readFile(join(dir, 'written', 'simple', '1', 'model.onnx'));
    for (const [name, kind] of [['on_gpu', 'KIND_GPU'], ['on_auto', 'KIND_AUTO']] as const) {
      await mkdir(join(repo, name, '1'), { recursive: true });
      const groups = `instance_group [ { count: 1 kind: ${kind} } ]`;
      await writeFile(join(repo, name, 'config.pbtxt'), `${config.replace(/^name: .*$/m, `name: "${name}"`).replace(/instance_group \[[\s\S]*?\n\]/, '')}\n${groups}\n`);
      await writeFile(join(repo, name, '1', 'model.onnx'), onnx);
    }
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'nvidia-smi'), FAKE_NVIDIA_SMI);
    await chmod(join(bin, 'nvidia-smi'), 0o755);
    node = await spawnNode(repo, [], { env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
    (node.process as ChildProcess).stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  });
  afterAll(async () => {
    node?.process.kill('SIGKILL');
    await node?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  const http = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${node?.httpPort}${path}`, init);

  it('fails a KIND_GPU model naming each provider it tried and why', async () => {
    const index = (await (await http('/v2/repository/index', { method: 'POST', body: '{}' })).json()) as { name: string; state: string; reason: string }[];
    const onGpu = index.find((m) => m.name === 'on_gpu');
    expect(onGpu?.state).toBe('UNAVAILABLE');
    expect(onGpu?.reason).toMatch(
      /^instance on_gpu_0_0: KIND_GPU found no execution provider that can run on GPU 0: cuda: libonnxruntime_providers_cuda\.so is not installed; webgpu: .*(adapter|Vulkan)/i,
    );
  });

  it('runs a KIND_AUTO model on the CPU and labels its instance with the CPU provider', async () => {
    const ready = await http('/v2/models/on_auto/ready');
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${node?.metricsPort}/metrics`)).text();
    expect(metrics).toContain('tessera_model_instance_info{model="on_auto",version="1",instance="on_auto_0_0",kind="cpu",device="-1",provider="cpu"} 1');
    expect(metrics).not.toContain('model="on_gpu"');
    // The stand-in GPU shows in Triton's GPU families, read from the same nvidia-smi.
    expect(metrics).toMatch(/^nv_gpu_memory_total_bytes\{gpu_uuid="GPU-00000000-1111-2222-3333-444444444444"\} /m);
    const config = (await (await http('/v2/models/on_auto/config')).json()) as { optimization?: { execution_accelerators?: unknown } };
    expect(JSON.stringify(config.optimization?.execution_accelerators ?? {})).not.toContain('webgpu');
  });
});
