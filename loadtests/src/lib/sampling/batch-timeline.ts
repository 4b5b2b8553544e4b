/**
 * Batch sizes over time, seen from outside the node: its statistics polled back to back for a while;
 * between two polls, executions and inferences added up give the batches formed in that slice (their
 * count and average size). With polls a few ms apart and batches of ~10 ms, most slices hold zero or
 * one batch, which shows a wave's pattern (alternating sizes, gaps with no execution) without any
 * tracing inside the node.
 */
import { fetchModelStats } from './node-stats.js';

export interface BatchSlice {
  /** Milliseconds since the first poll, at the end of the slice. */
  readonly tMs: number;
  readonly executions: number;
  readonly inferences: number;
}

export async function sampleBatchTimeline(httpBase: string, model: string, durationMs: number, gapMs = 2): Promise<BatchSlice[]> {
  const slices: BatchSlice[] = [];
  const start = performance.now();
  let last = await fetchModelStats(httpBase, model);
  while (performance.now() - start < durationMs) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const now = await fetchModelStats(httpBase, model);
    slices.push({
      tMs: performance.now() - start,
      executions: now.execution_count - last.execution_count,
      inferences: now.inference_count - last.inference_count,
    });
    last = now;
  }
  return slices;
}

/** The batches of a timeline as points (time, average batch size of the slice), slices without one left out. */
export function batchSizePoints(slices: readonly BatchSlice[]): { x: number; y: number }[] {
  return slices.filter((s) => s.executions > 0).map((s) => ({ x: s.tMs, y: s.inferences / s.executions }));
}
