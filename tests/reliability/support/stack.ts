/**
 * Helpers for the full-stack reliability suites: a logger that keeps every line (to search for leaked
 * secrets), a tiny Prometheus reader, and `simple`/`sleepy` infer bodies.
 */
import { createLogger, type Logger } from '../../../shared/src/logging/index.js';

export interface CapturingLogger {
  readonly logger: Logger;
  readonly lines: string[];
}

export function capturingLogger(): CapturingLogger {
  const lines: string[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(line) }) };
}

/** The value of the first sample whose `name{labels}` matches, or undefined. */
export function metricValue(text: string, pattern: RegExp): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (pattern.test(line.slice(0, space))) return Number(line.slice(space + 1));
  }
  return undefined;
}

/** A `simple` JSON body: INPUT0 = offset..offset+15, INPUT1 = 1s. */
export function simpleBody(offset: number, id?: string): string {
  return JSON.stringify({
    ...(id === undefined ? {} : { id }),
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i + offset) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });
}

/** A `sleepy` body: the node holds the request `ms` milliseconds (test-node-process.ts). */
export function sleepyBody(ms: number): string {
  return JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], data: [ms] }] });
}
