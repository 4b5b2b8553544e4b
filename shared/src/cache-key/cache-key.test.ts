import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectTesseraError } from '../tensors/test-helpers.js';
import { DATATYPES, type InferRequest, type Parameters, type RequestedOutput, type Tensor } from '../tensors/index.js';
import { computeCacheKey } from './cache-key.js';
import { cacheNamespace, type CacheKeyInput, type CacheNamespace } from './cache-key-input.js';
import { CACHE_KEY_IGNORED_PARAMETERS, isCacheable, uncacheableReason } from './cacheable.js';

// ---- generators -------------------------------------------------------------------------------

const name = fc.string({ minLength: 1, maxLength: 8 });
const tensor: fc.Arbitrary<Tensor> = fc.record({
  name,
  datatype: fc.constantFrom(...DATATYPES),
  shape: fc.array(fc.integer({ min: 0, max: 16 }), { maxLength: 3 }),
  data: fc.uint8Array({ maxLength: 24 }),
});
const output: fc.Arbitrary<RequestedOutput> = fc.record(
  { name, binaryData: fc.boolean(), classification: fc.integer({ min: 1, max: 5 }) },
  { requiredKeys: ['name'] },
);
const parameterValue = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.bigInt());
const parameters: fc.Arbitrary<Parameters> = fc
  .dictionary(
    name.filter((k) => !k.startsWith('sequence_') && k !== '__proto__'),
    parameterValue,
    { maxKeys: 4 },
  )
  .map((d) => Object.fromEntries(Object.entries(d)));
const namespace: fc.Arbitrary<CacheNamespace> = fc.oneof(fc.constant('shared' as const), fc.record({ tenant: name }));

const keyInput: fc.Arbitrary<CacheKeyInput> = fc.record({
  namespace,
  model: name,
  version: fc.constantFrom('1', '2', '17'),
  request: fc.record({
    id: fc.string({ maxLength: 4 }),
    modelName: name,
    inputs: fc.uniqueArray(tensor, { selector: (t) => t.name, minLength: 1, maxLength: 4 }),
    outputs: fc.option(fc.uniqueArray(output, { selector: (o) => o.name, maxLength: 3 }), { nil: undefined }),
    parameters,
  }) as fc.Arbitrary<InferRequest>,
  binaryOutputDefault: fc.boolean(),
});

function withRequest(input: CacheKeyInput, change: Partial<InferRequest>): CacheKeyInput {
  return { ...input, request: { ...input.request, ...change } };
}

function withInput(input: CacheKeyInput, index: number, change: Partial<Tensor>): CacheKeyInput {
  const inputs = input.request.inputs.map((t, i) => (i === index ? { ...t, ...change } : t));
  return withRequest(input, { inputs });
}

/** Asserts that `mutate` (which must really change a covered field) changes the key. */
function changesKey(mutate: (input: CacheKeyInput, pick: number) => CacheKeyInput | undefined): void {
  fc.assert(
    fc.property(keyInput, fc.nat(), (input, pick) => {
      const mutated = mutate(input, pick);
      fc.pre(mutated !== undefined);
      expect(computeCacheKey(mutated!)).not.toBe(computeCacheKey(input));
    }),
    { numRuns: 300 },
  );
}

// ---- properties -------------------------------------------------------------------------------

