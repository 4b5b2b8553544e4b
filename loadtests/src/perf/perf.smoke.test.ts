/**
 * Smoke test of the whole tool against a real node serving `simple`: a short closed-loop point and a
 * short open-loop point, checking that requests went through without errors and the files came out
 * in the expected formats. No timing is asserted (the machine is shared); windows are a few hundred ms.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { PERF_ANALYZER_COLUMNS } from '../lib/output/perf-csv.js';
import { runPerfCli, type PerfIo } from './cli.js';

let work: string;
let node: RunningNode;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tessera-perf-smoke-'));
  await writeExampleRepository(join(work, 'models'), { only: ['simple'] });
  node = await launchNode({ modelRepository: join(work, 'models') });
  await waitForModelReady(node.httpBase, 'simple');
});

afterAll(async () => {
  await node?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

function capture(): PerfIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), interactive: false };
}

const SHORT = ['--warmup-ms', '200', '--measurement-interval', '300', '--max-trials', '3'];

interface JsonPoint {
  readonly errors: number;
  readonly latency: { readonly count: number };
  readonly server: { readonly requests: number };
  readonly dropped: number;
}

describe('tessera-perf against a node', () => {
  it('runs a closed-loop point over HTTP and writes the CSV, JSON and plots', async () => {
    const io = capture();
    const csv = join(work, 'closed.csv');
    const json = join(work, 'closed.json');
    const code = await runPerfCli(
      ['-m', 'simple', '-u', `127.0.0.1:${node.httpPort}`, '--concurrency-range', '2', ...SHORT, '-f', csv, '--json-out', json, '--plot-dir', join(work, 'plots')],
      io,
    );
    expect(code, io.err.join('')).toBe(0);
    const [header, row] = (await readFile(csv, 'utf8')).split('\n');
    expect(header?.startsWith(PERF_ANALYZER_COLUMNS.join(','))).toBe(true);
    expect(row?.split(',')[0]).toBe('2');
    const doc = JSON.parse(await readFile(json, 'utf8')) as { points: JsonPoint[] };
    expect(doc.points).toHaveLength(1);
    expect(doc.points[0]?.latency.count).toBeGreaterThan(0);
    expect(doc.points[0]?.errors).toBe(0);
    expect(doc.points[0]?.server.requests).toBeGreaterThan(0);
    expect(await readFile(join(work, 'plots', 'p99-concurrency.svg'), 'utf8')).toContain('<svg');
    expect(io.out.join('')).toContain('inf/s');
  });

  it('runs an open-loop Poisson point over gRPC at a low rate', async () => {
    const io = capture();
    const json = join(work, 'open.json');
    const csv = join(work, 'open.csv');
    const code = await runPerfCli(
      ['-m', 'simple', '-u', `127.0.0.1:${node.grpcPort}`, '-i', 'grpc', '--request-rate-range', '40', '--request-distribution', 'poisson', ...SHORT, '-f', csv, '--json-out', json],
      io,
    );
    expect(code, io.err.join('')).toBe(0);
    const doc = JSON.parse(await readFile(json, 'utf8')) as { points: JsonPoint[] };
    expect(doc.points[0]?.latency.count).toBeGreaterThan(0);
    expect(doc.points[0]?.errors).toBe(0);
    expect(doc.points[0]?.dropped).toBe(0);
    const [header] = (await readFile(csv, 'utf8')).split('\n');
    expect(header?.startsWith(['Request Rate', ...PERF_ANALYZER_COLUMNS.slice(1)].join(','))).toBe(true);
  });

  it('fails cleanly for an unknown model', async () => {
    const io = capture();
    expect(await runPerfCli(['-m', 'nope', '-u', `127.0.0.1:${node.httpPort}`, ...SHORT], io)).toBe(1);
    // Triton's answer for an unknown model: 400 (INVALID_ARG) naming it.
    expect(io.err.join('')).toContain('HTTP 400');
    expect(io.err.join('')).toContain("Request for unknown model: 'nope' is not found");
  });
});
