/**
 * A Logger for Workers: one JSON line per call through `console.log`, which Workers Logs, `wrangler
 * tail` and Logpush collect. The shared pino logger is not used here: pino's module initialisation
 * performs work that workerd forbids in global scope, and its stream machinery buys nothing on Workers.
 * Field names that could carry secrets (shared REDACTED_FIELDS) are censored as the shared logger does.
 */
import { REDACTED_FIELDS, type LogFields, type Logger } from '../../../../shared/src/logging/logger-interface.js';

/** REDACTED_FIELDS, matched case-insensitively. */
const REDACTED = new Set(REDACTED_FIELDS.map((name) => name.toLowerCase()));

export interface ConsoleLoggerOptions {
  /** Fields on every line; default none. */
  readonly fields?: LogFields;
  /** Verbose lines up to this level are written; default 0 (none). */
  readonly verbosity?: number;
  /** Default console.log. */
  readonly write?: (line: string) => void;
}

export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => console.log(line));
  const verbosity = options.verbosity ?? 0;
  const make = (base: LogFields): Logger => {
    const emit = (level: string, msg: string, fields?: LogFields): void => {
      const line: Record<string, unknown> = { level, time: new Date().toISOString(), ...base, msg };
      for (const [name, value] of Object.entries(fields ?? {})) line[name] = REDACTED.has(name.toLowerCase()) ? '[REDACTED]' : value;
      write(JSON.stringify(line));
    };
    return {
      info: (msg, fields) => emit('info', msg, fields),
      warn: (msg, fields) => emit('warn', msg, fields),
      error: (msg, fields) => emit('error', msg, fields),
      verbose: (level, msg, fields) => {
        if (level <= verbosity) emit('verbose', msg, fields);
      },
      child: (fields) => make({ ...base, ...fields }),
    };
  };
  return make(options.fields ?? {});
}

/** A Logger that drops everything (the shared one lives next to pino; see above). */
export const quietLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  verbose: () => {},
  child: () => quietLogger,
};
