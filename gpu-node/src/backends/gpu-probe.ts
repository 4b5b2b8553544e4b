/**
 * Which GPUs this machine has, as `nvidia-smi -L` lists them ("GPU 0: NVIDIA H100 ... (UUID: ...)").
 * No nvidia-smi, or one that fails, means no GPU. The answer is cached for the process: instance
 * groups are expanded at every model load, and the GPU set does not change under a running node.
 */
import { execFileSync } from 'node:child_process';

/** Returns the visible GPU ordinals; injected in tests and wherever the probe must not run. */
export type GpuProbe = () => readonly number[];

let cached: readonly number[] | undefined;

/** Parses `nvidia-smi -L` output into GPU ordinals. */
export function parseNvidiaSmiList(output: string): number[] {
  const ordinals: number[] = [];
  for (const line of output.split('\n')) {
    const match = /^GPU (\d+):/.exec(line.trim());
    if (match?.[1] !== undefined) ordinals.push(Number(match[1]));
  }
  return ordinals;
}

export const nvidiaSmiGpus: GpuProbe = () => {
  if (cached !== undefined) return cached;
  try {
    const output = execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
    cached = parseNvidiaSmiList(output);
  } catch {
    cached = [];
  }
  return cached;
};
