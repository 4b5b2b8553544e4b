/**
 * The lifecycle shared by the load-report sinks, driven through an in-memory sink whose sends the
 * test settles by hand (the Redis and HTTP sinks are tested against real receivers next to this).
 * A long interval keeps the timer out of the way: every report here is one the test asked for.
 */
import { describe, expect, it } from 'vitest';
import type { LoadReport } from '../../../shared/src/fleet/index.js';
import { createLogger } from '../../../shared/src/logging/index.js';
import { PeriodicLoadReporter, type PeriodicReportOptions, type ReporterLogLines } from './periodic-reporter.js';

interface Send {
  readonly report: LoadReport;
  resolve(): void;
  reject(error: Error): void;
}

class ManualSink extends PeriodicLoadReporter {
  readonly sends: Send[] = [];
  readonly stops: { wasRunning: boolean; deregister: boolean }[] = [];
  ready = true;
  protected readonly logLines: ReporterLogLines = {
    started: ['started', { sink: 'manual' }],
    failing: ['failing', { sink: 'manual' }],
    resumed: 'resumed',
  };

  constructor(options: Partial<PeriodicReportOptions> = {}) {
    super(
      { nodeId: 'n1', httpAddress: 'h:1', grpcAddress: null, intervalMs: 60_000, ttlMs: 120_000, source: () => [], ...options },
      { logFields: { component: 'test' }, maxBackoffMs: undefined },
    );
  }

  protected send(report: LoadReport): Promise<void> {
    return new Promise((resolve, reject) => this.sends.push({ report, resolve, reject }));
  }

  protected onStop(wasRunning: boolean, deregister: boolean): Promise<void> {
    this.stops.push({ wasRunning, deregister });
    return Promise.resolve();
  }

  protected override canSend(): boolean {
    return this.ready;
  }
}

type Line = { level: string; msg: string; error?: string; failedReports?: number };
function capture(): { lines: Line[]; logger: ReturnType<typeof createLogger> } {
  const lines: Line[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Line) }) };
}

describe('the periodic reporter', () => {
  it('reports at start, keeps one report in flight (concurrent asks share it), and counts a delivered one as connected', async () => {
    const sink = new ManualSink();
    expect(await sink.reportNow()).toBe(false); // not started
    sink.start();
    sink.start(); // a no-op
    const a = sink.reportNow();
    const b = sink.reportNow();
    expect(sink.sends).toHaveLength(1);
    expect(sink.sends[0]!.report).toMatchObject({ nodeId: 'n1', seq: 1, draining: false });
    sink.sends[0]!.resolve();
    expect(await Promise.all([a, b])).toEqual([true, true]);
    expect(sink.connected).toBe(true);
    expect(sink.seq).toBe(1);
    // The next ask is a new report.
    const c = sink.reportNow();
    expect(sink.sends).toHaveLength(2);
    sink.sends[1]!.resolve();
    expect(await c).toBe(true);
    await sink.stop();
  });

  it('logs an outage once when it starts and once when it ends, with its cost, and counts every failed report', async () => {
    const { lines, logger } = capture();
    const sink = new ManualSink({ logger });
    sink.start();
    const first = sink.reportNow(); // the start report, in flight
    sink.sends[0]!.resolve();
    await first;
    expect(lines.map((l) => l.msg)).toEqual(['started']);
    for (let i = 0; i < 3; i++) {
      const pending = sink.reportNow();
      sink.sends.at(-1)!.reject(new Error(`down ${i}`));
      expect(await pending).toBe(false);
    }
    expect(sink.connected).toBe(false);
    expect(sink.failures).toBe(3);
    const recovered = sink.reportNow();
    sink.sends.at(-1)!.resolve();
    expect(await recovered).toBe(true);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([['info', 'started'], ['warn', 'failing'], ['info', 'resumed']]);
    expect(lines[1]!.error).toBe('down 0');
    expect(lines[2]!.failedReports).toBe(3);
    await sink.stop();
  });

  it('does not count a report that cannot be tried yet (canSend false) as a failure, nor build it', async () => {
    const sink = new ManualSink();
    sink.ready = false;
    sink.start();
    expect(await sink.reportNow()).toBe(false);
    expect(sink.sends).toHaveLength(0);
    expect(sink.failures).toBe(0);
    expect(sink.seq).toBe(0);
    await sink.stop();
  });

  it('sets the draining flag and reports it at once', async () => {
    const sink = new ManualSink();
    sink.start();
    const first = sink.reportNow();
    sink.sends[0]!.resolve();
    await first;
    sink.setDraining(true);
    expect(sink.sends.at(-1)!.report.draining).toBe(true);
    sink.sends.at(-1)!.resolve();
    await sink.stop();
  });

  it('stop waits for the report in flight, then hands over whether it ran and whether to deregister; nothing after', async () => {
    const sink = new ManualSink();
    sink.start();
    let stopped = false;
    const stopping = sink.stop({ deregister: false }).then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    sink.sends[0]!.resolve();
    await stopping;
    expect(sink.stops).toEqual([{ wasRunning: true, deregister: false }]);
    expect(sink.connected).toBe(false);
    expect(await sink.reportNow()).toBe(false);
    await sink.stop(); // a no-op
    expect(sink.stops).toHaveLength(1);

    const never = new ManualSink();
    await never.stop();
    expect(never.stops).toEqual([{ wasRunning: false, deregister: true }]);
  });

  it('refuses an interval not shorter than the TTL and a bad node id', () => {
    expect(() => new ManualSink({ intervalMs: 1000, ttlMs: 1000 })).toThrow(/intervalMs < ttlMs/);
    expect(() => new ManualSink({ nodeId: 'bad id' })).toThrow(/invalid node id/);
  });
});
