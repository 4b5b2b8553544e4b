/**
 * The HTTP response encoder writes its JSON text directly; this checks it against the object it
 * replaced, serialized by writeJson (same keys, same order, same text), for generated responses:
 * unicode and empty ids and names, parameters, binary and JSON outputs, and that the binary sections
 * follow the header byte for byte.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tensorBytesToJsonData, type InferResponse } from '../tensors/index.js';
import { encodeInferResponse } from './infer-response-encode.js';
import { writeJson } from './json-text.js';

function referenceText(response: InferResponse, binaryDefault: boolean, perOutput: ReadonlyMap<string, boolean>): { text: string; sections: Uint8Array[] } {
  const sections: Uint8Array[] = [];
  const outputs = response.outputs.map((tensor) => {
    const base = { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape };
    if (perOutput.get(tensor.name) ?? binaryDefault) {
      sections.push(tensor.data);
      return { ...base, parameters: { binary_data_size: tensor.data.length } };
    }
    return { ...base, data: tensorBytesToJsonData(tensor) };
  });
  const parameters = response.parameters;
  const json = {
    ...(response.id !== '' ? { id: response.id } : {}),
    model_name: response.modelName,
    model_version: String(response.modelVersion),
    ...(parameters !== undefined && Object.keys(parameters).length > 0 ? { parameters } : {}),
    outputs,
  };
  return { text: writeJson(json), sections };
}

const output = fc
  .record({ name: fc.string({ unit: 'binary', maxLength: 6 }), rows: fc.nat(4), kind: fc.constantFrom('INT32', 'FP32', 'UINT8', 'BOOL') })
  .map(({ name, rows, kind }) => {
    const bytes = kind === 'INT32' || kind === 'FP32' ? 4 : 1;
    const data = new Uint8Array(rows * 3 * bytes).map((_, i) => (kind === 'BOOL' ? i % 2 : (i * 37) % 256));
    return { name, datatype: kind as 'INT32' | 'FP32' | 'UINT8' | 'BOOL', shape: [rows, 3], data };
  });
const response: fc.Arbitrary<InferResponse> = fc.record(
  {
    id: fc.string({ unit: 'binary', maxLength: 8 }),
    modelName: fc.string({ unit: 'binary', maxLength: 8 }),
    modelVersion: fc.constantFrom('1', '12', 'é'),
    outputs: fc.uniqueArray(output, { maxLength: 3, selector: (o) => o.name }),
    parameters: fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.boolean(), fc.integer(), fc.string({ unit: 'binary', maxLength: 5 })), { maxKeys: 2 }),
  },
  { requiredKeys: ['id', 'modelName', 'modelVersion', 'outputs'] },
);

describe('encodeInferResponse', () => {
  it('writes the text writeJson gives for the response object, then the binary sections', () => {
    fc.assert(
      fc.property(response, fc.boolean(), fc.array(fc.boolean(), { maxLength: 3 }), (r, binaryDefault, flags) => {
        const perOutput = new Map(r.outputs.map((o, i) => [o.name, flags[i]]).filter((e): e is [string, boolean] => e[1] !== undefined));
        const ref = referenceText(r, binaryDefault, perOutput);
        const encoded = encodeInferResponse(r, { binaryOutputDefault: binaryDefault, outputBinary: perOutput });
        const header = new TextEncoder().encode(ref.text);
        const expected = Buffer.concat([header, ...ref.sections]);
        expect(Buffer.compare(Buffer.from(encoded.body), expected)).toBe(0);
        if (ref.sections.length > 0) expect(encoded.headers['Inference-Header-Content-Length']).toBe(String(header.length));
        else expect(encoded.headers['Content-Type']).toBe('application/json');
      }),
      { numRuns: 400 },
    );
  });
});
