/**
 * The ceiling: what onnxruntime-node itself delivers on this machine for one FP32 model, with no server,
 * no network and no batching logic in the way. One session with the node's session settings (the same
 * intra-op thread count, sequential execution, all graph optimizations) runs back-to-back batches of
 * each size; the best inferences/s over the sizes is the ceiling a batching server can approach, and the
 * per-batch times are what a batch execution costs at that size (used by the p99 target).
 *
 * It runs in the bench process, before any node is started, so nothing else competes for the cores.
 */
import * as ort from 'onnxruntime-node';
import { summarizeLatencies } from '../sampling/percentiles.js';

export interface CeilingOptions {
  readonly modelPath: string;
  readonly inputName: string;
  /** Elements of one input row (the shape without the batch dimension). */
  readonly rowShape: readonly number[];
  readonly intraOpThreads: number;
  readonly batchSizes: readonly number[];
  readonly warmupMs: number;
  readonly measureMs: number;
}

export interface CeilingPoint {
  readonly batchSize: number;
  readonly runs: number;
  readonly inferencesPerSec: number;
  /** Time of one session.run at this batch size, in microseconds. */
  readonly execAvgUs: number;
  readonly execP50Us: number;
  readonly execP99Us: number;
  /** CPU of this process (onnxruntime's threads and the calling loop) per inference, in microseconds. */
  readonly cpuUsPerInference: number;
}

export interface CeilingResult {
  readonly intraOpThreads: number;
  readonly points: readonly CeilingPoint[];
  readonly best: CeilingPoint;
}

function randomInput(batch: number, rowShape: readonly number[]): ort.Tensor {
  const row = rowShape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(batch * row);
  for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
  return new ort.Tensor('float32', data, [batch, ...rowShape]);
}

export async function measureOrtCeiling(options: CeilingOptions): Promise<CeilingResult> {
  const session = await ort.InferenceSession.create(options.modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: options.intraOpThreads,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  try {
    const points: CeilingPoint[] = [];
    for (const batchSize of options.batchSizes) {
      const feeds = { [options.inputName]: randomInput(batchSize, options.rowShape) };
      const warmupEnd = performance.now() + options.warmupMs;
      do await session.run(feeds);
      while (performance.now() < warmupEnd);

      const times: number[] = [];
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      const end = start + options.measureMs;
      // At least a few runs even when one run outlasts the window, so the times mean something.
      while (performance.now() < end || times.length < 3) {
        const t0 = performance.now();
        await session.run(feeds);
        times.push((performance.now() - t0) * 1000);
      }
      const elapsedS = (performance.now() - start) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const summary = summarizeLatencies(times);
      points.push({
        batchSize,
        runs: times.length,
        inferencesPerSec: (times.length * batchSize) / elapsedS,
        execAvgUs: summary.avgUs,
        execP50Us: summary.p50Us,
        execP99Us: summary.p99Us,
        cpuUsPerInference: (cpu.user + cpu.system) / (times.length * batchSize),
      });
    }
    const best = points.reduce((a, b) => (b.inferencesPerSec > a.inferencesPerSec ? b : a));
    return { intraOpThreads: options.intraOpThreads, points, best };
  } finally {
    await session.release();
  }
}

/** The time of one batch execution of about `batchSize` elements: the smallest measured size ≥ it. */
export function batchExecutionUs(ceiling: CeilingResult, batchSize: number): number {
  const sorted = [...ceiling.points].sort((a, b) => a.batchSize - b.batchSize);
  const point = sorted.find((p) => p.batchSize >= batchSize) ?? sorted[sorted.length - 1];
  return point?.execAvgUs ?? Number.NaN;
}
