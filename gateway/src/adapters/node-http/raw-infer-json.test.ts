import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inferRequestParts } from '../../../../shared/src/kserve/index.js';
import type { InferRequest, Parameters } from '../../../../shared/src/tensors/index.js';
import { withCallParameters } from '../grpc/call-parameters.js';
import { inferRequestJson } from './raw-infer-json.js';

/** What the raw upstream sent before raw-infer-json.ts: the generic encoder over the request with every output asked binary. */
function generic(request: InferRequest, call: { priority?: number; timeoutUs?: number }): unknown {
  const outputs = request.outputs?.map((o) => ({ name: o.name, binaryData: true, ...(o.classification === undefined ? {} : { classification: o.classification }) }));
  const asked = withCallParameters(outputs === undefined ? request : { ...request, outputs }, { ...call, deadline: 0 });
  return JSON.parse(inferRequestParts(asked, { binaryInputs: true, binaryDataOutput: true }).json);
}

const name = fc.string({ minLength: 1, maxLength: 12 });
const parameterValue = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double(), fc.boolean());
const parameters = fc.dictionary(fc.oneof(name, fc.constantFrom('priority', 'timeout', 'binary_data_output', 'sequence_id', '__proto__')), parameterValue, { maxKeys: 5 });
const input = fc.tuple(name, fc.integer({ min: 0, max: 6 })).map(([n, count]) => ({ name: n, datatype: 'INT32' as const, shape: [1, count], data: new Uint8Array(4 * count) }));
const output = fc.record({ name, classification: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), binaryData: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: ['name'] });
const request = fc.record({
  id: fc.oneof(fc.constant(''), fc.string({ maxLength: 8 })),
  modelName: fc.constant('m'),
  inputs: fc.array(input, { maxLength: 4 }),
  outputs: fc.option(fc.array(output, { maxLength: 3 }), { nil: undefined }),
  parameters: parameters as fc.Arbitrary<Parameters>,
});
const call = fc.record({ priority: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), timeoutUs: fc.option(fc.integer({ min: 0, max: 1e9 }), { nil: undefined }) });

describe('the raw upstream request JSON written straight', () => {
  it('means what the generic encoder wrote, for generated requests (parameters, call priority/timeout, outputs, ids)', () => {
    fc.assert(
      fc.property(request, call, (r, c) => {
        const req = (r.outputs === undefined ? { ...r, outputs: undefined } : r) as InferRequest;
        const cleaned = { ...c } as { priority?: number; timeoutUs?: number };
        if (cleaned.priority === undefined) delete cleaned.priority;
        if (cleaned.timeoutUs === undefined) delete cleaned.timeoutUs;
        const direct = inferRequestJson(req, cleaned);
        expect(JSON.parse(direct.json)).toEqual(generic(req, cleaned));
        expect(direct.sections).toEqual(req.inputs.map((t) => t.data));
        // The inputs' own bytes, not copies.
        direct.sections.forEach((section, i) => expect(section).toBe(req.inputs[i]!.data));
      }),
      { numRuns: 400 },
    );
  });

  it('writes -0, NaN and Infinity as the generic writer does, and refuses an input whose bytes do not match its shape', () => {
    const r: InferRequest = { id: 'x', modelName: 'm', inputs: [], parameters: { a: -0, b: Number.NaN, c: Infinity } };
    expect(inferRequestJson(r, {}).json).toBe('{"id":"x","parameters":{"a":-0,"b":null,"c":null,"binary_data_output":true},"inputs":[]}');
    const bad: InferRequest = { id: '', modelName: 'm', inputs: [{ name: 'I', datatype: 'INT32', shape: [2], data: new Uint8Array(4) }], parameters: {} };
    expect(() => inferRequestJson(bad, {})).toThrow(/byte size mismatch for input 'I'/);
  });
});