describe('computeCacheKey: sensitivity', () => {
  it('changes with the namespace (tenant A vs tenant B vs shared)', () => {
    changesKey((input) =>
      input.namespace === 'shared'
        ? { ...input, namespace: { tenant: 'shared' } } // a tenant literally named "shared" is not the shared scope
        : { ...input, namespace: { tenant: `${input.namespace.tenant}x` } },
    );
    changesKey((input) => (input.namespace === 'shared' ? undefined : { ...input, namespace: 'shared' }));
  });

  it('changes with the model and the resolved version', () => {
    changesKey((input) => ({ ...input, model: `${input.model}x` }));
    changesKey((input) => ({ ...input, version: `${input.version}0` }));
  });

  it("changes with any input's name, datatype, shape or bytes", () => {
    changesKey((input, pick) => {
      const i = pick % input.request.inputs.length;
      const renamed = `${input.request.inputs[i]!.name}\u0000`;
      if (input.request.inputs.some((t) => t.name === renamed)) return undefined;
      return withInput(input, i, { name: renamed });
    });
    changesKey((input, pick) => {
      const i = pick % input.request.inputs.length;
      const current = input.request.inputs[i]!.datatype;
      return withInput(input, i, { datatype: current === 'FP32' ? 'INT32' : 'FP32' });
    });
    changesKey((input, pick) => {
      const i = pick % input.request.inputs.length;
      return withInput(input, i, { shape: [...input.request.inputs[i]!.shape, 1] });
    });
    changesKey((input, pick) => {
      const i = pick % input.request.inputs.length;
      const data = input.request.inputs[i]!.data;
      if (data.length === 0) return withInput(input, i, { data: new Uint8Array([0]) });
      const flipped = data.slice();
      const at = pick % data.length;
      flipped[at] = flipped[at]! ^ (1 << (pick % 8));
      return withInput(input, i, { data: flipped });
    });
    changesKey((input) => {
      // moving a byte from one input to the next (same total bytes) is a different request
      if (input.request.inputs.length < 2) return undefined;
      const sorted = [...input.request.inputs].sort((a, b) => (a.name < b.name ? -1 : 1));
      const [a, b] = [sorted[0]!, sorted[1]!];
      if (a.data.length === 0) return undefined;
      const moved = [
        { ...a, data: a.data.subarray(0, a.data.length - 1) },
        { ...b, data: new Uint8Array([...a.data.subarray(a.data.length - 1), ...b.data]) },
        ...sorted.slice(2),
      ];
      return withRequest(input, { inputs: moved });
    });
  });

  it('changes with the requested outputs, their order and their binary flags', () => {
    changesKey((input) => withRequest(input, { outputs: [...(input.request.outputs ?? []), { name: '\u0001extra' }] }));
    changesKey((input, pick) => {
      const outputs = input.request.outputs ?? [];
      if (outputs.length === 0) return undefined;
      const i = pick % outputs.length;
      const o = outputs[i]!;
      const flipped = { ...o, binaryData: !(o.binaryData ?? input.binaryOutputDefault) };
      return withRequest(input, { outputs: outputs.map((x, j) => (j === i ? flipped : x)) });
    });
    changesKey((input, pick) => {
      const outputs = input.request.outputs ?? [];
      if (outputs.length === 0) return undefined;
      const i = pick % outputs.length;
      const o = outputs[i]!;
      return withRequest(input, {
        outputs: outputs.map((x, j) => (j === i ? { ...o, classification: (o.classification ?? 0) + 1 } : x)),
      });
    });
    changesKey((input) => {
      const outputs = input.request.outputs ?? [];
      if (outputs.length < 2) return undefined;
      return withRequest(input, { outputs: [...outputs].reverse() });
    });
    // The request-level default matters exactly when some output's flag is not explicit.
    changesKey((input) => {
      const outputs = input.request.outputs ?? [];
      if (outputs.length > 0 && outputs.every((o) => o.binaryData !== undefined)) return undefined;
      return { ...input, binaryOutputDefault: !input.binaryOutputDefault };
    });
  });

  it('changes with any result-relevant parameter: added, removed, new value or new type', () => {
    changesKey((input) => withRequest(input, { parameters: { ...input.request.parameters, '\u0002added': 1 } }));
    changesKey((input) => {
      const [first] = Object.keys(input.request.parameters);
      if (first === undefined) return undefined;
      const { [first]: _removed, ...rest } = input.request.parameters;
      return withRequest(input, { parameters: rest });
    });
    changesKey((input) => {
      const [first] = Object.keys(input.request.parameters);
      if (first === undefined) return undefined;
      const value = input.request.parameters[first]!;
      const changed = typeof value === 'string' ? `${value}x` : typeof value === 'boolean' ? !value : String(value);
      return withRequest(input, { parameters: { ...input.request.parameters, [first]: changed } });
    });
  });
});

