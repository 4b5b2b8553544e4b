/** Test-only helpers shared by the tensor and KServe codec tests. */
import { expect } from 'vitest';
import { TesseraError, type ErrorCode } from '../errors/index.js';

/** Runs `fn` and asserts it throws a TesseraError with `code` whose message contains `fragment`. */
export function expectTesseraError(fn: () => unknown, code: ErrorCode, fragment?: string | RegExp): TesseraError {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a TesseraError to be thrown').toBeInstanceOf(TesseraError);
  const error = thrown as TesseraError;
  expect(error.code).toBe(code);
  if (fragment !== undefined) expect(error.message).toMatch(fragment);
  return error;
}

export function bytesOf(...values: number[]): Uint8Array {
  return new Uint8Array(values);
}

/** Elements of any typed array as a plain array (Array.from has no overload for the typed-array union). */
export function listOf(array: ArrayLike<number> | ArrayLike<bigint>): (number | bigint)[] {
  return Array.from(array as ArrayLike<number | bigint>);
}

/** A binary-extension request body: the header JSON, then the binary sections, with its header length. */
export function withBinary(header: unknown, ...sections: Uint8Array[]): { body: Uint8Array; headerLength: string } {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const body = new Uint8Array(json.length + sections.reduce((n, s) => n + s.length, 0));
  body.set(json);
  let at = json.length;
  for (const s of sections) {
    body.set(s, at);
    at += s.length;
  }
  return { body, headerLength: String(json.length) };
}
