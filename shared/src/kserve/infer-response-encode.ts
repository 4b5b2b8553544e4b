/**
 * Server side: InferResponse → HTTP `/infer` response body and headers. Outputs go as flat JSON
 * `data`, or — when the client asked for binary (per output, else the request-level default) — as
 * binary sections after the JSON header, in output order.
 */
import { TesseraError } from '../errors/index.js';
import { tensorBytesToJsonData, validateTensorData, type InferResponse } from '../tensors/index.js';
import { INFERENCE_HEADER_CONTENT_LENGTH } from './header-length.js';
import { writeJson } from './json-text.js';

export interface ResponseEncodingOptions {
  /** Request-level `binary_data_output` (true for raw binary requests). */
  readonly binaryOutputDefault: boolean;
  /** Per-output `binary_data` the client set explicitly; overrides the default. */
  readonly outputBinary?: ReadonlyMap<string, boolean>;
}

/** How one answer is framed beyond what the client chose. */
export interface AnswerFraming {
  /** Written as the answer's id in place of `response.id` (the client's request id; '' writes none). */
  readonly id?: string;
  /**
   * The outputs were checked against their datatypes and shapes when they were decoded (the node's
   * answer, inferResponseFromProto, recorded by rememberReceivedResponse): not walked a second time.
   */
  readonly checked?: boolean;
}

export interface EncodedHttpBody {
  readonly body: Uint8Array;
  /** Content-Type, plus Inference-Header-Content-Length when binary sections follow the JSON. */
  readonly headers: Record<string, string>;
}

const utf8 = new TextEncoder();

/** Joins a JSON header and binary sections into one body with the matching headers. */
export function assembleBody(jsonText: string, sections: readonly Uint8Array[]): EncodedHttpBody {
  if (sections.length === 0) {
    return { body: utf8.encode(jsonText), headers: { 'Content-Type': 'application/json' } };
  }
  let sectionBytes = 0;
  for (const s of sections) sectionBytes += s.length;
  // The JSON is ASCII but for unusual names: encode it straight into the body, sized for that case,
  // and encode it apart only when it turns out longer in UTF-8.
  let body = new Uint8Array(jsonText.length + sectionBytes);
  let headerBytes = jsonText.length;
  const { read, written } = utf8.encodeInto(jsonText, body);
  if (read !== jsonText.length || written !== jsonText.length) {
    const header = utf8.encode(jsonText);
    headerBytes = header.length;
    body = new Uint8Array(headerBytes + sectionBytes);
    body.set(header, 0);
  }
  let offset = headerBytes;
  for (const s of sections) {
    body.set(s, offset);
    offset += s.length;
  }
  return {
    body,
    headers: {
      'Content-Type': 'application/octet-stream',
      [INFERENCE_HEADER_CONTENT_LENGTH]: String(headerBytes),
    },
  };
}

/** A response as its JSON header text and the binary sections that follow it (views of the outputs, not copies). */
export interface EncodedHttpParts {
  readonly jsonText: string;
  readonly sections: readonly Uint8Array[];
}

/**
 * Throws INVALID_ARG when an output the client wants as JSON is FP16/BF16, and INTERNAL when an output
 * tensor's data does not match its own shape (a backend bug, not the client's).
 */
export function encodeInferResponse(response: InferResponse, options: ResponseEncodingOptions, framing?: AnswerFraming): EncodedHttpBody {
  const parts = encodeInferResponseParts(response, options, framing);
  return assembleBody(parts.jsonText, parts.sections);
}

/**
 * encodeInferResponse without joining the parts: a server that can write several buffers in one go
 * sends the outputs' own bytes instead of a copy of them. The sections must not change until written.
 */
export function encodeInferResponseParts(response: InferResponse, options: ResponseEncodingOptions, framing?: AnswerFraming): EncodedHttpParts {
  // The JSON text is written directly (the same text writeJson gives for the response object, with
  // the same key order): this runs once per answer, and building the object first cost twice as much.
  const sections: Uint8Array[] = [];
  const id = framing?.id ?? response.id;
  const checked = framing?.checked === true;
  let text = id !== '' ? `{"id":${JSON.stringify(id)},` : '{';
  text += `"model_name":${JSON.stringify(response.modelName)},"model_version":${JSON.stringify(String(response.modelVersion))}`;
  const parameters = response.parameters;
  if (parameters !== undefined && Object.keys(parameters).length > 0) text += `,"parameters":${writeJson(parameters)}`;
  text += ',"outputs":[';
  const outputs = response.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const tensor = outputs[i]!;
    if (!checked) {
      try {
        validateTensorData(tensor, `output '${tensor.name}' of model '${response.modelName}'`);
      } catch (err) {
        throw TesseraError.internal(`inconsistent inference output: ${(err as Error).message}`, err);
      }
    }
    const binary = options.outputBinary?.get(tensor.name) ?? options.binaryOutputDefault;
    text += `${i > 0 ? ',' : ''}{"name":${JSON.stringify(tensor.name)},"datatype":${JSON.stringify(tensor.datatype)},"shape":${shapeJson(tensor.shape)}`;
    if (binary) {
      sections.push(tensor.data);
      text += `,"parameters":{"binary_data_size":${tensor.data.length}}}`;
    } else {
      text += `,"data":${writeJson(tensorBytesToJsonData(tensor))}}`;
    }
  }
  return { jsonText: `${text}]}`, sections };
}

/** A shape as writeJson writes it, without its intermediate array of strings. */
function shapeJson(shape: readonly number[]): string {
  let text = '[';
  for (let i = 0; i < shape.length; i++) text += i === 0 ? writeJson(shape[i]) : `,${writeJson(shape[i])}`;
  return `${text}]`;
}
