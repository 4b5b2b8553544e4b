/**
 * `config.pbtxt` text for a decoupled text model with vLLM-style I/O (`text_input`, optional `stream`,
 * `sampling_parameters`, `exclude_input_in_output` → `text_output`): the shape the generate extension and
 * the OpenAI-compatible routes serve. Shared by the example LLMs so their configs cannot drift apart.
 */

/** A role-tagged chat template (gpu-node/src/server/openai/chat-template.ts describes its small language). */
export const ROLE_TAG_CHAT_TEMPLATE = ['{% for message in messages %}<|{{ message.role }}|>', '{{ message.content }}', '{% endfor %}<|assistant|>', ''].join('\n');

export interface TextModelConfig {
  readonly name: string;
  readonly backend: string;
  readonly defaultModelFilename: string;
  readonly instanceCount: number;
  /** String parameters, in order. */
  readonly parameters: Readonly<Record<string, string>>;
}

export function textModelConfigText(config: TextModelConfig): string {
  const quote = (s: string) => JSON.stringify(s);
  const input = (name: string, type: string, optional: boolean) =>
    `  { name: ${quote(name)} data_type: ${type} dims: [ 1 ]${optional ? ' optional: true' : ''} }`;
  return [
    `name: ${quote(config.name)}`,
    `backend: ${quote(config.backend)}`,
    `default_model_filename: ${quote(config.defaultModelFilename)}`,
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
    `instance_group [ { count: ${config.instanceCount} kind: KIND_CPU } ]`,
    ...Object.entries(config.parameters).map(([key, value]) => `parameters { key: ${quote(key)} value: { string_value: ${quote(value)} } }`),
    '',
  ].join('\n');
}
