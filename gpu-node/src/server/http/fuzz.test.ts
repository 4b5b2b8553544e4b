/**
 * Robustness: garbage methods, paths, headers and bodies must never produce a 500 (that would be our
 * bug) or a hang. 10,000 requests go straight through `app.fetch` (fast), 1,000 more over real HTTP.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let t: TestServer;
beforeAll(async () => {
  // Small limits so oversize paths are exercised too.
  t = await startTestServer({ maxInputSize: 4096, maxBodySize: 16384 });
});
afterAll(() => t.close());

const SEGMENTS = [
  'v2', 'models', 'identity', 'pair', 'nope', 'versions', '1', '007', '-1', 'x', 'infer', 'ready', 'config',
  'stats', 'generate', 'repository', 'index', 'load', 'unload', 'trace', 'setting', 'logging', 'health', 'live',
  'systemsharedmemory', 'cudasharedmemory', 'region', 'status', 'register', 'unregister', '%', '%ZZ', '%2F', '..', '',
];
const KNOWN_PATHS = [
  '/v2', '/v2/health/live', '/v2/models/identity', '/v2/models/identity/versions/1/infer', '/v2/models/pair/infer',
  '/v2/models/identity/infer', '/v2/models/stats', '/v2/repository/index', '/v2/repository/models/m/load',
  '/v2/repository/models/m/unload', '/v2/logging', '/v2/trace/setting', '/v2/systemsharedmemory/region/r/register',
];

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 });

// Mostly real routes, so requests get past routing into the body handling where the risk is.
const pathArb = fc.oneof(
  { arbitrary: fc.constantFrom(...KNOWN_PATHS), weight: 4 },
  fc.array(fc.oneof(fc.constantFrom(...SEGMENTS), printable), { maxLength: 7 }).map((s) => `/${s.join('/')}`),
);

const json = fc.jsonValue({ maxDepth: 2 });

const validInfer = {
  id: 'x',
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
  outputs: [{ name: 'INPUT0_OUT', parameters: { binary_data: true } }],
};

/** A valid request with some members replaced by arbitrary JSON. */
const mutatedInfer = fc
  .record({
    id: fc.oneof(fc.constant('x'), json),
    name: fc.oneof(fc.constantFrom('INPUT0', 'A', 'B'), json),
    datatype: fc.oneof(fc.constantFrom('FP32', 'FP16', 'BYTES', 'INT32', 'BOOL', 'BF16', 'UINT64'), json),
    shape: fc.oneof(fc.constant([1, 4]), fc.array(fc.integer({ min: -3, max: 5 }), { maxLength: 4 }), json),
    data: fc.oneof(fc.constant([1, 2, 3, 4]), fc.array(json, { maxLength: 6 }), json),
    parameters: fc.oneof(fc.constant(undefined), fc.dictionary(printable, json, { maxKeys: 3 })),
    binarySize: fc.option(fc.integer({ min: -2, max: 40 })),
    outputs: fc.oneof(fc.constant(undefined), json, fc.constant(validInfer.outputs)),
  })
  .map((r) => ({
    id: r.id,
    parameters: r.parameters,
    inputs: [
      {
        name: r.name,
        datatype: r.datatype,
        shape: r.shape,
        ...(r.binarySize === null ? { data: r.data } : { parameters: { binary_data_size: r.binarySize } }),
      },
    ],
    outputs: r.outputs,
  }));

const bodyArb: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 200 }),
  json.map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  fc.tuple(mutatedInfer, fc.uint8Array({ maxLength: 40 })).map(([json, tail]) => Buffer.concat([Buffer.from(JSON.stringify(json)), tail])),
  fc.constant(Buffer.from(JSON.stringify(validInfer))),
  fc.constant(gzipSync(Buffer.from(JSON.stringify(validInfer)))),
  fc.constant(gzipSync(Buffer.alloc(100_000))),
  fc.nat({ max: 30_000 }).map((n) => Buffer.alloc(n, 0x7b)),
  fc.constant(Buffer.from('{"parameters":{"config":"{}","file:1/m":"@@@"}}')),
);

const headerArb = fc.record(
  {
    'inference-header-content-length': fc.oneof(fc.nat({ max: 300 }).map(String), fc.constant('0'), printable),
    'content-encoding': fc.oneof(
      { arbitrary: fc.constantFrom('gzip', 'deflate', 'identity'), weight: 4 },
      fc.constantFrom('br', 'gzip, br'),
      printable,
    ),
    'accept-encoding': fc.oneof(fc.constantFrom('gzip', 'deflate;q=0.5, gzip;q=0', '*', 'identity'), printable),
    'content-type': fc.oneof(fc.constantFrom('application/json', 'application/octet-stream'), printable),
  },
  { requiredKeys: [] },
);

const requestArb = fc.record({
  method: fc.oneof(
    { arbitrary: fc.constant('POST'), weight: 6 },
    fc.constantFrom('GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH'),
  ),
  path: pathArb,
  headers: headerArb,
  body: bodyArb,
});

type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

function toInit(r: FuzzRequest): RequestInit {
  const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
  return { method: r.method, headers: r.headers, ...(hasBody ? { body: r.body } : {}) };
}

/** Fails the run when a request takes longer than `ms` (a hang). */
async function withinTime<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('fuzz', () => {
  it('never answers 500 nor hangs through app.fetch (10,000 requests)', async () => {
    let served = 0;
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        let request: Request;
        try {
          request = new Request(`http://127.0.0.1${r.path}`, toInit(r));
        } catch {
          return; // not even a valid fetch Request: nothing a server could receive
        }
        const res = await withinTime(Promise.resolve(t.server.app.fetch(request)), 5000, `${r.method} ${r.path}`);
        await res.arrayBuffer();
        served++;
        expect(res.status, `${r.method} ${r.path} ${JSON.stringify(r.headers)}`).not.toBe(500);
        expect(res.status).toBeGreaterThanOrEqual(200);
      }),
      { numRuns: 10_000 },
    );
    expect(served).toBeGreaterThan(9_000);
    expect(t.errors).toEqual([]);
  });

  it('never answers 500 nor hangs over real HTTP (1,000 requests)', async () => {
    let served = 0;
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        let res: Response;
        try {
          res = await withinTime(fetch(`${t.url}${r.path}`, toInit(r)), 5000, `${r.method} ${r.path}`);
        } catch (error) {
          // fetch refuses some inputs on the client side (invalid URL or header); those never reach us.
          if (error instanceof TypeError) return;
          throw error;
        }
        await res.arrayBuffer().catch(() => undefined);
        served++;
        expect(res.status, `${r.method} ${r.path} ${JSON.stringify(r.headers)}`).not.toBe(500);
      }),
      { numRuns: 1_000 },
    );
    expect(served).toBeGreaterThan(900);
    expect(t.errors).toEqual([]);
  });
});
