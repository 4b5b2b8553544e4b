/**
 * config.pbtxt (protobuf text format) → ModelConfig, with errors that name the file, line, column and
 * field, because a wrong config file is the most common thing a user gets wrong.
 */
import { fromText } from '@bufbuild/protobuf/txtpb';
import { TesseraError } from '../errors/index.js';
import { ModelConfigSchema } from '../gen/model_config_pb.js';
import type { ModelConfig } from '../gen/model_config_pb.js';
import { locateTextError } from './text-positions.js';

export function parseModelConfigText(text: string, fileName: string): ModelConfig {
  try {
    return fromText(ModelConfigSchema, text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const where = locateTextError(text, message, (prefix) => fromText(ModelConfigSchema, prefix));
    const field = where.field === undefined ? '' : ` (field '${where.field}')`;
    throw new TesseraError(
      'INVALID_ARG',
      `failed to parse model configuration ${fileName}:${where.line}:${where.column}${field}: ${message}`,
      { cause: error },
    );
  }
}
