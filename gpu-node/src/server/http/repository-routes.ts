/**
 * Model-repository extension: index, load (with `config` / `file:` overrides) and unload.
 * The bodies are validated here, so NodeCore only ever sees well-typed options.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LoadOptions, NodeCore } from '../../server-api/index.js';
import { addFileOverride, FILE_OVERRIDE_PREFIX, overrideFilePath } from '../../repository/override-directory.js';
import { isJsonObject, optionalBoolean, readJsonObject, type JsonObject } from './json-body.js';
import { jsonResponse, emptyResponse } from './responses.js';
import type { HttpLimits } from './server-options.js';
import { controlBodyLimits, payloadBodyLimits } from './body-reader.js';

export interface RepositoryRouteContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

/** `POST /v2/repository/index`, body `{"ready": bool}` (optional). */
export async function handleRepositoryIndex(context: RepositoryRouteContext, request: Request): Promise<Response> {
  const body = await readJsonObject(request, controlBodyLimits(context.limits));
  const ready = body === undefined ? undefined : optionalBoolean(body, 'ready', 'the repository index request');
  const entries = await context.core.repositoryIndex(ready ?? false);
  return jsonResponse(entries);
}

/** `POST /v2/repository/models/{m}/load`; blocks until the load succeeded or failed. */
export async function handleLoad(context: RepositoryRouteContext, request: Request, modelName: string): Promise<Response> {
  // A load body may carry whole model files in base64, so it gets the full body limit.
  const body = await readJsonObject(request, payloadBodyLimits(context.limits));
  const options = body === undefined ? {} : parseLoadOptions(body);
  await context.core.loadModel(modelName, options);
  return emptyResponse(200);
}

/** `POST /v2/repository/models/{m}/unload`; returns without waiting for the unload to finish. */
export async function handleUnload(context: RepositoryRouteContext, request: Request, modelName: string): Promise<Response> {
  const body = await readJsonObject(request, controlBodyLimits(context.limits));
  const parameters = body === undefined ? undefined : parametersOf(body, 'unload');
  const unloadDependents =
    parameters === undefined ? undefined : optionalBoolean(parameters, 'unload_dependents', "the unload 'parameters'");
  await context.core.unloadModel(modelName, unloadDependents === undefined ? {} : { unloadDependents });
  return emptyResponse(200);
}

/**
 * The load body: `{"parameters": {"config": "<json>", "file:<version>/<name>": "<base64>"}}`.
 * Triton answers an unknown parameter key with 500 ("unexpected error on creating Triton parameter");
 * we answer 400 naming the key, because it is the caller's mistake, not a server fault.
 */
export function parseLoadOptions(body: JsonObject): LoadOptions {
  const parameters = parametersOf(body, 'load');
  if (parameters === undefined) return {};
  let configJson: string | undefined;
  const files = new Map<string, Uint8Array>();
  for (const [key, value] of Object.entries(parameters)) {
    if (typeof value !== 'string') {
      throw TesseraError.invalidArg(`load parameter '${key}' must be a JSON string, got ${jsonTypeOf(value)}`);
    }
    if (key === 'config') {
      configJson = value;
    } else if (key.startsWith(FILE_OVERRIDE_PREFIX)) {
      // Checked (relative, inside the model folder) before the content is decoded.
      overrideFilePath(key);
      addFileOverride(files, key, decodeBase64(value, key));
    } else {
      throw TesseraError.invalidArg(
        `unexpected load parameter '${key}': only 'config' and 'file:<version>/<name>' are accepted`,
      );
    }
  }
  if (files.size > 0 && configJson === undefined) {
    throw TesseraError.invalidArg("load parameters with a 'file:' override must also set 'config'");
  }
  return {
    ...(configJson === undefined ? {} : { configJson }),
    ...(files.size === 0 ? {} : { files }),
  };
}

function parametersOf(body: JsonObject, what: string): JsonObject | undefined {
  const parameters = body['parameters'];
  if (parameters === undefined || parameters === null) return undefined;
  if (!isJsonObject(parameters)) throw TesseraError.invalidArg(`'parameters' of the ${what} request must be a JSON object`);
  return parameters;
}

/** Strict base64: Buffer.from would silently skip garbage and load a corrupt model file. */
function decodeBase64(text: string, key: string): Uint8Array {
  // Linear checks (no backtracking regex over a file of hundreds of MiB): alphabet, length, padding at the end only.
  const valid = text.length % 4 === 0 && !/[^A-Za-z0-9+/=]/.test(text) && !/=[^=]|={3,}/.test(text);
  if (!valid) throw TesseraError.invalidArg(`load parameter '${key}' is not valid base64`);
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