describe('computeCacheKey: invariance', () => {
  it('ignores the order of inputs, the request id, the requested version and ignored parameters', () => {
    fc.assert(
      fc.property(
        keyInput,
        fc.func(fc.integer()),
        fc.string(),
        fc.constantFrom(...CACHE_KEY_IGNORED_PARAMETERS),
        fc.oneof(fc.integer(), fc.boolean()),
        (input, order, id, ignored, value) => {
          const shuffled = [...input.request.inputs].sort((a, b) => order(a.name) - order(b.name));
          const variant = withRequest(input, {
            inputs: shuffled,
            id,
            modelVersion: 'anything',
            parameters: { ...input.request.parameters, [ignored]: value },
          });
          expect(computeCacheKey(variant)).toBe(computeCacheKey(input));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('treats an empty output list like no list, and an explicit flag equal to the default like none', () => {
    fc.assert(
      fc.property(keyInput, (input) => {
        const none = withRequest(input, { outputs: undefined });
        expect(computeCacheKey(withRequest(input, { outputs: [] }))).toBe(computeCacheKey(none));
        const outputs = input.request.outputs ?? [];
        const explicit = outputs.map((o) => ({ ...o, binaryData: o.binaryData ?? input.binaryOutputDefault }));
        expect(computeCacheKey(withRequest(input, { outputs: explicit }))).toBe(computeCacheKey(input));
      }),
    );
  });

  it('is deterministic and has the documented shape', () => {
    fc.assert(
      fc.property(keyInput, (input) => {
        const key = computeCacheKey(input);
        expect(computeCacheKey(input)).toBe(key);
        // exactly one hash tag: the digest, and it is the first brace of the key
        expect(key).toMatch(/^tessera:cache:(shared|tenant:[^:{}*?[\]\\\s]+):[^:{}*?[\]\\\s]+:\d+:\{[0-9a-f]{64}\}$/);
      }),
    );
  });
});

describe('tenant isolation', () => {
  it("never gives tenant B tenant A's key unless the model is shared", () => {
    fc.assert(
      fc.property(keyInput, name, name, (input, a, b) => {
        fc.pre(a !== b);
        const keyA = computeCacheKey({ ...input, namespace: cacheNamespace(a, false) });
        const keyB = computeCacheKey({ ...input, namespace: cacheNamespace(b, false) });
        expect(keyA).not.toBe(keyB);
        expect(keyA).not.toBe(computeCacheKey({ ...input, namespace: 'shared' }));
        const sharedA = computeCacheKey({ ...input, namespace: cacheNamespace(a, true) });
        expect(sharedA).toBe(computeCacheKey({ ...input, namespace: cacheNamespace(b, true) }));
      }),
    );
  });

  it('keeps names with separators, braces and globs inside their own segment', () => {
    const base: CacheKeyInput = {
      namespace: { tenant: 'a:b' },
      model: 'm',
      version: '1',
      request: { id: '', modelName: 'm', inputs: [], parameters: {} },
      binaryOutputDefault: false,
    };
    const key = computeCacheKey(base);
    expect(key.startsWith('tessera:cache:tenant:a%3Ab:m:1:{')).toBe(true);
    const tricky = computeCacheKey({ ...base, namespace: { tenant: '{x}*?' }, model: 'a b' });
    expect(tricky.startsWith('tessera:cache:tenant:%7Bx%7D%2A%3F:a%20b:1:{')).toBe(true);
    expect(computeCacheKey({ ...base, prefix: 'staging:' }).startsWith('staging:cache:')).toBe(true);
  });
});

describe('cacheability', () => {
  const request: InferRequest = { id: '', modelName: 'm', inputs: [], parameters: { priority: 1, custom: 'x' } };

  it('refuses sequence requests, with the parameter named', () => {
    expect(isCacheable(request)).toBe(true);
    for (const parameter of ['sequence_id', 'sequence_start', 'sequence_end']) {
      const sequence = { ...request, parameters: { ...request.parameters, [parameter]: 0 } };
      expect(isCacheable(sequence)).toBe(false);
      expect(uncacheableReason(sequence)).toContain(parameter);
      expectTesseraError(
        () => computeCacheKey({ namespace: 'shared', model: 'm', version: '1', request: sequence, binaryOutputDefault: false }),
        'INVALID_ARG',
        /sequence requests are not cacheable/,
      );
    }
  });

  it('refuses empty names and bad prefixes with INVALID_ARG', () => {
    const base = { namespace: 'shared' as const, model: 'm', version: '1', request, binaryOutputDefault: false };
    expectTesseraError(() => computeCacheKey({ ...base, model: '' }), 'INVALID_ARG', /model name is empty/);
    expectTesseraError(() => computeCacheKey({ ...base, version: '' }), 'INVALID_ARG', /resolved version/);
    expectTesseraError(() => computeCacheKey({ ...base, namespace: { tenant: '' } }), 'INVALID_ARG', /tenant id/);
    expectTesseraError(() => computeCacheKey({ ...base, prefix: '{x}' }), 'INVALID_ARG', /prefix/);
  });
});

describe('computeCacheKey stability', () => {
  // Keys must not change when the hashing code does (entries in Redis would all miss after a deploy).
  // This value was computed by the first implementation (TextEncoder per field).
  it('gives the recorded key for a fixed request with non-ASCII names and every parameter type', () => {
    const key = computeCacheKey({
      namespace: { tenant: 'acmé' },
      model: 'simple',
      version: '3',
      request: {
        id: 'x',
        modelName: 'simple',
        inputs: [
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 2], data: new Uint8Array([1, 0, 0, 0, 2, 0, 0, 0]) },
          { name: 'ÏNPUT0', datatype: 'BYTES', shape: [1], data: new Uint8Array([3, 0, 0, 0, 0x61, 0x62, 0x63]) },
        ],
        outputs: [{ name: 'OUT😀', binaryData: true, classification: 2 }],
        parameters: { custom: 'välue', big: 12345678901234567890n, flag: true, n: -0.5, priority: 3 },
      },
      binaryOutputDefault: false,
    });
    expect(key).toBe('tessera:cache:tenant:acm%C3%A9:simple:3:{e4ff121d3b4502231534799fee2b75449e88f3d2e1942239c82418359fc8174e}');
  });
});
