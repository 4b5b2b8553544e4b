/**
 * One bad model name must never poison a load report: the gateway validates reports whole and drops a
 * node whose report fails, so the builder leaves such a model out (logged once) and reports the rest.
 */
import { describe, expect, it } from 'vitest';
import type { ModelLoad } from '../../../shared/src/fleet/index.js';
import { createLogger } from '../../../shared/src/logging/index.js';
import { LoadReportBuilder } from './report-builder.js';

const model = (name: string): ModelLoad => ({ name, versions: ['1'], queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null });

describe('load report builder', () => {
  it('leaves out models whose names are invalid (logged once) and still reports the others', () => {
    const lines: { msg: string; model?: string }[] = [];
    const builder = new LoadReportBuilder({
      nodeId: 'n1',
      httpAddress: 'h:1',
      grpcAddress: null,
      startedAt: 1,
      ttlMs: 10_000,
      source: () => [model('good'), model('a/b'), model('..'), model('x\u0000y')],
      now: () => 2,
      logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as { msg: string }) }),
    });
    for (let i = 0; i < 3; i++) {
      const report = builder.build();
      expect(report?.models.map((m) => m.name)).toEqual(['good']);
    }
    const dropped = lines.filter((line) => line.msg === 'leaving a model with an invalid name out of load reports');
    expect(dropped.map((line) => line.model)).toEqual(['a/b', '..', 'x\u0000y']);
  });
});
