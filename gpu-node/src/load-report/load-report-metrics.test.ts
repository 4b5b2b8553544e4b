import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { defaultNodeId } from './node-id.js';
import { LOAD_REPORT_CONNECTED_METRIC, LOAD_REPORT_FAILURES_METRIC, registerLoadReportMetrics } from './load-report-metrics.js';

describe('registerLoadReportMetrics', () => {
  it('exposes the reporter state at scrape time', async () => {
    const state = { connected: false, failures: 0 };
    const registry = new Registry();
    registerLoadReportMetrics(registry, state);
    let text = await registry.metrics();
    expect(text).toContain(`${LOAD_REPORT_FAILURES_METRIC} 0`);
    expect(text).toContain(`${LOAD_REPORT_CONNECTED_METRIC} 0`);
    expect(text).toContain(`# TYPE ${LOAD_REPORT_FAILURES_METRIC} counter`);

    state.failures = 7;
    state.connected = true;
    text = await registry.metrics();
    expect(text).toContain(`${LOAD_REPORT_FAILURES_METRIC} 7`);
    expect(text).toContain(`${LOAD_REPORT_CONNECTED_METRIC} 1`);
  });
});

describe('defaultNodeId', () => {
  it('is the hostname and pid, with characters a node id cannot hold replaced', () => {
    expect(defaultNodeId('gpu-7.cluster.local', 42)).toBe('gpu-7.cluster.local-42');
    expect(defaultNodeId('weird host/name', 1)).toBe('weird-host-name-1');
    expect(defaultNodeId('', 3)).toBe('node-3');
  });
});
