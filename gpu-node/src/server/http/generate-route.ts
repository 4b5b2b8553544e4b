/**
 * Triton's generate extension (provisional, HTTP only):
 * - `POST /v2/models/{m}[/versions/{v}]/generate`: one JSON answer,
 *   `{"model_name", "model_version", <output>: value, ...}`; a decoupled model's responses are merged in
 *   order (a later response's field replaces an earlier one's, so the final one wins).
 * - `POST .../generate_stream`: Server-Sent Events, `data: <that JSON>\n\n` per response (a decoupled
 *   model's bare final flag sends nothing); a failure once streaming has begun is the event
 *   `data: {"error": "..."}`. Closing the connection cancels the request (a typescript model sees its
 *   signal abort).
 *
 * The request is one JSON object: members named like a model input become that input (a string →
 * BYTES element, numbers and booleans → the input's datatype, arrays → their nesting as the shape, a
 * scalar → shape [1]; a batching model gets batch 1 prepended); every other member, and each member
 * of a `parameters` object, becomes a request parameter (string, number or boolean; `triton_` keys are
 * refused as on /infer). Outputs come back by name, BYTES as strings, a one-element output as a scalar.
 * Errors found before anything is streamed (unknown model, bad JSON, bad input) are ordinary HTTP errors.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { parseRequestParameters } from '../../../../shared/src/kserve/parameters.js';
import {
  jsonDataToTensorBytes,
  tensorBytesToJsonData,
  type InferRequest,
  type InferResponse,
  type Tensor,
} from '../../../../shared/src/tensors/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { payloadBodyLimits } from './body-reader.js';
import { isJsonObject, readJsonObject, type JsonObject } from './json-body.js';
import { jsonResponse } from './responses.js';
import type { HttpLimits } from './server-options.js';
import { GenerateEvents } from './generate-events.js';
import { sseResponse, type SseProducer } from './sse.js';

export interface GenerateContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

/** Triton's answer to a compressed generate request. */
export const GENERATE_ENCODING_REFUSAL = "Unsupported content-encoding, only 'identity' is supported.";

/** Own-property assignment that keeps a key such as "__proto__" a plain key; a later one replaces an earlier. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The shape of a JSON value: [1] for a scalar, else the lengths down its first elements. */
function shapeOf(value: unknown): number[] {
  if (!Array.isArray(value)) return [1];
  const shape: number[] = [];
  let current: unknown = value;
  while (Array.isArray(current)) {
    shape.push(current.length);
    if (shape.length > 32) throw TesseraError.invalidArg('generate input nests arrays more than 32 deep');
    current = current[0];
  }
  return shape;
}

/** The JSON body as an InferRequest against the model's metadata. */
export function generateRequest(core: NodeCore, body: JsonObject, model: string, version: string | undefined, limits: HttpLimits): InferRequest {
  const metadata = core.modelMetadata(model, version);
  const inputs: Tensor[] = [];
  const parameters: Record<string, unknown> = {};
  const inputNames = new Set(metadata.inputs.map((i) => i.name));
  for (const [key, value] of Object.entries(body)) {
    if (inputNames.has(key)) continue;
    if (key === 'parameters') {
      if (!isJsonObject(value)) throw TesseraError.invalidArg("generate 'parameters' must be a JSON object");
      for (const [name, v] of Object.entries(value)) setOwn(parameters, name, v);
    } else {
      setOwn(parameters, key, value);
    }
  }
  for (const input of metadata.inputs) {
    if (!Object.hasOwn(body, input.name)) continue;
    const value = body[input.name];
    let shape = shapeOf(value);
    if (input.shape[0] === -1 && shape.length === input.shape.length - 1) shape = [1, ...shape];
    const data = jsonDataToTensorBytes(input.datatype, shape, Array.isArray(value) ? value : [value], {
      name: input.name,
      maxBytes: limits.maxInputSize,
    });
    inputs.push({ name: input.name, datatype: input.datatype, shape, data });
  }
  return {
    id: '',
    modelName: model,
    ...(version === undefined ? {} : { modelVersion: version }),
    inputs,
    parameters: parseRequestParameters(parameters).parameters,
  };
}

/** Outputs as generate fields: BYTES as strings, one element as a scalar, more as a flat array. */
export function outputFields(response: InferResponse): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const output of response.outputs) {
    const data = tensorBytesToJsonData(output).map((v) => (typeof v === 'bigint' ? Number(v) : v));
    setOwn(fields, output.name, data.length === 1 ? data[0] : data);
  }
  return fields;
}

function answer(response: InferResponse, fields: Record<string, unknown>): Record<string, unknown> {
  return { model_name: response.modelName, model_version: response.modelVersion, ...fields };
}

export async function handleGenerate(
  context: GenerateContext,
  request: Request,
  model: string,
  version: string | undefined,
  stream: boolean,
): Promise<Response> {
  const coding = request.headers.get('content-encoding');
  if (coding !== null && coding.trim().toLowerCase() !== 'identity') throw TesseraError.invalidArg(GENERATE_ENCODING_REFUSAL);
  const body = (await readJsonObject(request, payloadBodyLimits(context.limits))) ?? {};
  const inferRequest = generateRequest(context.core, body, model, version, context.limits);
  const decoupled = context.core.isDecoupled(model, version);
  if (!stream) {
    let merged: Record<string, unknown> = {};
    const response = await context.core.infer(inferRequest, {
      signal: request.signal,
      onResponse: (r) => {
        merged = { ...merged, ...outputFields(r) };
      },
    });
    return jsonResponse(answer(response, decoupled ? merged : outputFields(response)));
  }
  const producer = generateStreamProducer(context.core, inferRequest, decoupled);
  return sseResponse(request.signal, (writer) => producer.produce(writer), (error, writer) => producer.onError(error, writer), producer.interval);
}

/** The events of generate_stream for a request already checked (generateRequest), on either path. */
export function generateStreamProducer(core: NodeCore, inferRequest: InferRequest, decoupled: boolean): SseProducer {
  const events = new GenerateEvents((r) => JSON.stringify(answer(r, outputFields(r))));
  return {
    // A non-decoupled model sends one event: the interval only matters to decoupled ones.
    interval: decoupled ? core.streamInterval(inferRequest.modelName, inferRequest.modelVersion) : undefined,
    async produce(writer) {
      const response = await core.infer(inferRequest, {
        signal: writer.signal,
        onResponse: (r) => {
          if (r.outputs.length > 0) writer.data(events.of(r));
        },
      });
      if (!decoupled) writer.data(JSON.stringify(answer(response, outputFields(response))));
    },
    onError(error, writer) {
      const message = error instanceof Error ? error.message : String(error);
      writer.data(JSON.stringify({ error: message }));
    },
  };
}
