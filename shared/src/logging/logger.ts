/**
 * A small structured logger: one JSON object per line on stderr, so logs stay machine-readable in
 * containers and never mix with a command's stdout. Telemetry is injected (architecture rule): code
 * takes a `Logger`, never imports a logging SDK. `verbose(level, ...)` mirrors tritonserver's
 * `--log-verbose N`: a message of level L prints only when L <= the configured verbosity.
 */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  verbose(level: number, message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** tritonserver's --log-verbose; default 0 (no verbose lines). */
  readonly verbosity?: number;
  /** Where lines go; default process.stderr. */
  readonly write?: (line: string) => void;
  /** Fields added to every line. */
  readonly fields?: LogFields;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const verbosity = options.verbosity ?? 0;
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const base = options.fields ?? {};
  const emit = (level: string, message: string, fields?: LogFields): void => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...base, ...fields })}\n`);
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    verbose: (level, message, fields) => {
      if (level <= verbosity) emit('verbose', message, fields);
    },
    child: (fields) => createLogger({ verbosity, write, fields: { ...base, ...fields } }),
  };
}

/** A logger that drops everything: the default for library code and tests that do not look at logs. */
export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  verbose: () => {},
  child: () => silentLogger,
};
