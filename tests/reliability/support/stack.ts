/**
 * Helpers for the full-stack reliability suites: a logger that keeps every line (to search for leaked
 * secrets), a tiny Prometheus reader, and (from the test node's fixtures) `simple`/`sleepy` infer bodies.
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

// The `simple` and `sleepy` bodies are the test node's (test-node-requests.ts), re-exported for the suites here.
export { simpleBody, sleepyBody } from '../../../gateway/test/support/test-node-requests.js';
