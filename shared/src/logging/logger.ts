/**
 * Structured logs: one JSON object per line on stderr (pino), so logs stay machine-readable in
 * containers and never mix with a command's stdout. Telemetry is injected (docs/architecture.md): code
 * takes a `Logger`, never imports a logging SDK (the interface is ./logger-interface.ts); this file is the
 * one place that knows pino.
 *
 * A line: `{"level":"info","time":"<ISO 8601>",...fields,"msg":"..."}`. `verbose(level, ...)` mirrors
 * tritonserver's `--log-verbose N`: a message of level L prints (as level "verbose") only when
 * L <= the configured verbosity. `child(fields)` adds fields to every line, e.g. a request's trace
 * id, request id, tenant and model.
 *
 * Secrets never print: fields named in `REDACTED_FIELDS` (at the top level of a line, or one level
 * down, e.g. `headers.authorization`) are replaced by "[REDACTED]" whatever their value
 * (redact-fields.ts, applied to every line's fields and every child's).
 */
import { destination as pinoDestination, pino } from 'pino';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { flatFields, flatLine } from './flat-line.js';
import { LineBatch } from './line-batch.js';
import { REDACTED_FIELDS, type LogFields, type Logger } from './logger-interface.js';
import { createRedactor } from './redact-fields.js';

export interface LoggerOptions {
  /** tritonserver's --log-verbose; default 0 (no verbose lines). */
  readonly verbosity?: number;
  /** Where lines go (each call gets one whole line ending in "\n"); default stderr, written synchronously. */
  readonly write?: (line: string) => void;
  /**
   * Stderr only (no `write`): collect lines and write them in batches, when 8 KiB are waiting, every
   * `batchMs` milliseconds, and synchronously at process exit. A busy server then makes one write(2)
   * per batch instead of one per line (the gateway writes an access line per request). Lines can be
   * up to `batchMs` late, and lost only if the process is killed with SIGKILL. Default 0: every line
   * is written at once.
   */
  readonly batchMs?: number;
  /**
   * With `batchMs`: a batch that is due (8 KiB waiting, or `batchMs` old) is written when this runs
   * the flush it is given (the gateway: right after the answers of the event-loop turn), not there and
   * then; past `TURN_BATCH_CHARS` waiting, at once.
   */
  readonly flushWith?: (flush: () => void) => void;
  /** Fields added to every line; default none. */
  readonly fields?: LogFields;
}

const CENSOR = '[REDACTED]';
/** Above pino's debug (20), below info (30): shown only when asked for. */
const VERBOSE_LEVEL = 25;

const redact = createRedactor(REDACTED_FIELDS, CENSOR);
const SECRET_FIELDS: ReadonlySet<string> = new Set(REDACTED_FIELDS);

type TesseraPino = PinoLogger<'verbose'>;

/** A batch is written once this many UTF-16 code units wait (about 8 KiB, below sonic-boom's 16 KiB write size). */
const BATCH_CHARS = 8192;

/** A `flushWith` batch is written at once past this many UTF-16 code units: memory stays bounded. */
export const TURN_BATCH_CHARS = 256 * 1024;

/** Batches still holding lines; one 'exit' listener writes them all. */
const batched = new Set<LineBatch>();

function flushBatchedAtExit(): void {
  for (const batch of batched) {
    try {
      batch.flush();
    } catch {
      // stderr is gone (EPIPE): nothing left to tell.
    }
  }
}

/** Stderr, written synchronously: the last lines before a process.exit() are not lost. */
function stderrDestination(batchMs: number, flushWith: LoggerOptions['flushWith']): DestinationStream {
  const stream = pinoDestination({ dest: 2, sync: true });
  if (!(batchMs > 0)) return stream;
  // Lines wait in a LineBatch (line-batch.ts) and reach the stream one batch per write, still
  // synchronously, so the lines waiting at exit can be written from the 'exit' listener.
  const deferred = flushWith === undefined ? undefined : { defer: flushWith, hardMaxChars: TURN_BATCH_CHARS };
  const batch = new LineBatch((text) => stream.write(text), BATCH_CHARS, batchMs, undefined, deferred);
  if (batched.size === 0) process.once('exit', flushBatchedAtExit);
  batched.add(batch);
  return { write: (line: string) => batch.write(line) };
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write;
  const destination: DestinationStream = write === undefined ? stderrDestination(options.batchMs ?? 0, options.flushWith) : { write: (line: string) => write(line) };
  const root: TesseraPino = pino<'verbose'>(
    {
      level: 'verbose',
      customLevels: { verbose: VERBOSE_LEVEL },
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const sink = (line: string): void => void destination.write(line);
  return bound(root, options.verbosity ?? 0, sink, options.fields === undefined ? {} : redact(options.fields));
}

/**
 * A logger whose lines carry `fields` (already redacted). Each key appears once in a line: a child's
 * field replaces its parent's of the same name (`component` of a part replaces the process's), and
 * so does a call's field, where pino would write the key twice.
 */
function bound(root: TesseraPino, verbosity: number, sink: (line: string) => void, fields: LogFields): Logger {
  const keys = Object.keys(fields);
  if (keys.length === 0) return wrap(root, verbosity, sink, '', fields, root);
  return wrap(root.child(fields), verbosity, sink, flatFields(fields, SECRET_FIELDS), fields, root);
}

/**
 * `bindings`: the child's fields as flat-line.ts writes them, or undefined when they are not flat; a
 * line whose bindings and fields are flat is formatted there, any other goes through pino.
 */
function wrap(
  log: TesseraPino,
  verbosity: number,
  sink: (line: string) => void,
  bindings: string | undefined,
  boundFields: LogFields,
  root: TesseraPino,
): Logger {
  const collides = (fields: LogFields): boolean => {
    for (const key in fields) if (Object.hasOwn(boundFields, key)) return true;
    return false;
  };
  const emit = (level: 'info' | 'warn' | 'error' | 'verbose', message: string, fields?: LogFields): void => {
    if (fields !== undefined && collides(fields)) {
      // Rare: write the line from the root with the merged fields, so that the key appears once.
      const merged = { ...boundFields, ...redact(fields) };
      const flat = flatFields(merged, SECRET_FIELDS);
      if (flat !== undefined) sink(flatLine(level, '', flat, message));
      else root[level](merged, message);
      return;
    }
    if (bindings !== undefined) {
      const flat = fields === undefined ? '' : flatFields(fields, SECRET_FIELDS);
      if (flat !== undefined) {
        sink(flatLine(level, bindings, flat, message));
        return;
      }
    }
    if (fields === undefined) log[level](message);
    else log[level](redact(fields), message);
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    verbose: (level, message, fields) => {
      if (level <= verbosity) emit('verbose', message, fields);
    },
    child: (fields) => {
      const safe = redact(fields);
      if (collides(safe)) return bound(root, verbosity, sink, { ...boundFields, ...safe });
      const flat = bindings === undefined ? undefined : flatFields(safe, SECRET_FIELDS);
      return wrap(log.child(safe), verbosity, sink, flat === undefined ? undefined : bindings + flat, { ...boundFields, ...safe }, root);
    },
  };
}
