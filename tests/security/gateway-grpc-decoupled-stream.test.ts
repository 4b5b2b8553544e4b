/**
 * Decoupled model streams through the gateway's gRPC front door are as guarded as any request: real
 * redis-server, a real node serving `repeat_int32`, `token_stream` and `flood` (a 1 MiB response
 * every 5 ms), the gateway with its gRPC listener. No key or a bad one ends the stream
 * UNAUTHENTICATED; another tenant's model is refused; the tier's rate limit applies per request; a
 * client may not set Triton's own response flags; a client that stops reading is bounded by the
 * stream's unsent budget (or the node's, when the gateway is the slow reader) and its upstream call is
 * cancelled (the model sees it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, type ModelStreamInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { MAX_UNSENT_STREAM_BYTES } from '../../shared/src/grpc/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { openStream, repeatProto, repeatValue, startDecoupledStack, tokenProto, type DecoupledStack } from '../../gateway/test/grpc-front/decoupled-client.js';
import { param } from '../../gateway/test/grpc-front/front-client.js';

const KEYS = { a: 'tsk_sec-decoupled-a', simpleOnly: 'tsk_sec-decoupled-simple', limited: 'tsk_sec-decoupled-limited' };
const MIB = 1024 * 1024;

describe.each([{ port: 'grpc-js', rawH2: false }, { port: 'the raw HTTP/2 front (grpcRawH2)', rawH2: true }])('decoupled streams through the gateway gRPC front door on $port, hostile callers', ({ rawH2 }) => {
  let dir: string;
  let stack: DecoupledStack;
  const marker = (): string => join(dir, 'flood.json');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-sec-decoupled-'));
    stack = await startDecoupledStack(
      {
        grpcRawH2: rawH2,
        tiers: {
          standard: { queueTimeoutMs: 30_000 },
          free: { queueTimeoutMs: 30_000, rateLimits: { requestsPerSecond: 0.01, burst: 1 } },
        },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEYS.a) }] },
          { id: 'ts', tier: 'standard', allowedModels: ['simple'], keys: [{ id: 'ts1', hash: await sha256Hex(KEYS.simpleOnly) }] },
          { id: 'tl', tier: 'free', keys: [{ id: 'tl1', hash: await sha256Hex(KEYS.limited) }] },
        ],
      },
      { floodMarker: marker() },
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends a stream without a key, or with a bad one, UNAUTHENTICATED, before any response', async () => {
    for (const key of [undefined, 'tsk_not-a-key']) {
      const stream = openStream(stack.client, key);
      stream.call.write(repeatProto('x', [1, 2, 3]));
      stream.call.end();
      const error = await stream.ended;
      expect(error?.code, String(key)).toBe(status.UNAUTHENTICATED);
      expect(stream.responses.map(repeatValue).filter((v) => v !== undefined)).toEqual([]);
    }
  });

  it("refuses another tenant's model: in-band by default, PERMISSION_DENIED with triton_grpc_error", async () => {
    const inBand = openStream(stack.client, KEYS.simpleOnly);
    inBand.call.write(tokenProto('p1', 'secret prompt'));
    inBand.call.end();
    expect(await inBand.ended).toBeUndefined();
    expect(inBand.responses).toHaveLength(1);
    expect(inBand.responses[0]!.errorMessage).toMatch(/token_stream/);
    expect(inBand.responses[0]!.inferResponse?.outputs).toEqual([]);

    const strict = openStream(stack.client, KEYS.simpleOnly, { metadata: { triton_grpc_error: 'true' } });
    strict.call.write(repeatProto('p2', [1]));
    strict.call.end();
    expect((await strict.ended)?.code).toBe(status.PERMISSION_DENIED);
    expect(strict.responses).toEqual([]);
  });

  it("applies the tier's rate limit to each streamed request", async () => {
    const stream = openStream(stack.client, KEYS.limited);
    stream.call.write(repeatProto('l1', [1]));
    stream.call.write(repeatProto('l2', [2]));
    stream.call.end();
    expect(await stream.ended).toBeUndefined();
    const byId = (id: string): ModelStreamInferResponse[] => stream.responses.filter((r) => r.inferResponse?.id === id);
    // One passes the burst of 1; the other is refused in-band (which one depends on which the limiter saw first).
    const outcomes = ['l1', 'l2'].map((id) => byId(id).map((r) => (r.errorMessage === '' ? `value ${repeatValue(r)}` : 'refused')).join());
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(1);
    expect(outcomes.filter((o) => o.startsWith('value'))).toHaveLength(1);
    expect(stream.responses.find((r) => r.errorMessage !== '')?.errorMessage).toMatch(/rate limit/i);
  });

  it("refuses a client's own triton_* parameters other than the empty-final opt-in", async () => {
    const stream = openStream(stack.client, KEYS.a);
    const forged = create(ModelInferRequestSchema, { ...repeatProto('f1', [1]), parameters: { triton_final_response: param(true) } });
    stream.call.write(forged);
    stream.call.end();
    expect(await stream.ended).toBeUndefined();
    expect(stream.responses).toHaveLength(1);
    expect(stream.responses[0]!.errorMessage).toMatch(/triton_final_response/);
  });

  it('bounds a client that never reads: RESOURCE_EXHAUSTED from the gateway or the node, and the model sees its request cancelled', async () => {
    const stream = openStream(stack.client, KEYS.a);
    stream.call.pause();
    stream.call.write(
      create(ModelInferRequestSchema, {
        id: 'flood-1',
        modelName: 'flood',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n], contents: { fp32Contents: [1] } }],
      }),
    );
    await waitFor(() => existsSync(marker()), { what: 'the flood model to stop', timeoutMs: 60_000 });
    const result = JSON.parse(readFileSync(marker(), 'utf8')) as { sent: number; aborted: boolean };
    expect(result.aborted, `the model sent ${result.sent} MiB`).toBe(true);
    expect(result.sent).toBeLessThan(256);
    stream.call.resume();
    // Half-close: a stream still open after an in-band error ends now instead of waiting for more requests.
    stream.call.end();
    const error = await stream.ended;
    const inBand = stream.responses.map((r) => r.errorMessage).filter((m) => m !== '');
    // Two budgets bound this stream: the gateway's towards its client, and the node's towards the gateway.
    // Whichever fills first ends the flood: the gateway's (it read the node faster than the client read it)
    // ends the stream RESOURCE_EXHAUSTED; the node's (a gateway starved of CPU read it slower than the model
    // sent) fails the request in-band. Either way the client is told why, and nothing grew without bound.
    if (error === undefined) {
      expect(inBand, 'the request fails in-band when the node ends it').toHaveLength(1);
      expect(inBand[0]).toMatch(/the client is not reading the stream/);
    } else {
      expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(error.details).toMatch(/the client is not reading the stream/);
      expect(inBand).toEqual([]);
    }
    expect(stream.responses.length * MIB).toBeLessThan(MAX_UNSENT_STREAM_BYTES + 64 * MIB);
  }, 90_000);
});
