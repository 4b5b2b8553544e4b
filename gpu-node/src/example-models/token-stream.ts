/**
 * `token_stream`, the example decoupled model (vLLM-style I/O) behind the generate extension and the
 * OpenAI-compatible API: config plus the module in `token-stream-model.js`, which documents what it does.
 */
import { readFile } from 'node:fs/promises';
import type { ExampleModel } from './example-model.js';
import { ESM_PACKAGE_JSON } from './ts-scale.js';

const MODULE_SOURCE = new URL('./token-stream-model.js', import.meta.url);

/** The chat template (gpu-node/src/server/openai/chat-template.ts describes its small language). */
export const TOKEN_STREAM_CHAT_TEMPLATE = [
  '{% for message in messages %}<|{{ message.role }}|>',
  '{{ message.content }}',
  '{% endfor %}<|assistant|>',
  '',
].join('\n');

export interface TokenStreamConfigOptions {
  /** The pause before each token (config parameter `token_delay_ms`); default 10. */
  readonly tokenDelayMs?: number;
  /** A file the model appends a line to whenever a request saw its cancellation (tests). */
  readonly cancelLog?: string;
  /** `context_length` parameter: prompt tokens + max_tokens may not exceed it; default 4096. */
  readonly contextLength?: number;
}

function quote(value: string): string {
  return JSON.stringify(value);
}

export function tokenStreamConfigText(options: TokenStreamConfigOptions = {}): string {
  const parameters: Record<string, string> = {
    token_delay_ms: String(options.tokenDelayMs ?? 10),
    tokenizer: 'gpt-tokenizer:cl100k_base',
    context_length: String(options.contextLength ?? 4096),
    chat_template: 'chat_template.jinja',
    ...(options.cancelLog === undefined ? {} : { cancel_log: options.cancelLog }),
  };
  const input = (name: string, type: string, optional: boolean) =>
    `  { name: ${quote(name)} data_type: ${type} dims: [ 1 ]${optional ? ' optional: true' : ''} }`;
  return [
    `name: "token_stream"`,
    `backend: "typescript"`,
    `default_model_filename: "model.js"`,
    `max_batch_size: 0`,
    `model_transaction_policy { decoupled: true }`,
    `input [`,
    [
      input('text_input', 'TYPE_STRING', false),
      input('stream', 'TYPE_BOOL', true),
      input('sampling_parameters', 'TYPE_STRING', true),
      input('exclude_input_in_output', 'TYPE_BOOL', true),
    ].join(',\n'),
    `]`,
    `output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]`,
    `instance_group [ { count: 2 kind: KIND_CPU } ]`,
    ...Object.entries(parameters).map(([key, value]) => `parameters { key: ${quote(key)} value: { string_value: ${quote(value)} } }`),
    '',
  ].join('\n');
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
