/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`) as self time by function and by file, as shares
 * of the busy time (samples that are not `(idle)`): where a thread's microseconds go.
 * Usage: node --import tsx cpu-profile-summary.ts FILE.cpuprofile [TOP] [time|count]
 * `count` weighs every sample alike (the median interval each) instead of by its time delta: on a busy
 * box a preempted thread leaves long gaps that time weighting charges to whichever frame it stopped in.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface ProfileSummary {
  readonly sampledMs: number;
  readonly busyMs: number;
  readonly byFunction: readonly [string, number][];
  readonly byFile: readonly [string, number][];
}

const fileOf = (url: string): string => (url === '' ? '' : basename(url.replace(/^file:\/\//, '')));

export function summarizeProfile(profile: CpuProfile, weigh: 'time' | 'count' = 'time'): ProfileSummary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const sortedDeltas = [...profile.timeDeltas].sort((a, b) => a - b);
  const interval = sortedDeltas[Math.floor(sortedDeltas.length / 2)] ?? 0;
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = nodes.get(id);
    const dt = weigh === 'count' ? interval : (profile.timeDeltas[i] ?? 0);
    if (node === undefined || node.callFrame.functionName === '(idle)') return;
    busy += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anon)'} ${fileOf(url)}:${lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + dt);
    const f = fileOf(url) || functionName;
    file.set(f, (file.get(f) ?? 0) + dt);
  });
  const sorted = (m: Map<string, number>): [string, number][] => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { sampledMs: (profile.endTime - profile.startTime) / 1000, busyMs: busy / 1000, byFunction: sorted(fn), byFile: sorted(file) };
}

export function formatSummary(summary: ProfileSummary, top = 30): string {
  const share = ([name, us]: [string, number]): string => `${((100 * us) / (summary.busyMs * 1000)).toFixed(1).padStart(6)}% ${name}`;
  return [
    `busy ${summary.busyMs.toFixed(0)} ms of ${summary.sampledMs.toFixed(0)} ms sampled; shares of the busy time (self time)`,
    '',
    'by function:',
    ...summary.byFunction.slice(0, top).map(share),
    '',
    'by file:',
    ...summary.byFile.slice(0, 15).map(share),
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(basename(process.argv[1]))) {
  const [path, top, weigh] = process.argv.slice(2);
  if (path === undefined || (weigh !== undefined && weigh !== 'time' && weigh !== 'count')) {
    process.stderr.write('usage: cpu-profile-summary.ts FILE.cpuprofile [TOP] [time|count]\n');
    process.exit(2);
  }
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  process.stdout.write(`${formatSummary(summarizeProfile(profile, weigh ?? 'time'), top === undefined ? 30 : Number(top))}\n`);
}
