/**
 * Which models the OpenAI-compatible API serves, and how: a READY model with the vLLM-style I/O
 * (input `text_input` BYTES, optional `stream` BOOL, `sampling_parameters` BYTES, `exclude_input_in_output`
 * BOOL; output `text_output` BYTES), with its config parameters:
 * - `tokenizer`: `gpt-tokenizer:<encoding>` for usage counts (tokenizer.ts); default cl100k_base;
 * - `context_length`: most prompt + completion tokens; default 4096;
 * - `chat_template`: a file name in the model's folder (chat-template.ts); default DEFAULT_CHAT_TEMPLATE.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelMetadata, NodeCore } from '../../server-api/index.js';
import { ChatTemplate, ChatTemplateError, DEFAULT_CHAT_TEMPLATE, MAX_TEMPLATE_BYTES } from './chat-template.js';
import { OpenAIApiError } from './openai-error.js';
import { tokenCounter, type TokenCounter } from './tokenizer.js';

export const DEFAULT_CONTEXT_LENGTH = 4096;

export interface LlmModel {
  readonly name: string;
  readonly version: string;
  /** Whether the model batches: its inputs then carry a batch dimension of 1. */
  readonly batching: boolean;
  /** Optional inputs the model declares (a request sets only these). */
  readonly inputs: ReadonlySet<string>;
  readonly contextLength: number;
  readonly tokens: TokenCounter;
  readonly template: ChatTemplate;
}

/** Whether the model's metadata has the vLLM-style I/O. */
export function hasLlmIo(metadata: ModelMetadata): boolean {
  const input = (name: string) => metadata.inputs.find((i) => i.name === name);
  const textInput = input('text_input');
  const textOutput = metadata.outputs.find((o) => o.name === 'text_output');
  const optional = (name: string, datatype: string) => input(name) === undefined || input(name)?.datatype === datatype;
  return (
    textInput?.datatype === 'BYTES' &&
    textOutput?.datatype === 'BYTES' &&
    optional('stream', 'BOOL') &&
    optional('sampling_parameters', 'BYTES') &&
    optional('exclude_input_in_output', 'BOOL')
  );
}

/** The READY models the API serves, by name. */
export async function llmModelNames(core: NodeCore): Promise<string[]> {
  const names = [...new Set((await core.repositoryIndex(true)).map((e) => e.name))];
  return names.filter((name) => {
    try {
      return hasLlmIo(core.modelMetadata(name));
    } catch {
      return false; // unloaded between the index and now
    }
  });
}

const templates = new Map<string, { mtimeMs: number; template: ChatTemplate }>();

async function chatTemplate(core: NodeCore, name: string, file: string | undefined): Promise<ChatTemplate> {
  if (file === undefined || file === '') return ChatTemplate.parse(DEFAULT_CHAT_TEMPLATE);
  // A plain file name in the model's own folder: no path may lead out of it.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(file) || file.includes('..')) {
    throw new OpenAIApiError(500, `model '${name}': chat_template must be a file name in the model's folder, got '${file}'`, 'server_error');
  }
  const path = join(core.modelDirectory(name), file);
  try {
    const info = await stat(path);
    if (info.size > MAX_TEMPLATE_BYTES) throw new ChatTemplateError(`the file is larger than ${MAX_TEMPLATE_BYTES} bytes`);
    const cached = templates.get(path);
    if (cached !== undefined && cached.mtimeMs === info.mtimeMs) return cached.template;
    const template = ChatTemplate.parse(await readFile(path, 'utf8'));
    templates.set(path, { mtimeMs: info.mtimeMs, template });
    return template;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new OpenAIApiError(500, `model '${name}': chat template '${file}' is unusable: ${reason}`, 'server_error');
  }
}

/** The model a request names, or the OpenAI 404 when it is not one the API serves. */
export async function resolveLlmModel(core: NodeCore, name: unknown): Promise<LlmModel> {
  if (typeof name !== 'string' || name === '') throw OpenAIApiError.invalid("'model' must be a non-empty string", 'model');
  let metadata: ModelMetadata;
  try {
    metadata = core.modelMetadata(name);
  } catch {
    throw OpenAIApiError.modelNotFound(name);
  }
  if (!hasLlmIo(metadata)) throw OpenAIApiError.modelNotFound(name);
  const config = core.modelConfig(name);
  const param = (key: string): string | undefined => config.parameters[key]?.stringValue;
  const contextText = param('context_length');
  const contextLength = contextText === undefined || contextText === '' ? DEFAULT_CONTEXT_LENGTH : Number(contextText);
  if (!Number.isSafeInteger(contextLength) || contextLength < 1) {
    throw new OpenAIApiError(500, `model '${name}': context_length must be a positive integer, got '${contextText}'`, 'server_error');
  }
  return {
    name,
    version: metadata.versions[0] ?? '',
    batching: config.maxBatchSize >= 1,
    inputs: new Set(metadata.inputs.map((i) => i.name)),
    contextLength,
    tokens: await tokenCounter(param('tokenizer')),
    template: await chatTemplate(core, name, param('chat_template')),
  };
}
