/**
 * Triton's CPU families (no labels): `nv_cpu_utilization` (0-1, busy share of all cores since the
 * previous scrape) and `nv_cpu_memory_total_bytes` / `nv_cpu_memory_used_bytes` (MemTotal and
 * MemTotal - MemAvailable from /proc/meminfo, which is what "used" means to an operator: cache that the
 * kernel would drop on demand is not counted). Off Linux, Node's os module stands in for /proc.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

export interface MemoryInfo {
  readonly totalBytes: number;
  readonly usedBytes: number;
}

/** Parses /proc/meminfo; null when MemTotal is missing. Falls back to MemFree on kernels without MemAvailable. */
export function parseMeminfo(text: string): MemoryInfo | null {
  const kib = (key: string): number | undefined => {
    const match = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  };
  const total = kib('MemTotal');
  if (total === undefined) return null;
  const available = kib('MemAvailable') ?? kib('MemFree') ?? 0;
  return { totalBytes: total, usedBytes: Math.max(0, total - available) };
}

function readMemory(): MemoryInfo {
  try {
    const parsed = parseMeminfo(readFileSync('/proc/meminfo', 'utf8'));
    if (parsed) return parsed;
  } catch {
    // not Linux: fall through to os
  }
  return { totalBytes: os.totalmem(), usedBytes: os.totalmem() - os.freemem() };
}

interface CpuTimes {
  readonly busy: number;
  readonly total: number;
}

/** Summed over all cores; os.cpus() reads /proc/stat on Linux. */
function cpuTimes(): CpuTimes {
  let busy = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busy, total };
}

/** Busy share between two samples, clamped to 0-1; 0 when no time passed. */
export function utilizationBetween(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.min(1, Math.max(0, (after.busy - before.busy) / total));
}

export function registerCpuMetrics(registry: Registry): void {
  let previous = cpuTimes();
  new Gauge({
    name: 'nv_cpu_utilization',
    help: 'CPU utilization rate [0.0 - 1.0]',
    registers: [registry],
    collect() {
      const now = cpuTimes();
      this.set(utilizationBetween(previous, now));
      previous = now;
    },
  });
  // Both memory gauges read one sample per scrape so used never exceeds total.
  let memory: MemoryInfo | undefined;
  const sample = (): MemoryInfo => {
    if (memory === undefined) {
      memory = readMemory();
      queueMicrotask(() => (memory = undefined));
    }
    return memory;
  };
  new Gauge({
    name: 'nv_cpu_memory_total_bytes',
    help: 'CPU total memory (RAM), in bytes',
    registers: [registry],
    collect() {
      this.set(sample().totalBytes);
    },
  });
  new Gauge({
    name: 'nv_cpu_memory_used_bytes',
    help: 'CPU used memory (RAM), in bytes',
    registers: [registry],
    collect() {
      this.set(sample().usedBytes);
    },
  });
}
