/**
 * A small fetch-based HTTP client for the end-to-end suites: every answer read whole, and one assertion
 * for Triton's error answers (status + `{"error": ...}` JSON naming the problem).
 */
import { expect } from 'vitest';

export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
  text: string;
}

export async function call(base: string, method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body: bytes, text: Buffer.from(bytes).toString('utf8') };
}

export function json(answer: Answer): unknown {
  return JSON.parse(answer.text);
}

/** An error answer: the status, and `{"error": <message>}` matching `message`. */
export function expectError(answer: Answer, status: number, message: RegExp): void {
  expect({ status: answer.status, text: answer.text }).toMatchObject({ status });
  expect(answer.headers.get('content-type')).toMatch(/application\/json/);
  const error = (json(answer) as { error?: unknown }).error;
  expect(typeof error).toBe('string');
  expect(error as string).toMatch(message);
}
