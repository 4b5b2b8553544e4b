/**
 * CSV in perf_analyzer's `--verbose-csv` column order, so tools that read perf_analyzer output (Model
 * Analyzer, spreadsheets built for it) read ours. Times are integer microseconds as perf_analyzer writes
 * them. Columns of our own (model, protocol, setup, batch size, errors) come after perf_analyzer's, so
 * position-based readers still find theirs.
 *
 * Derived columns follow perf_analyzer's arithmetic: Network+Server Send/Recv is the client's wait
 * (latency − client send − client recv) minus the server's queue and compute, floored at 0, because it
 * subtracts measurements taken on two machines' clocks; request/response is client send + recv, and
 * response wait is the client's wait.
 *
 * An open-loop sweep's first column is the offered rate, headed "Request Rate" as perf_analyzer heads it
 * in `--request-rate-range` mode; the columns after it are the same.
 */
import type { LoadPoint } from '../load/load-point.js';

export const PERF_ANALYZER_COLUMNS = [
  'Concurrency',
  'Inferences/Second',
  'Client Send',
  'Network+Server Send/Recv',
  'Server Queue',
  'Server Compute Input',
  'Server Compute Infer',
  'Server Compute Output',
  'Client Recv',
  'p50 latency',
  'p90 latency',
  'p95 latency',
  'p99 latency',
  'Avg latency',
  'request/response',
  'response wait',
] as const;

export const EXTRA_COLUMNS = ['Model', 'Protocol', 'Setup', 'Avg Batch Size', 'Errors'] as const;

/** Integer microseconds; NaN (nothing measured) as 0, as perf_analyzer leaves absent figures. */
const us = (value: number): string => (Number.isFinite(value) ? String(Math.round(value)) : '0');

function csvField(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function perfCsvRow(p: LoadPoint): string[] {
  const first = p.requestRate !== undefined ? String(Math.round(p.requestRate * 100) / 100) : String(p.concurrency);
  const s = p.server;
  const finite = (v: number): number => (Number.isFinite(v) ? v : 0);
  const serverUs = finite(s.queueUs) + finite(s.computeInputUs) + finite(s.computeInferUs) + finite(s.computeOutputUs);
  const sendRecvUs = p.clientSendUs + p.clientRecvUs;
  const waitUs = Math.max(0, p.latency.avgUs - sendRecvUs);
  return [
    first,
    p.inferencesPerSec.toFixed(2),
    us(p.clientSendUs),
    us(Math.max(0, waitUs - serverUs)),
    us(s.queueUs),
    us(s.computeInputUs),
    us(s.computeInferUs),
    us(s.computeOutputUs),
    us(p.clientRecvUs),
    us(p.latency.p50Us),
    us(p.latency.p90Us),
    us(p.latency.p95Us),
    us(p.latency.p99Us),
    us(p.latency.avgUs),
    us(sendRecvUs),
    us(waitUs),
    p.model,
    p.protocol,
    p.setup,
    Number.isFinite(s.avgBatchSize) ? s.avgBatchSize.toFixed(2) : '',
    String(p.errors),
  ];
}

export function toPerfCsv(points: readonly LoadPoint[]): string {
  const header: string[] = [...PERF_ANALYZER_COLUMNS, ...EXTRA_COLUMNS];
  if (points.length > 0 && points.every((p) => p.requestRate !== undefined)) header[0] = 'Request Rate';
  const lines = [header, ...points.map(perfCsvRow)];
  return lines.map((fields) => fields.map(csvField).join(',')).join('\n') + '\n';
}
