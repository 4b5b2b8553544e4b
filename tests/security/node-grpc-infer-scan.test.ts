/**
 * Issue 18: the node's gRPC ModelInfer fast path reads plain requests in one pass (shared/src/grpc/
 * plain-infer-request.ts, names remembered by their bytes; anything it declines goes to the scan,
 * infer-request-scan.ts, and the codec's checks) and keeps raw_input_contents as views of the received bytes. Hostile bytes
 * sent to a real `tessera-node` process must get the caller's statuses, never INTERNAL, a crash or a
 * hang: lengths that lie (a raw entry, an input message or a packed shape longer than what follows),
 * a dimension past 2^53, a shape promising more bytes than sent. And the views must not leak between
 * calls: concurrent requests with different data each get their own data back, doubled.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequestFramed, inferResponseFromProto, decodeMessage } from '../../shared/src/grpc/index.js';
import { ModelInferResponseSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { securityWorkspace, startNodeProcess, type NodeProcess, type Workspace } from './support/node-process.js';

let workspace: Workspace;
let node: NodeProcess;
let session: ClientHttp2Session;

beforeAll(async () => {
  workspace = await securityWorkspace('tessera-sec-scan-');
  node = await startNodeProcess(workspace.repo);
  session = connect(`http://${node.grpcTarget}`);
  session.on('error', () => undefined);
}, 120_000);

afterAll(async () => {
  session?.close();
  await node?.stop();
  await workspace?.remove();
});

interface Answer {
  readonly status: string;
  readonly message: string;
  readonly body: Buffer;
}

function call(message: Uint8Array): Promise<Answer> {
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelInfer', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    let headers: Record<string, unknown> = {};
    stream.on('response', (h) => (headers = h));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = (trailers: Record<string, unknown>): void => {
      const all = { ...headers, ...trailers };
      resolve({ status: String(all['grpc-status']), message: decodeURIComponent(String(all['grpc-message'] ?? '')), body: Buffer.concat(chunks) });
    };
    stream.on('trailers', done);
    stream.on('end', () => done({}));
    stream.on('error', reject);
    stream.end(framed);
  });
}

/** A plain request for the `good` model (FP32 [1, n]) as the gateway's encoder writes it. */
function plainRequest(values: readonly number[]): Buffer {
  const data = new Uint8Array(new Float32Array(values).buffer);
  const framed = encodeInferRequestFramed({ id: '', modelName: 'good', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data }], parameters: {} }, 1 << 30);
  return Buffer.concat(framed.chunks).subarray(5);
}

const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
};
const field = (number: number, payload: readonly number[]): number[] => [...varint((number << 3) | 2), ...varint(payload.length), ...payload];
const ascii = (text: string): number[] => [...Buffer.from(text, 'ascii')];
const model = field(1, ascii('good'));
const input = (shape: readonly number[]): number[] =>
  field(5, [...field(1, ascii('INPUT0')), ...field(2, ascii('FP32')), ...field(3, shape.flatMap(varint))]);

describe('gRPC ModelInfer scan: hostile bytes', () => {
  it('a raw_input_contents entry longer than what follows: INVALID_ARGUMENT', async () => {
    const bytes = Uint8Array.from([...model, ...input([1, 2]), ...varint((7 << 3) | 2), ...varint(1_000_000), 0, 0, 0, 0]);
    const answer = await call(bytes);
    expect(answer.status).toBe('3');
    expect(answer.message).toMatch(/malformed inference.ModelInferRequest/);
  });

  it('an input message whose length passes the end of the request: INVALID_ARGUMENT', async () => {
    const inner = [...field(1, ascii('INPUT0')), ...field(2, ascii('FP32'))];
    const bytes = Uint8Array.from([...model, ...varint((5 << 3) | 2), ...varint(inner.length + 40), ...inner]);
    expect((await call(bytes)).status).toBe('3');
  });

  it('a packed shape whose length passes the end of its input: INVALID_ARGUMENT', async () => {
    const inner = [...field(1, ascii('INPUT0')), ...varint((3 << 3) | 2), ...varint(30), 1, 2];
    const bytes = Uint8Array.from([...model, ...field(5, inner)]);
    expect((await call(bytes)).status).toBe('3');
  });

  it('a dimension past 2^53: INVALID_ARGUMENT naming it', async () => {
    const bytes = Uint8Array.from([...model, ...input([1, 2 ** 60]), ...field(7, new Array(8).fill(0))]);
    const answer = await call(bytes);
    expect(answer.status).toBe('3');
    expect(answer.message).toMatch(/invalid dimension 1152921504606846976/);
  });

  it('a shape promising more bytes than the raw entry holds: INVALID_ARGUMENT', async () => {
    const bytes = Uint8Array.from([...model, ...input([1, 1000]), ...field(7, new Array(8).fill(0))]);
    const answer = await call(bytes);
    expect(answer.status).toBe('3');
    expect(answer.message).toMatch(/unexpected total byte size 8/);
  });

  it('an input named twice in an otherwise plain request: INVALID_ARGUMENT naming it (the one-pass reader declines it)', async () => {
    const raw = field(7, new Array(8).fill(0));
    const bytes = Uint8Array.from([...model, ...input([1, 2]), ...input([1, 2]), ...raw, ...raw]);
    const answer = await call(bytes);
    expect(answer.status).toBe('3');
    expect(answer.message).toBe("input 'INPUT0' is given more than once");
  });

  it('a model name one byte off the last one read is read as sent, not as the remembered one', async () => {
    expect((await call(plainRequest([1, 2]))).status).toBe('0');
    const data = new Uint8Array(new Float32Array([1, 2]).buffer);
    const framed = encodeInferRequestFramed({ id: '', modelName: 'gooe', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data }], parameters: {} }, 1 << 30);
    const answer = await call(Buffer.concat(framed.chunks).subarray(5));
    expect(answer.status).not.toBe('0');
    expect(answer.message).toMatch(/'gooe'/);
  });

  it('the node still answers a plain request after all of that', async () => {
    const answer = await call(plainRequest([1, 2]));
    expect(answer.status).toBe('0');
  });
});

describe('gRPC ModelInfer scan: views of the received bytes', () => {
  it('concurrent requests with different data each get their own data back, doubled', async () => {
    const inputs = Array.from({ length: 24 }, (_, i) => Array.from({ length: 256 }, (_, k) => i * 1000 + k));
    const answers = await Promise.all(inputs.map((values) => call(plainRequest(values))));
    answers.forEach((answer, i) => {
      expect(answer.status).toBe('0');
      const response = inferResponseFromProto(decodeMessage(ModelInferResponseSchema, answer.body.subarray(5)));
      const out = response.outputs[0]!;
      const got = Array.from(new Float32Array(out.data.buffer.slice(out.data.byteOffset, out.data.byteOffset + out.data.byteLength)));
      expect(got).toEqual(inputs[i]!.map((v) => v * 2));
    });
  }, 60_000);
});
