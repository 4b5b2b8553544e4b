import { describe, expect, it } from 'vitest';
import { statsDelta, type ModelStatsSnapshot } from './node-stats.js';

function snapshot(inferences: number, executions: number, requests: number, ns: number): ModelStatsSnapshot {
  const d = { count: requests, ns };
  return {
    inference_count: inferences,
    execution_count: executions,
    inference_stats: { success: d, fail: { count: 0, ns: 0 }, queue: d, compute_input: d, compute_infer: d, compute_output: d },
  };
}

describe('statsDelta', () => {
  it('averages per request in microseconds and batch size per execution', () => {
    const delta = statsDelta(snapshot(10, 10, 10, 1_000_000), snapshot(74, 12, 74, 65_000_000));
    expect(delta).toMatchObject({ requests: 64, inferences: 64, executions: 2, avgBatchSize: 32, failures: 0 });
    expect(delta.queueUs).toBeCloseTo(1000);
    expect(delta.computeInferUs).toBeCloseTo(1000);
  });

  it('is NaN where nothing happened', () => {
    const same = snapshot(5, 5, 5, 100);
    const delta = statsDelta(same, same);
    expect(delta.avgBatchSize).toBeNaN();
    expect(delta.queueUs).toBeNaN();
  });
});
