/**
 * Triton's GPU families, labelled `gpu_uuid`, read from `nvidia-smi --query-gpu` instead of DCGM (no
 * native binding needed). nvidia-smi costs tens of milliseconds, so a sample is reused for
 * `intervalMs` (Triton's --metrics-interval-ms, 2 s). Without nvidia-smi the families are simply not
 * registered: a CPU-only node exports no empty GPU series and logs no errors.
 */
import { execFile } from 'node:child_process';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

export const NVIDIA_SMI_QUERY = 'uuid,utilization.gpu,memory.total,memory.used,power.draw,power.limit';
export const NVIDIA_SMI_ARGS = [`--query-gpu=${NVIDIA_SMI_QUERY}`, '--format=csv,noheader,nounits'];

export interface GpuSample {
  readonly uuid: string;
  /** 0-1; undefined where nvidia-smi reports [N/A] (and so on for every field). */
  readonly utilization?: number;
  readonly memoryTotalBytes?: number;
  readonly memoryUsedBytes?: number;
  readonly powerWatts?: number;
  readonly powerLimitWatts?: number;
}

const MIB = 1024 * 1024;

function number(field: string | undefined): number | undefined {
  if (field === undefined) return undefined;
  const value = Number(field.trim());
  // "[N/A]", "[Not Supported]" and empty fields are absent values, not zeros.
  return field.trim() === '' || !Number.isFinite(value) ? undefined : value;
}

/** Parses the CSV of NVIDIA_SMI_ARGS (one GPU per line); malformed lines are skipped. */
export function parseNvidiaSmiQuery(output: string): GpuSample[] {
  const samples: GpuSample[] = [];
  for (const line of output.split('\n')) {
    const fields = line.split(',').map((f) => f.trim());
    const uuid = fields[0];
    if (fields.length < 6 || uuid === undefined || uuid === '') continue;
    const util = number(fields[1]);
    const memTotal = number(fields[2]);
    const memUsed = number(fields[3]);
    samples.push({
      uuid,
      ...(util !== undefined ? { utilization: util / 100 } : {}),
      ...(memTotal !== undefined ? { memoryTotalBytes: memTotal * MIB } : {}),
      ...(memUsed !== undefined ? { memoryUsedBytes: memUsed * MIB } : {}),
      ...(number(fields[4]) !== undefined ? { powerWatts: number(fields[4]) } : {}),
      ...(number(fields[5]) !== undefined ? { powerLimitWatts: number(fields[5]) } : {}),
    });
  }
  return samples;
}

/** Returns nvidia-smi's stdout, or null when there is no usable nvidia-smi. Injected in tests. */
export type GpuQuery = () => Promise<string | null>;

export const runNvidiaSmi: GpuQuery = () =>
  new Promise((resolve) => {
    execFile('nvidia-smi', NVIDIA_SMI_ARGS, { timeout: 5_000, encoding: 'utf8' }, (err, stdout) =>
      resolve(err ? null : stdout),
    );
  });

type Field = Exclude<keyof GpuSample, 'uuid'>;

const FAMILIES: readonly { name: string; help: string; field: Field }[] = [
  { name: 'nv_gpu_utilization', help: 'GPU utilization rate [0.0 - 1.0)', field: 'utilization' },
  { name: 'nv_gpu_memory_total_bytes', help: 'GPU total memory, in bytes', field: 'memoryTotalBytes' },
  { name: 'nv_gpu_memory_used_bytes', help: 'GPU used memory, in bytes', field: 'memoryUsedBytes' },
  { name: 'nv_gpu_power_usage', help: 'GPU power usage in watts', field: 'powerWatts' },
  { name: 'nv_gpu_power_limit', help: 'GPU power management limit in watts', field: 'powerLimitWatts' },
];

export interface GpuMetrics {
  /** Samples the GPUs if the last sample is older than the interval; call before each scrape. */
  refresh(): Promise<void>;
}

export function gpuMetrics(registry: Registry, query: GpuQuery = runNvidiaSmi, intervalMs = 2_000): GpuMetrics {
  let samples: GpuSample[] = [];
  let sampledAt = -Infinity;
  let disabled = false;
  let gauges: Gauge<'gpu_uuid'>[] | undefined;
  let pending: Promise<void> | undefined;

  const register = (): Gauge<'gpu_uuid'>[] =>
    FAMILIES.map(
      ({ name, help, field }) =>
        new Gauge({
          name,
          help,
          labelNames: ['gpu_uuid'],
          registers: [registry],
          collect() {
            this.reset();
            for (const s of samples) {
              const value = s[field];
              if (value !== undefined) this.set({ gpu_uuid: s.uuid }, value);
            }
          },
        }),
    );

  const sample = async (): Promise<void> => {
    const output = await query();
    sampledAt = Date.now();
    if (output === null) {
      // No nvidia-smi now means none later: stop spawning, export nothing.
      if (gauges === undefined) disabled = true;
      samples = [];
      return;
    }
    samples = parseNvidiaSmiQuery(output);
    if (gauges === undefined && samples.length > 0) gauges = register();
  };

  return {
    async refresh() {
      if (disabled || Date.now() - sampledAt < intervalMs) return;
      // Concurrent scrapes share one nvidia-smi run.
      pending ??= sample().finally(() => (pending = undefined));
      await pending;
    },
  };
}
