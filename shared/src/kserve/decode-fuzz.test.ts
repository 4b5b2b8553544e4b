/**
 * Property-based fuzzing of the server-side request decoder: valid bodies, then the same bodies with
 * bytes flipped, cut, extended, their header length changed or JSON fields replaced. Whatever arrives,
 * the decoder must return a self-consistent InferRequest or throw a TesseraError that blames the
 * client (never INTERNAL, never a stray TypeError/RangeError).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../errors/index.js';
import {
  DATATYPES,
  datatypeByteSize,
  elementCount,
  encodeBytesElements,
  typedArrayToBytes,
  validateTensorData,
  type Datatype,
  type InferRequest,
  type Tensor,
} from '../tensors/index.js';
import { decodeInferRequestBody } from './infer-request-decode.js';
import { encodeInferRequestBody } from './infer-request-encode.js';
import type { RawInputModel } from './raw-input.js';

const shapeArb = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 3 });

function valuesArb(datatype: Datatype, count: number): fc.Arbitrary<Uint8Array> {
  const n = { minLength: count, maxLength: count };
  switch (datatype) {
    case 'BOOL':
      return fc.array(fc.boolean(), n).map((v) => new Uint8Array(v.map(Number)));
    case 'BYTES':
      return fc.array(fc.string({ maxLength: 6 }), n).map((v) => encodeBytesElements(v));
    case 'FP32':
      return fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), n).map((v) => typedArrayToBytes(new Float32Array(v)));
    case 'FP64':
      return fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), n).map((v) => typedArrayToBytes(new Float64Array(v)));
    case 'INT64':
      return fc.array(fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }), n).map((v) => typedArrayToBytes(new BigInt64Array(v)));
    case 'UINT64':
      return fc.array(fc.bigInt({ min: 0n, max: 2n ** 53n }), n).map((v) => typedArrayToBytes(new BigUint64Array(v)));
    default: {
      // Small integer types (and FP16/BF16, which only travel binary): any bit pattern is valid data.
      const size = datatypeByteSize(datatype) as number;
      return fc.uint8Array({ minLength: count * size, maxLength: count * size });
    }
  }
}

const tensorArb = (name: string): fc.Arbitrary<Tensor> =>
  fc
    .record({ datatype: fc.constantFrom(...DATATYPES), shape: shapeArb })
    .chain(({ datatype, shape }) =>
      valuesArb(datatype, elementCount(shape)).map((data): Tensor => ({ name, datatype, shape, data })),
    );

const requestArb: fc.Arbitrary<{ request: InferRequest; binary: string[] }> = fc
  .integer({ min: 0, max: 3 })
  .chain((n) =>
    fc.record({
      inputs: fc.tuple(...Array.from({ length: n }, (_, i) => tensorArb(`in${i}`))),
      binaryFlags: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
      id: fc.oneof(fc.constant(''), fc.string({ maxLength: 8 })),
      priority: fc.option(fc.nat({ max: 5 }), { nil: undefined }),
      outputs: fc.option(
        fc.uniqueArray(
          fc.record({
            name: fc.constantFrom('out0', 'out1', 'out2'),
            binaryData: fc.option(fc.boolean(), { nil: undefined }),
            classification: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
          }),
          { selector: (o) => o.name, maxLength: 3 },
        ),
        { nil: undefined },
      ),
    }),
  )
  .map(({ inputs, binaryFlags, id, priority, outputs }) => {
    const binary = inputs
      .filter((t, i) => binaryFlags[i] === true || t.datatype === 'FP16' || t.datatype === 'BF16')
      .map((t) => t.name);
    const request: InferRequest = {
      id,
      modelName: 'm',
      modelVersion: '1',
      inputs,
      parameters: priority === undefined ? {} : { priority },
      outputs: outputs?.map((o) => ({
        name: o.name,
        ...(o.binaryData === undefined ? {} : { binaryData: o.binaryData }),
        ...(o.classification === undefined ? {} : { classification: o.classification }),
      })),
    };
    return { request, binary };
  });

interface Body {
  readonly body: Uint8Array;
  readonly headerLength: string | null;
}

function encode(request: InferRequest, binary: string[]): Body {
  const { body, headers } = encodeInferRequestBody(request, { binaryInputs: binary });
  return { body, headerLength: headers['Inference-Header-Content-Length'] ?? null };
}

// Values a JSON mutation may plant: wrong types, boundaries, and nesting deep enough to hurt recursion.
const deepArray = (() => {
  let node: unknown = [1];
  for (let i = 0; i < 3000; i++) node = [node];
  return node;
})();
const nastyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(-1, 0, 2 ** 31, 2 ** 53, 2 ** 64, 1e308, -0, 1.5, '', 'FP16', 'BYTES', 'TYPE_FP32', null, [], {}, [-1], [2 ** 40, 2 ** 40], [1e9], deepArray, { binary_data_size: 4 }, { shared_memory_region: 'r' }),
);
const interestingKeys = fc.constantFrom(
  'name', 'shape', 'datatype', 'data', 'parameters', 'binary_data_size', 'inputs', 'outputs', 'id',
  'binary_data', 'classification', 'shared_memory_region', 'priority', 'sequence_id', 'triton_x',
  'binary_data_output', '__proto__', 'constructor', '0', '1',
);

/** Replaces or deletes one field somewhere in the JSON header and re-serializes it. */
function mutateJson(b: Body, pick: number, key: string, value: unknown, remove: boolean): Body {
  const jsonLength = b.headerLength === null ? b.body.length : Number(b.headerLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(b.body.subarray(0, jsonLength)));
  } catch {
    return b; // an earlier mutation already broke the JSON; nothing structured left to mutate
  }
  if (!Number.isInteger(jsonLength) || jsonLength < 0 || jsonLength > b.body.length) return b;
  const nodes: (Record<string, unknown> | unknown[])[] = [];
  const collect = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    nodes.push(node as Record<string, unknown>);
    // Tensor data arrays are long and uninteresting; keep the walk to the structure.
    for (const child of Object.values(node)) if (nodes.length < 200) collect(child);
  };
  collect(header);
  if (nodes.length === 0) return b;
  const target = nodes[pick % nodes.length] as Record<string, unknown>;
  const k = Array.isArray(target) ? String(Number(key) || 0) : key;
  if (remove) delete target[k];
  else Object.defineProperty(target, k, { value, enumerable: true, writable: true, configurable: true });
  const json = new TextEncoder().encode(JSON.stringify(header));
  const body = new Uint8Array(json.length + b.body.length - jsonLength);
  body.set(json);
  body.set(b.body.subarray(jsonLength), json.length);
  return { body, headerLength: b.headerLength === null ? null : String(json.length) };
}

