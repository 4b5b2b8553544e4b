/**
 * generate_stream's events without building and serializing an object per token. A decoupled LLM's
 * response is one BYTES output of one element (the token's text), so every event of a stream is
 * `{"model_name":M,"model_version":V,"<output>":` + the text as a JSON string + `}`: the part around
 * the text is made once per stream and only the text is escaped per event (JSON.stringify of the
 * string, the very escaping JSON.stringify applies to it inside the object).
 *
 * Any other response (several outputs, numbers, text that is not valid UTF-8, an output name that JSON
 * would order or place differently) goes to `general`, the one-object serialization, so the bytes are
 * always those of `JSON.stringify(answer(response, outputFields(response)))`.
 */
import type { InferResponse, Tensor } from '../../../../shared/src/tensors/index.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const LENGTH_PREFIX = 4;
/** Keys JSON.stringify would not put after model_name and model_version: the two themselves, array indices, __proto__. */
const REORDERED_KEY = /^(model_name|model_version|__proto__|0|[1-9][0-9]{0,9})$/;

/** The text of a one-element BYTES tensor, or undefined when it is not one (or not valid UTF-8). */
export function singleBytesText(tensor: Tensor): string | undefined {
  if (tensor.datatype !== 'BYTES') return undefined;
  for (const dim of tensor.shape) if (dim !== 1) return undefined;
  const data = tensor.data;
  if (data.length < LENGTH_PREFIX) return undefined;
  const length = (data[0] as number) | ((data[1] as number) << 8) | ((data[2] as number) << 16) | ((data[3] as number) << 24);
  if (length !== data.length - LENGTH_PREFIX) return undefined;
  try {
    return utf8.decode(data.subarray(LENGTH_PREFIX));
  } catch {
    return undefined;
  }
}

export class GenerateEvents {
  private modelName: string | undefined;
  private modelVersion: string | undefined;
  private outputName: string | undefined;
  /** The event up to the text for the names above; undefined when they do not allow the shortcut. */
  private prefix: string | undefined;

  constructor(private readonly general: (response: InferResponse) => string) {}

  /** The event's JSON for `response`. */
  of(response: InferResponse): string {
    const output = response.outputs.length === 1 ? response.outputs[0] : undefined;
    const text = output === undefined ? undefined : singleBytesText(output);
    if (output === undefined || text === undefined) return this.general(response);
    if (output.name !== this.outputName || response.modelName !== this.modelName || response.modelVersion !== this.modelVersion) {
      this.outputName = output.name;
      this.modelName = response.modelName;
      this.modelVersion = response.modelVersion;
      this.prefix =
        typeof response.modelName === 'string' && typeof response.modelVersion === 'string' && !REORDERED_KEY.test(output.name)
          ? `{"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(response.modelVersion)},${JSON.stringify(output.name)}:`
          : undefined;
    }
    return this.prefix === undefined ? this.general(response) : `${this.prefix}${JSON.stringify(text)}}`;
  }
}
