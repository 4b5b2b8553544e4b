/**
 * The one rule for model names, wherever a name enters a node (HTTP paths after percent-decoding, gRPC
 * fields, the repository API, a config's `name`, ensemble steps, the repository scan) and, later, the
 * gateway. A model name becomes a folder name under the model repository, a temporary folder for file
 * overrides, a metric label and a load-report key, so it must be one plain path segment:
 *
 * - 1 to MAX_MODEL_NAME_BYTES (255) bytes of UTF-8: the longest file name Linux file systems take;
 * - no `/` or `\` (a name is never a path), and not `.` or `..`;
 * - no NUL or other control character (C0, DEL, C1): they break logs, headers and file names.
 *
 * Everything else is allowed, as in tritonserver, whose names are folder names.
 */
import { TesseraError } from '../errors/index.js';

export const MAX_MODEL_NAME_BYTES = 255;

// C0 controls (NUL included), DEL and the C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why `name` is not a valid model name, or undefined when it is. */
export function modelNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'a model name must not be empty';
  if (name === '.' || name === '..') return `a model name must not be '${name}'`;
  if (name.includes('/') || name.includes('\\')) return "a model name must not contain '/' or '\\'";
  if (CONTROL.test(name)) return 'a model name must not contain NUL or control characters';
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_MODEL_NAME_BYTES) return `a model name must be at most ${MAX_MODEL_NAME_BYTES} bytes, got ${bytes}`;
  return undefined;
}

export function isValidModelName(name: string): boolean {
  return modelNameProblem(name) === undefined;
}

/** Throws INVALID_ARG (HTTP 400, gRPC INVALID_ARGUMENT) naming the problem when `name` is not valid. */
export function assertValidModelName(name: string): void {
  const problem = modelNameProblem(name);
  if (problem !== undefined) throw TesseraError.invalidArg(`invalid model name ${quoteName(name)}: ${problem}`);
}

/** The name for a message: JSON-quoted (control characters escaped) and cut to a readable length. */
export function quoteName(name: string): string {
  const shown = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return JSON.stringify(shown);
}
