/**
 * Tiny field checkers for documents that come from Redis: the gateway must not trust another
 * process's JSON, so every field is checked and a failure names the field, what was expected and
 * what was found (`malformed load report: models[2].queued must be a non-negative integer (got -1)`).
 */
import { TesseraError } from '../errors/index.js';

/** Longest text quoted back in an error, so a huge bad value does not flood the log. */
const MAX_QUOTED = 60;

export class JsonChecker {
  /** `what` names the document in errors, e.g. "load report". */
  constructor(private readonly what: string) {}

  fail(path: string, expected: string, got: unknown): never {
    throw TesseraError.invalidArg(`malformed ${this.what}: ${path} must be ${expected} (got ${describe(got)})`);
  }

  parseJson(text: unknown, maxBytes: number): unknown {
    if (typeof text !== 'string') this.fail('the document', 'a JSON string', text);
    if (text.length > maxBytes) this.fail('the document', `at most ${maxBytes} characters`, `${text.length} characters`);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      return this.fail('the document', 'valid JSON', (error as Error).message);
    }
  }

  object(value: unknown, path: string): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(path, 'an object', value);
    return value as Record<string, unknown>;
  }

  array(value: unknown, path: string, maxLength: number): readonly unknown[] {
    if (!Array.isArray(value)) this.fail(path, 'an array', value);
    if (value.length > maxLength) this.fail(path, `an array of at most ${maxLength} items`, `${value.length} items`);
    return value;
  }

  /** A safe integer >= min (default 0). */
  integer(value: unknown, path: string, min = 0): number {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      this.fail(path, min === 0 ? 'a non-negative integer' : `an integer >= ${min}`, value);
    }
    return value;
  }

  /** A finite number >= 0. */
  nonNegative(value: unknown, path: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.fail(path, 'a finite non-negative number', value);
    }
    return value;
  }

  boolean(value: unknown, path: string): boolean {
    if (typeof value !== 'boolean') this.fail(path, 'a boolean', value);
    return value;
  }

  /** A string matching `pattern`, described in errors by `expected`. */
  string(value: unknown, path: string, pattern: RegExp, expected: string): string {
    if (typeof value !== 'string' || !pattern.test(value)) this.fail(path, expected, value);
    return value;
  }

  literal<T extends string | number>(value: unknown, path: string, allowed: readonly T[]): T {
    if (!allowed.includes(value as T)) this.fail(path, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, value);
    return value as T;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}...` : text;
}
