// The Logger that code takes, apart from its implementations (pino in ./logger.ts, console on Workers
// in gateway/src/adapters/workers), so that importing it never loads pino.

export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  verbose(level: number, message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Field names whose values are never logged (API keys, bearer tokens). */
export const REDACTED_FIELDS: readonly string[] = ['authorization', 'x-api-key', 'apiKey', 'api_key', 'key', 'adminKey', 'proxy-authorization', 'cookie'];

/** A logger that drops everything: the default for library code and tests that do not look at logs. */
export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  verbose: () => {},
  child: () => silentLogger,
};
