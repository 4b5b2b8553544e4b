/**
 * The common log line written without pino: fields that are all strings, finite or not numbers,
 * booleans or null, with no secret name among them, formatted straight into the line pino would
 * write (`{"level":..,"time":..` + the child's fields + the call's fields + `"msg":..}`).
 *
 * Why: the gateway writes an access line per request, and through pino (merging, a serializer
 * lookup per field, its own escaping, hooks) that line was about a sixth of a cache hit's CPU.
 * Anything else (nested objects, arrays, secrets to redact, bigints) goes through pino as before;
 * logger.test.ts checks that both paths write the same JSON.
 */

/**
 * `,"name":` per field name, encoded once: the names come from code, so there are few. Bounded all
 * the same, in case a caller ever passes names built from input: past the bound a name is encoded each time.
 */
const MAX_ENCODED_NAMES = 512;
const encodedNames = new Map<string, string>();

function namePrefix(key: string): string {
  let prefix = encodedNames.get(key);
  if (prefix === undefined) {
    prefix = `,${JSON.stringify(key)}:`;
    if (encodedNames.size < MAX_ENCODED_NAMES) encodedNames.set(key, prefix);
  }
  return prefix;
}

/** `,"name":value` for each field, or undefined when a field needs pino (or redaction). */
export function flatFields(fields: Readonly<Record<string, unknown>>, secret: ReadonlySet<string>): string | undefined {
  let out = '';
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    let text: string;
    switch (typeof value) {
      case 'string':
        text = JSON.stringify(value);
        break;
      case 'number':
        text = Number.isFinite(value) ? String(value) : 'null';
        break;
      case 'boolean':
        text = value ? 'true' : 'false';
        break;
      case 'undefined':
      case 'function':
        continue;
      default:
        if (value !== null) return undefined;
        text = 'null';
    }
    if (secret.has(key)) return undefined;
    out += namePrefix(key) + text;
  }
  return out;
}

// Lines come in bursts within one millisecond: the ISO time is made once per millisecond.
let timeMs = Number.NaN;
let timeText = '';

function isoTimeNow(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeText = new Date(now).toISOString();
  }
  return timeText;
}

/** The whole line: what pino writes for a call with these (flat) bindings and fields. */
export function flatLine(level: string, bindings: string, fields: string, message: string): string {
  return `{"level":"${level}","time":"${isoTimeNow()}"${bindings}${fields},"msg":${JSON.stringify(message)}}\n`;
}
