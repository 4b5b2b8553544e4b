import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendTraces } from './trace-log.js';
import type { FirstTokenTrace } from './trace-ring.js';

function trace(id: number, firstTokenAtMs: number): FirstTokenTrace {
  return {
    id, promptTokens: 5, maxTokens: 8, inFlight: 'prefill', inFlightMs: 1.5, inFlightCpuShare: 1, messageMs: 0.1, queuedMs: 0,
    queuedRuns: { decode: 0, prefill: 1, chunk: 0 }, prefillMs: 2, prefillCpuMs: 2, prefillRows: 1, prefillPaddedTokens: 5,
    sentAtMs: firstTokenAtMs - 4, firstTokenAtMs,
  };
}

describe('first-token trace log', () => {
  let dir = '';
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('appends each trace once, as one JSON line with the model, and moves the watermark to the latest', async () => {
    dir = await mkdtemp(join(tmpdir(), 'trace-log-'));
    const file = join(dir, 'traces.jsonl');
    let mark = appendTraces(file, 'tiny', [trace(1, 100), trace(2, 110)], 0);
    expect(mark).toBe(110);
    // The ring still holds 1 and 2 at the next write: only 3 is new.
    mark = appendTraces(file, 'tiny', [trace(1, 100), trace(2, 110), trace(3, 120)], mark);
    expect(mark).toBe(120);
    expect(appendTraces(file, 'tiny', [trace(3, 120)], mark)).toBe(120);
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as FirstTokenTrace & { model: string });
    expect(lines.map((l) => l.id)).toEqual([1, 2, 3]);
    expect(lines[2]).toMatchObject({ model: 'tiny', sentAtMs: 116, queuedRuns: { prefill: 1 } });
  });
});
