/**
 * `node --import tsx loadtests/src/perf/cpu-profile-summary.ts FILE.cpuprofile [N]`: where a V8 CPU
 * profile (`node --cpu-prof`) spent its time: self time by function and by source file, top N (20),
 * as a share of the samples that were not idle. Used to name where a missed target's microseconds go.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly us: number;
  readonly share: number;
}

const IDLE = new Set(['(idle)', '(program)']);

/** Self time per function and per file, busiest first, idle samples left out. */
export function summarizeProfile(profile: CpuProfile): { busyUs: number; byFunction: SelfTime[]; byFile: SelfTime[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const dt = profile.timeDeltas[i] ?? 0;
    if (node === undefined || IDLE.has(node.callFrame.functionName)) continue;
    busyUs += dt;
    const url = node.callFrame.url.replace(/^.*\/(node_modules\/|gateway\/|shared\/|node:)/, '$1') || '(native)';
    const key = `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + dt);
    file.set(url, (file.get(url) ?? 0) + dt);
  }
  const rank = (m: Map<string, number>): SelfTime[] =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, us, share: busyUs > 0 ? us / busyUs : 0 }));
  return { busyUs, byFunction: rank(fn), byFile: rank(file) };
}

async function main(): Promise<void> {
  const [path, n] = process.argv.slice(2);
  if (path === undefined) {
    process.stderr.write('usage: cpu-profile-summary.ts FILE.cpuprofile [N]\n');
    process.exitCode = 2;
    return;
  }
  const top = Number(n ?? 20);
  const summary = summarizeProfile(JSON.parse(await readFile(path, 'utf8')) as CpuProfile);
  const line = (t: SelfTime): string => `${(t.share * 100).toFixed(1).padStart(5)}%  ${(t.us / 1000).toFixed(0).padStart(6)} ms  ${t.name}`;
  process.stdout.write(`busy ${(summary.busyUs / 1000).toFixed(0)} ms\n\nby file (self time)\n${summary.byFile.slice(0, top).map(line).join('\n')}\n\nby function (self time)\n${summary.byFunction.slice(0, top).map(line).join('\n')}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
