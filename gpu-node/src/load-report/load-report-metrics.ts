/**
 * The reporter's health as Prometheus series, so an operator sees a node that serves but is
 * invisible to the gateways:
 * - `tessera_node_load_report_failures_total` (counter): reports that did not reach Redis;
 * - `tessera_node_load_report_connected` (gauge): 1 when the last report reached Redis, else 0.
 * Values are read from the reporter at scrape time, so the reporter needs no metrics dependency.
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { LoadReporter } from './load-reporter.js';

export const LOAD_REPORT_FAILURES_METRIC = 'tessera_node_load_report_failures_total';
export const LOAD_REPORT_CONNECTED_METRIC = 'tessera_node_load_report_connected';

/** Registers both series on `registry`; call once per registry. */
export function registerLoadReportMetrics(registry: Registry, reporter: Pick<LoadReporter, 'connected' | 'failures'>): void {
  new Counter({
    name: LOAD_REPORT_FAILURES_METRIC,
    help: 'Load reports that could not be written to Redis (Redis unreachable or slow, or a bad snapshot).',
    registers: [registry],
    collect() {
      // The reporter's count only grows, so mirroring it keeps counter semantics.
      this.reset();
      this.inc(reporter.failures);
    },
  });
  new Gauge({
    name: LOAD_REPORT_CONNECTED_METRIC,
    help: '1 when the last load report reached Redis, 0 otherwise.',
    registers: [registry],
    collect() {
      this.set(reporter.connected ? 1 : 0);
    },
  });
}