type Mutation = (b: Body) => Body;
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant<Mutation>((b) => b),
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map(
    (flips): Mutation =>
      (b) => {
        const body = b.body.slice();
        for (const [at, v] of flips) if (body.length > 0) body[at % body.length] = v;
        return { ...b, body };
      },
  ),
  fc.nat().map((cut): Mutation => (b) => ({ ...b, body: b.body.subarray(0, cut % (b.body.length + 1)) })),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map(
    (extra): Mutation =>
      (b) => {
        const body = new Uint8Array(b.body.length + extra.length);
        body.set(b.body);
        body.set(extra, b.body.length);
        return { ...b, body };
      },
  ),
  fc.oneof(
    fc.integer({ min: -3, max: 3 }).map((d): Mutation => (b) => ({ ...b, headerLength: String(Number(b.headerLength ?? b.body.length) + d) })),
    fc.constantFrom<string | null>(null, '0', '', '-1', 'abc', '4294967296', '1e2', ' 7 ').map((h): Mutation => (b) => ({ ...b, headerLength: h })),
  ),
  fc.record({ pick: fc.nat(), key: interestingKeys, value: nastyValue, remove: fc.boolean() }).map(
    ({ pick, key, value, remove }): Mutation =>
      (b) => mutateJson(b, pick, key, value, remove),
  ),
);

const rawModelArb: fc.Arbitrary<RawInputModel | undefined> = fc.option(
  fc.record({
    maxBatchSize: fc.integer({ min: 0, max: 4 }),
    inputs: fc.array(
      fc.record({
        name: fc.constant('raw'),
        datatype: fc.constantFrom(...DATATYPES),
        dims: fc.array(fc.integer({ min: -1, max: 3 }), { maxLength: 3 }),
      }),
      { maxLength: 2 },
    ),
  }),
  { nil: undefined },
);

function decodeChecked(b: Body, rawInputModel?: RawInputModel): 'ok' | 'rejected' {
  try {
    const { request } = decodeInferRequestBody({
      body: b.body,
      headerLength: b.headerLength,
      modelName: 'm',
      modelVersion: '1',
      maxJsonInputBytes: 1 << 20,
      rawInputModel,
    });
    for (const t of request.inputs) validateTensorData(t);
    return 'ok';
  } catch (err) {
    if (!(err instanceof TesseraError)) throw new Error(`decoder threw a non-TesseraError: ${String(err)}`, { cause: err });
    if (err.code === 'INTERNAL') throw new Error(`decoder blamed itself: ${err.message}`, { cause: err });
    expect(err.message.length).toBeGreaterThan(0);
    return 'rejected';
  }
}

describe('decodeInferRequestBody under fuzzing', () => {
  it('decodes every valid generated body back to its request', () => {
    fc.assert(
      fc.property(requestArb, ({ request, binary }) => {
        const b = encode(request, binary);
        const { request: decoded } = decodeInferRequestBody({ body: b.body, headerLength: b.headerLength, modelName: 'm', modelVersion: '1' });
        expect(decoded).toEqual(request);
      }),
      { numRuns: 500 },
    );
  });

  it('answers 10,000 mutated bodies with a request or a client-blaming TesseraError', () => {
    const outcomes = { ok: 0, rejected: 0 };
    fc.assert(
      fc.property(requestArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), rawModelArb, ({ request, binary }, mutations, raw) => {
        const mutated = mutations.reduce((b, m) => m(b), encode(request, binary));
        outcomes[decodeChecked(mutated, raw)]++;
      }),
      { numRuns: 10_000 },
    );
    // Both outcomes must actually occur, or the fuzzer is not exploring.
    expect(outcomes.ok).toBeGreaterThan(100);
    expect(outcomes.rejected).toBeGreaterThan(1000);
  });

  it('answers arbitrary bytes the same way', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.option(fc.oneof(fc.nat({ max: 70 }).map(String), fc.string({ maxLength: 4 })), { nil: null }),
        rawModelArb,
        (body, headerLength, raw) => {
          decodeChecked({ body, headerLength }, raw);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
