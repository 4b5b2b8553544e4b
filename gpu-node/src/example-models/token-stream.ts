/**
 * `token_stream`, the example decoupled model (vLLM-style I/O) behind the generate extension and the
 * OpenAI-compatible API: config plus the module in `token-stream-model.js`, which documents what it does.
 */
import { readFile } from 'node:fs/promises';
import type { ExampleModel } from './example-model.js';
import { ROLE_TAG_CHAT_TEMPLATE, textModelConfigText } from './llm-config-text.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

const MODULE_SOURCE = new URL('./token-stream-model.js', import.meta.url);

/** The chat template: role tags (llm-config-text.ts). */
export const TOKEN_STREAM_CHAT_TEMPLATE = ROLE_TAG_CHAT_TEMPLATE;

export interface TokenStreamConfigOptions {
  /** The pause before each token (config parameter `token_delay_ms`); default 10. */
  readonly tokenDelayMs?: number;
  /** A file the model appends a line to whenever a request saw its cancellation (tests). */
  readonly cancelLog?: string;
  /** `context_length` parameter: prompt tokens + max_tokens may not exceed it; default 4096. */
  readonly contextLength?: number;
}

export function tokenStreamConfigText(options: TokenStreamConfigOptions = {}): string {
  const parameters: Record<string, string> = {
    token_delay_ms: String(options.tokenDelayMs ?? 10),
    tokenizer: 'gpt-tokenizer:cl100k_base',
    context_length: String(options.contextLength ?? 4096),
    chat_template: 'chat_template.jinja',
    ...(options.cancelLog === undefined ? {} : { cancel_log: options.cancelLog }),
  };
  return textModelConfigText({ name: 'token_stream', backend: 'typescript', defaultModelFilename: 'model.js', instanceCount: 2, parameters });
}

export const tokenStreamModel: ExampleModel = {
  name: 'token_stream',
  description: 'decoupled text model (vLLM-style I/O) streaming the tokens of its prompt back; for generate and /v1',
  build: async () => [
    { path: 'config.pbtxt', contents: tokenStreamConfigText() },
    { path: 'chat_template.jinja', contents: TOKEN_STREAM_CHAT_TEMPLATE },
    { path: '1/model.js', contents: await readFile(MODULE_SOURCE, 'utf8') },
    { path: '1/package.json', contents: ESM_PACKAGE_JSON },
  ],
};
