/**
 * A decoupled model's stream interval (vLLM's `--stream-interval`): how many responses the node groups
 * into one write of a stream. Config parameters `stream_interval` (responses per write, 1 = one write
 * each) and `stream_interval_ms` (the longest a response may wait for its group); each overrides the
 * node's default (`--stream-interval`, `--stream-interval-ms`). The first response and the last always
 * go at once; only how events are grouped into writes changes, never their bytes.
 */
import type { ModelConfig } from '../gen/model_config_pb.js';
import type { IssueList } from './config-issues.js';

export interface StreamInterval {
  /** Responses per write; 1 writes each at once. */
  readonly events: number;
  /** Most milliseconds a held response waits for its group to fill. */
  readonly maxHoldMs: number;
}

/** Upper bounds: a config cannot make a stream hold many responses, or hold them long. */
export const MAX_STREAM_INTERVAL = 256;
export const MAX_STREAM_INTERVAL_MS = 10_000;
export const DEFAULT_STREAM_INTERVAL: StreamInterval = { events: 1, maxHoldMs: 200 };

const DIGITS = /^[0-9]{1,6}$/;

/** The value of parameter `key` as an integer in [1, max], or the reason it is not one. */
function intervalValue(text: string, key: string, max: number): number | string {
  const value = DIGITS.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= max)) return `'${key}' must be an integer in [1, ${max}], got '${text}'`;
  return value;
}

function parameter(config: ModelConfig, key: string): string | undefined {
  const text = config.parameters[key]?.stringValue;
  return text === undefined || text === '' ? undefined : text.trim();
}

/** Load-time check: each parameter, when set, must be an integer in its range. */
export function validateStreamInterval(config: ModelConfig, issues: IssueList): void {
  for (const [key, max] of [
    ['stream_interval', MAX_STREAM_INTERVAL],
    ['stream_interval_ms', MAX_STREAM_INTERVAL_MS],
  ] as const) {
    const text = config.parameters[key]?.stringValue;
    if (text === undefined) continue;
    const value = intervalValue(text.trim(), key, max);
    if (typeof value === 'string') issues.add(`parameters.${key}`, `${value} for model '${config.name}'`);
  }
}

/** The model's interval: its parameters where set (already validated at load), the node's default otherwise. */
export function streamIntervalOf(config: ModelConfig, fallback: StreamInterval): StreamInterval {
  const events = parameter(config, 'stream_interval');
  const ms = parameter(config, 'stream_interval_ms');
  if (events === undefined && ms === undefined) return fallback;
  const eventsValue = events === undefined ? fallback.events : intervalValue(events, 'stream_interval', MAX_STREAM_INTERVAL);
  const msValue = ms === undefined ? fallback.maxHoldMs : intervalValue(ms, 'stream_interval_ms', MAX_STREAM_INTERVAL_MS);
  // A config that skipped validation (a test double) falls back rather than holding without bound.
  return {
    events: typeof eventsValue === 'number' ? eventsValue : fallback.events,
    maxHoldMs: typeof msValue === 'number' ? msValue : fallback.maxHoldMs,
  };
}
