// scripts/gpu-pack.sh and scripts/gpu-check.sh on this CPU machine: the pack holds what a bare GPU
// machine lacks, and the check runs from it alone, records why the GPU model could not load here, and
// still measures the CPU model, writing its JSON and table.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

describe('GPU check on a machine without a GPU', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-gpu-check-test-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('packs Node, the bundle, onnxruntime-node and the Vulkan loader', async () => {
    const { stderr } = await run('bash', [join(ROOT, 'scripts/gpu-pack.sh'), '--fast', join(dir, 'pack')], { cwd: ROOT });
    const binding = 'app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64';
    for (const file of ['bin/node', 'app/dist/tessera-node.js', 'app/dist/onnxruntime-worker.js', 'app/dist/tessera-perf.js', `${binding}/libonnxruntime.so.1`, `${binding}/onnxruntime_binding.node`, 'app/node_modules/onnxruntime-common/package.json']) {
      expect(existsSync(join(dir, 'pack', file)), file).toBe(true);
    }
    // apt-get download needs Debian's archive; without it the pack says so and relies on the GPU machine's loader.
    const loader = existsSync(join(dir, 'pack', 'vulkan', 'libvulkan.so.1'));
    expect(loader || stderr.includes('could not download libvulkan1')).toBe(true);
  });

  it('runs from the pack, records the GPU model failure and measures the CPU model', async () => {
    const out = join(dir, 'out');
    await run('bash', [join(ROOT, 'scripts/gpu-check.sh'), join(dir, 'pack'), out, '--', '--quick', '--concurrency', '2'], {
      cwd: ROOT,
      timeout: 240_000,
      maxBuffer: 1 << 24,
    }).catch((error: { stdout?: string }) => {
      throw new Error(`gpu-check failed:\n${error.stdout?.slice(-3000)}`);
    });
    const report = JSON.parse(await readFile(join(out, 'gpu-check.json'), 'utf8'));
    expect(report.models.mlp_cpu.state).toBe('READY');
    expect(report.models.mlp_gpu.state).toBe('UNAVAILABLE');
    expect(report.models.mlp_gpu.reason).toMatch(/KIND_GPU/);
    expect(report.anchor.find((a: { provider: string }) => a.provider === 'cpu').inferencesPerSec).toBeGreaterThan(0);
    const points = report.points as { model: string; protocol: string; inferencesPerSec: number; errors: number; nodeCpuUsPerInference: number }[];
    expect(points.map((p) => [p.model, p.protocol])).toEqual([
      ['mlp_cpu', 'http'],
      ['mlp_cpu', 'grpc'],
    ]);
    for (const point of points) {
      expect(point.errors).toBe(0);
      expect(point.inferencesPerSec).toBeGreaterThan(0);
      expect(point.nodeCpuUsPerInference).toBeGreaterThan(0);
    }
    expect(await readFile(join(out, 'gpu-check.md'), 'utf8')).toMatch(/\| mlp_cpu \| http \| 2 \(1\) \| \d+ \|/);
    expect(report.instances).toContain('tessera_model_instance_info{model="mlp_cpu",version="1",instance="mlp_cpu_0_0",kind="cpu",device="-1",provider="cpu"} 1');
  });
});
