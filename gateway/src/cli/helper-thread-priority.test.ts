import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HELPER_THREAD_NICE, helperThreadNice } from './helper-thread-priority.js';

const GATEWAY = fileURLToPath(new URL('../../../bin/tessera-gateway.js', import.meta.url));

/** `nice` of each thread of `pid` (field 19 of /proc/PID/task/TID/stat), main thread first. */
function threadNice(pid: number): number[] {
  const tids = readdirSync(`/proc/${pid}/task`).map(Number).sort((a, b) => (a === pid ? -1 : b === pid ? 1 : a - b));
  return tids.map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]));
}

/** Starts the gateway (embedded config, no Redis), reads its threads' nice once it listens, stops it. */
async function niceOfRunningGateway(env: Record<string, string>): Promise<number[]> {
  const child = spawn(process.execPath, [GATEWAY, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, REDIS_URL: '', ...env } });
  try {
    for await (const line of createInterface({ input: child.stderr })) if (line.includes('tessera-gateway started')) break;
    return threadNice(child.pid as number);
  } finally {
    child.kill('SIGKILL');
  }
}

describe('helper thread priority', () => {
  it('reads TESSERA_HELPER_THREAD_NICE as 0-19, 19 when unset, and refuses anything else', () => {
    expect(helperThreadNice(undefined)).toBe(DEFAULT_HELPER_THREAD_NICE);
    expect(helperThreadNice('')).toBe(19);
    expect(helperThreadNice('0')).toBe(0);
    expect(helperThreadNice('10')).toBe(10);
    for (const bad of ['-1', '20', '1.5', 'low']) expect(() => helperThreadNice(bad)).toThrow(/TESSERA_HELPER_THREAD_NICE/);
  });

  it.runIf(process.platform === 'linux')('the gateway runs its event loop at nice 0 and its other threads (V8 platform workers among them) at 19', async () => {
    const [main, ...others] = await niceOfRunningGateway({});
    expect(main).toBe(0);
    // V8's platform workers (4 by default) and Node's own helper threads all exist before the gateway starts.
    expect(others.filter((nice) => nice === 19).length).toBeGreaterThanOrEqual(4);
  }, 60_000);

  it.runIf(process.platform === 'linux')('TESSERA_HELPER_THREAD_NICE=0 leaves every thread at nice 0', async () => {
    expect(new Set(await niceOfRunningGateway({ TESSERA_HELPER_THREAD_NICE: '0' }))).toEqual(new Set([0]));
  }, 60_000);
});
