/**
 * Options of the HTTP server and their defaults. `maxInputSize` is tritonserver's
 * `--http-max-input-size` (bounds the JSON part of an infer request and of control bodies);
 * `maxBodySize` is ours: Triton does not bound binary tensor payloads, but a Node process must not
 * buffer an unbounded body, so the whole (decompressed) request is capped too.
 */
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { Restrictions } from '../restricted-apis.js';
import type { HttpLogger } from './responses.js';

export const DEFAULT_MAX_INPUT_SIZE = 2 ** 26; // 64 MiB, tritonserver's default
export const DEFAULT_MAX_BODY_SIZE = 2 ** 30; // 1 GiB of JSON + binary tensors per request

export interface LogSettings {
  readonly log_file: string;
  readonly log_info: boolean;
  readonly log_warning: boolean;
  readonly log_error: boolean;
  readonly log_verbose_level: number;
  readonly log_format: 'default' | 'ISO8601';
}

export const DEFAULT_LOG_SETTINGS: LogSettings = {
  log_file: '',
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
};

export interface HttpServerOptions {
  /** `--http-max-input-size`: most bytes of request JSON. Default 64 MiB. */
  readonly maxInputSize?: number;
  /** Most bytes of a whole request body after decompression. Default 1 GiB. */
  readonly maxBodySize?: number;
  /** Requests one HTTP/1.1 connection may have in progress at once (pipelining); default 32. */
  readonly maxPipelinedRequests?: number;
  readonly logger?: HttpLogger | Logger;
  /** Starting values of `/v2/logging` (the node's --log-* flags). */
  readonly logSettings?: Partial<LogSettings>;
  /** Told about every accepted `POST /v2/logging`, so the node can apply it to its logger. */
  readonly onLogSettingsChange?: (settings: LogSettings) => void;
  /** `--http-restricted-api`: categories that need a header and value (restricted-apis.ts). None by default. */
  readonly restrictedApis?: Restrictions;
  /**
   * Infer requests read by our own HTTP/1.1 reader (raw-infer.ts) instead of node:http until a connection sends
   * anything else. Off unless set here; the node's `--http-raw-reader` (default true) sets it.
   */
  readonly rawHttp1?: boolean;
}

export interface HttpLimits {
  readonly maxInputSize: number;
  readonly maxBodySize: number;
}

export function resolveLimits(options: HttpServerOptions): HttpLimits {
  const maxInputSize = positiveOr(options.maxInputSize, DEFAULT_MAX_INPUT_SIZE, 'maxInputSize');
  const maxBodySize = positiveOr(options.maxBodySize, Math.max(DEFAULT_MAX_BODY_SIZE, maxInputSize), 'maxBodySize');
  return { maxInputSize, maxBodySize: Math.max(maxBodySize, maxInputSize) };
}

function positiveOr(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
