/**
 * Shared by the fault scenarios (node-kill, redis-stop) and the soak: the timeline chart of a
 * timed load with its events marked, the timeline CSV, and the drain-check target.
 */
import type { DrainResult } from '../lib/sampling/drain-check.js';
import { bucketTimeline, type Bucket, type Outcome } from '../lib/sampling/outcome-timeline.js';
import type { LineChart } from '../lib/charts/svg-chart.js';
import type { ActionTiming } from '../lib/load/timed-load.js';
import { atMost, target, type Target } from './scenario-output.js';

export function timelineCharts(title: string, buckets: readonly Bucket[], events: readonly ActionTiming[], bucketMs: number): Record<string, LineChart> {
  const x = (b: Bucket): number => (b.startMs + bucketMs / 2) / 1000;
  const rateMax = Math.max(1, ...buckets.map((b) => Math.max(b.okPerSec, b.failedPerSec)));
  const p99Max = Math.max(1, ...buckets.map((b) => (Number.isFinite(b.p99Ms) ? b.p99Ms : 0)));
  const markers = (yMax: number) => events.map((e) => ({ name: `| ${e.name}`, points: [{ x: e.startMs / 1000, y: 0 }, { x: e.startMs / 1000, y: yMax }] }));
  return {
    timeline: {
      title: `${title}: answers over time (by send time, ${bucketMs} ms buckets)`,
      xLabel: 'time (s)',
      yLabel: 'requests/s',
      series: [
        { name: 'ok/s', points: buckets.map((b) => ({ x: x(b), y: b.okPerSec })) },
        { name: 'failed/s', points: buckets.map((b) => ({ x: x(b), y: b.failedPerSec })) },
        ...markers(rateMax),
      ],
    },
    p99: {
      title: `${title}: p99 latency over time`,
      xLabel: 'time (s)',
      yLabel: 'p99 send → answer (ms)',
      series: [{ name: 'p99', points: buckets.map((b) => ({ x: x(b), y: b.p99Ms })) }, ...markers(p99Max)],
    },
  };
}

export function timelineCsv(outcomes: readonly Outcome[], bucketMs: number, endMs: number): string {
  const lines = bucketTimeline(outcomes, bucketMs, endMs).map((b) =>
    [(b.startMs / 1000).toFixed(3), b.ok, b.failed, b.okPerSec.toFixed(1), b.failedPerSec.toFixed(1), Number.isFinite(b.p99Ms) ? b.p99Ms.toFixed(3) : ''].join(','),
  );
  return `${['t_s,ok,failed,ok_per_s,failed_per_s,p99_ms', ...lines].join('\n')}\n`;
}

/** PASS when every outstanding-work counter read 0 after the load stopped. */
export function drainTarget(drain: DrainResult): Target {
  const left = drain.last;
  const leftover = [left.gatewayQueued, ...Object.values(left.nodePending), ...Object.values(left.nodeReported)].filter((v) => v !== 0).length;
  const detail = drain.drained
    ? `all 0 after ${(drain.afterMs / 1000).toFixed(1)} s (gateway queue depth, node pending counts, load reports' queued + inflight)`
    : `still non-zero after ${(drain.afterMs / 1000).toFixed(1)} s: ${JSON.stringify(left)}`;
  return target('no in-flight counter left behind', leftover, 0, 'counters', atMost, detail);
}
