/**
 * Loads a model's Hugging Face tokenizer.json (and tokenizer_config.json beside it, when present) with
 * the maintained `@huggingface/tokenizers` package. A missing, oversized or malformed file fails the
 * model's load naming the file and what is wrong with it.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { TesseraError } from '../../../../shared/src/errors/index.js';

/** Real tokenizers are a few MB; far larger is not a tokenizer. */
export const MAX_TOKENIZER_BYTES = 64 * 1024 * 1024;

export interface LoadedTokenizer {
  readonly tokenizer: Tokenizer;
  readonly path: string;
  readonly eosId: number | undefined;
}

async function firstExisting(dirs: readonly string[], file: string): Promise<string | undefined> {
  for (const dir of dirs) {
    const path = join(dir, file);
    try {
      if ((await stat(path)).isFile()) return path;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

async function readJson(model: string, path: string): Promise<Record<string, unknown>> {
  const info = await stat(path);
  if (info.size > MAX_TOKENIZER_BYTES) {
    throw TesseraError.invalidArg(`model '${model}': tokenizer file '${path}' is ${info.size} bytes, more than ${MAX_TOKENIZER_BYTES}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw TesseraError.invalidArg(`model '${model}': tokenizer file '${path}' is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw TesseraError.invalidArg(`model '${model}': tokenizer file '${path}' must hold a JSON object`);
  }
  return json as Record<string, unknown>;
}

export async function loadTokenizer(model: string, dirs: readonly string[], file: string, eosToken: string | undefined): Promise<LoadedTokenizer> {
  const path = await firstExisting(dirs, file);
  if (path === undefined) throw TesseraError.invalidArg(`model '${model}': tokenizer file '${file}' not found in ${dirs.join(' or ')}`);
  const json = await readJson(model, path);
  const model_ = json['model'] as { type?: unknown; vocab?: unknown } | undefined;
  if (typeof model_ !== 'object' || model_ === null || typeof model_.type !== 'string' || typeof model_.vocab !== 'object' || model_.vocab === null) {
    throw TesseraError.invalidArg(`model '${model}': tokenizer file '${path}' has no 'model' with a 'type' and a 'vocab' (is it a Hugging Face tokenizer.json?)`);
  }
  const configPath = await firstExisting(dirs, 'tokenizer_config.json');
  const config = configPath === undefined ? {} : await readJson(model, configPath);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
    tokenizer.encode('tessera');
  } catch (error) {
    throw TesseraError.invalidArg(`model '${model}': tokenizer file '${path}' could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }
  const configured = config['eos_token'];
  const eosText = eosToken ?? (typeof configured === 'string' ? configured : typeof (configured as { content?: unknown } | null)?.content === 'string' ? (configured as { content: string }).content : undefined);
  const eosId = eosText === undefined ? undefined : tokenizer.token_to_id(eosText);
  if (eosText !== undefined && eosId === undefined) {
    throw TesseraError.invalidArg(`model '${model}': the end-of-sequence token '${eosText}' is not in tokenizer file '${path}'`);
  }
  return { tokenizer, path, eosId };
}
