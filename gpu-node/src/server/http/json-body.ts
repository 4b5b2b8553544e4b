/**
 * JSON bodies of the control routes (repository, logging, trace, shared memory). Each of them takes an
 * optional JSON object: an empty body means "no options"; anything that is not an object is the
 * caller's mistake (400), never ours.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { readBody, type ReadBodyOptions } from './body-reader.js';

export type JsonObject = Record<string, unknown>;

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads and parses the body; `undefined` when it is empty (or only whitespace). */
export async function readJsonObject(request: Request, options: ReadBodyOptions): Promise<JsonObject | undefined> {
  const bytes = await readBody(request, options);
  return parseJsonObject(bytes);
}

export function parseJsonObject(bytes: Uint8Array): JsonObject | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw TesseraError.invalidArg('failed to parse the request JSON buffer: the body is not valid UTF-8');
  }
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw TesseraError.invalidArg(
      `failed to parse the request JSON buffer: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isJsonObject(value)) throw TesseraError.invalidArg('the request body must be a JSON object');
  return value;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An optional boolean member: absent/null gives `undefined`, another type is a 400 naming the key. */
export function optionalBoolean(object: JsonObject, key: string, where: string): boolean | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw TesseraError.invalidArg(`expected '${key}' in ${where} to be a boolean`);
  return value;
}
