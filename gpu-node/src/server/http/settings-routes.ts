/**
 * Trace and logging extensions.
 *
 * - Trace (`/v2/trace/setting`, `/v2/models/{m}/trace/setting`): Tessera has no request tracer, so GET
 *   reports Triton's default settings with `trace_level: ["OFF"]`, and POST answers 501 after checking
 *   the body is well-formed: pretending to accept a setting that changes nothing would mislead.
 * - Logging (`/v2/logging`): real. GET returns the current settings; POST validates each key like
 *   Triton (log_file is read-only over the network → 501; wrong types → 400; unknown keys → 400 naming
 *   the key), applies them, tells the node through `onLogSettingsChange`, and returns the full settings.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { controlBodyLimits } from './body-reader.js';
import { readJsonObject } from './json-body.js';
import { jsonResponse } from './responses.js';
import type { HttpLimits, LogSettings } from './server-options.js';

export const TRACE_SETTINGS = {
  trace_level: ['OFF'],
  trace_rate: '1000',
  trace_count: '-1',
  log_frequency: '0',
  trace_file: '',
  trace_mode: 'triton',
} as const;

export interface SettingsRouteContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

export function handleGetTrace(context: SettingsRouteContext, modelName?: string): Response {
  // Per-model settings exist only for models the node knows (unknown model → 404 from the core).
  if (modelName !== undefined) context.core.modelMetadata(modelName);
  return jsonResponse(TRACE_SETTINGS);
}

export async function handlePostTrace(
  context: SettingsRouteContext,
  request: Request,
  modelName?: string,
): Promise<Response> {
  await readJsonObject(request, controlBodyLimits(context.limits));
  if (modelName !== undefined) context.core.modelMetadata(modelName);
  throw TesseraError.unsupported('trace settings cannot be changed: Tessera does not support tracing (trace_level is OFF)');
}

const LOG_SETTING_KEYS: ReadonlySet<string> = new Set([
  'log_file',
  'log_info',
  'log_warning',
  'log_error',
  'log_verbose_level',
  'log_format',
]);

/** Holds the `/v2/logging` settings of one server. */
export class LogSettingsStore {
  #settings: LogSettings;

  constructor(
    initial: LogSettings,
    private readonly onChange?: (settings: LogSettings) => void,
  ) {
    this.#settings = initial;
  }

  get current(): LogSettings {
    return this.#settings;
  }

  /** Validates the whole update before applying any of it, so a 400 leaves the settings untouched. */
  update(patch: Record<string, unknown>): LogSettings {
    const next: { -readonly [K in keyof LogSettings]: LogSettings[K] } = { ...this.#settings };
    for (const [key, value] of Object.entries(patch)) {
      if (!LOG_SETTING_KEYS.has(key)) throw TesseraError.invalidArg(`unknown logging setting '${key}'`);
      if (value === null) continue; // null: leave unchanged (log_file included: that changes nothing)
      switch (key) {
        case 'log_file':
          throw TesseraError.unsupported('log file location can not be updated through network protocol');
        case 'log_info':
        case 'log_warning':
        case 'log_error':
          if (typeof value !== 'boolean') throw TesseraError.invalidArg(`expected '${key}' to be a boolean`);
          next[key] = value;
          break;
        case 'log_verbose_level':
          if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
            throw TesseraError.invalidArg(`expected '${key}' to be a non-negative integer`);
          }
          next.log_verbose_level = value;
          break;
        case 'log_format':
          if (value !== 'default' && value !== 'ISO8601') {
            throw TesseraError.invalidArg(`expected '${key}' to be "default" or "ISO8601"`);
          }
          next.log_format = value;
          break;
      }
    }
    this.#settings = next;
    this.onChange?.(next);
    return next;
  }
}

export async function handlePostLogging(
  context: SettingsRouteContext,
  store: LogSettingsStore,
  request: Request,
): Promise<Response> {
  const body = await readJsonObject(request, controlBodyLimits(context.limits));
  return jsonResponse(body === undefined ? store.current : store.update(body));
}
