/**
 * Decoupled models (many responses per request) through the gateway's gRPC front door: a real
 * redis-server, real node processes serving `repeat_int32` and `token_stream`, the gateway, and a
 * grpc-js client built from our protos calling ModelStreamInfer as Triton's clients do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../shared/test/support/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import {
  finalFlag,
  firstText,
  openStream,
  rawOutput,
  repeatProto,
  repeatValue,
  startDecoupledNode,
  startDecoupledStack,
  tokenProto,
  type DecoupledNode,
  type DecoupledStack,
} from './decoupled-client.js';

const KEY = 'tsk_grpc-decoupled-a';
const PROMPT = 'the quick brown fox jumps over the lazy dog';
/** Long enough that a test can act while it is being generated (50 ms per token). */
const LONG_PROMPT = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');

describe.each([{ port: 'grpc-js', rawH2: false }, { port: 'the raw HTTP/2 front (grpcRawH2)', rawH2: true }])('decoupled models through the gateway gRPC front door on $port (redis + nodes + gateway)', ({ rawH2 }) => {
  let dir: string;
  let stack: DecoupledStack;
  const cancelLog = (): string => join(dir, 'cancel.log');
  const cancelLines = (): string[] => (existsSync(cancelLog()) ? readFileSync(cancelLog(), 'utf8').trim().split('\n').filter(Boolean) : []);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-gw-decoupled-test-'));
    stack = await startDecoupledStack(
      {
        // A queue timeout shorter than the 2 s generation below: it bounds the wait in the queue, not the stream.
        grpcRawH2: rawH2,
        tiers: { standard: { queueTimeoutMs: 1000 } },
        tenants: [{ id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY) }] }],
      },
      { tokenDelayMs: 50, cancelLog: cancelLog() },
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await rm(dir, { recursive: true, force: true });
  });

  // First: once generations longer than the queue timeout ran, the admission estimate refuses a unary call (UNAVAILABLE) before the node could.
  it("unary ModelInfer of a decoupled model keeps Triton's refusal", async () => {
    const result = await stack.client.unary('modelInfer', repeatProto('u1', [1]), { key: KEY });
    expect(result.error?.code).toBe(status.UNIMPLEMENTED);
    expect(result.error?.details).toMatch(/ModelInfer RPC doesn't support models with decoupled transaction policy/);
  });

  it('relays every repeat_int32 response in order, and not the empty final response the client did not ask for', async () => {
    const stream = openStream(stack.client, KEY);
    stream.call.write(repeatProto('r1', [4, 5, 6], [5, 5, 5]));
    stream.call.end();
    expect(await stream.ended).toBeUndefined();
    expect(stream.responses.map((r) => r.errorMessage)).toEqual(['', '', '']);
    expect(stream.responses.map(repeatValue)).toEqual([4, 5, 6]);
    expect(stream.responses.map((r) => r.inferResponse?.id)).toEqual(['r1', 'r1', 'r1']);
    expect(stream.responses.map((r) => r.inferResponse?.modelName)).toEqual(['repeat_int32', 'repeat_int32', 'repeat_int32']);
    expect(stream.responses.map(finalFlag)).toEqual([false, false, false]);
    const idx = stream.responses.map((r) => Array.from(new Uint32Array(rawOutput(r.inferResponse, 'IDX')!.slice().buffer)));
    expect(idx).toEqual([[0], [1], [2]]);
  });

  it('with triton_enable_empty_final_response, ends each request with the empty final response', async () => {
    const stream = openStream(stack.client, KEY);
    stream.call.write(repeatProto('r2', [7, 8], [], { emptyFinal: true }));
    stream.call.write(repeatProto('r3', [9], [], { emptyFinal: false }));
    stream.call.end();
    expect(await stream.ended).toBeUndefined();
    const of = (id: string) => stream.responses.filter((r) => r.inferResponse?.id === id);
    expect(of('r2').map(repeatValue)).toEqual([7, 8, undefined]);
    expect(of('r2').map(finalFlag)).toEqual([false, false, true]);
    expect(of('r2')[2]!.inferResponse?.outputs).toEqual([]);
    expect(of('r3').map(repeatValue)).toEqual([9]);
    expect(of('r3').map(finalFlag)).toEqual([false]);
  });

  it('streams token_stream token by token, the last one flagged final', async () => {
    const stream = openStream(stack.client, KEY);
    stream.call.write(tokenProto('t1', PROMPT));
    stream.call.end();
    expect(await stream.ended).toBeUndefined();
    const tokens = stream.responses.map((r) => firstText(rawOutput(r.inferResponse, 'text_output')));
    expect(tokens.length).toBe(PROMPT.split(' ').length);
    expect(tokens.join('')).toBe(PROMPT);
    expect(stream.responses.map(finalFlag)).toEqual(tokens.map((_, i) => i === tokens.length - 1));
  });

  it('writes responses as they come: two requests interleave on one stream, none waits for the other to complete', async () => {
    const stream = openStream(stack.client, KEY);
    // `slow` sends its first value at once and its second 2 s later; `quick` completes meanwhile.
    stream.call.write(repeatProto('slow', [1, 2], [0, 2000]));
    stream.call.write(repeatProto('quick', [10, 20], [0, 0]));
    stream.call.end();
    await stream.received(3);
    const early = stream.responses.map((r) => `${r.inferResponse?.id}:${repeatValue(r)}`);
    expect(early).toContain('slow:1');
    expect(early).toEqual(expect.arrayContaining(['quick:10', 'quick:20']));
    expect(early).not.toContain('slow:2');
    expect(await stream.ended).toBeUndefined();
    expect(stream.responses.map((r) => `${r.inferResponse?.id}:${repeatValue(r)}`).at(-1)).toBe('slow:2');
  });

  it("streams one generation after another, each longer than the tier's queue timeout (which bounds only the wait)", async () => {
    for (const id of ['long-1', 'long-2', 'long-3']) {
      const stream = openStream(stack.client, KEY);
      stream.call.write(repeatProto(id, [1, 2], [0, 1500]));
      stream.call.end();
      expect(await stream.ended).toBeUndefined();
      expect(stream.responses.map((r) => `${r.inferResponse?.id}:${repeatValue(r)}:${r.errorMessage}`)).toEqual([`${id}:1:`, `${id}:2:`]);
    }
  });

  it("a client's cancellation reaches the model at once (its AbortSignal, seen in token_stream's cancel log)", async () => {
    const before = cancelLines().length;
    const stream = openStream(stack.client, KEY);
    stream.call.write(tokenProto('c1', LONG_PROMPT));
    await stream.received(2);
    stream.call.cancel();
    expect((await stream.ended)?.code).toBe(status.CANCELLED);
    await waitFor(() => cancelLines().length > before, { what: 'the model to log its cancellation', timeoutMs: 20_000 });
    const sent = Number(cancelLines()[before]!.split(' ')[1]);
    // It stopped long before the 400 tokens of the prompt.
    expect(sent).toBeGreaterThanOrEqual(2);
    expect(sent).toBeLessThan(400);
  });

  it("a passing deadline (grpc-timeout) cancels the upstream call too", async () => {
    const before = cancelLines().length;
    const stream = openStream(stack.client, KEY, { deadlineMs: 1500 });
    stream.call.write(tokenProto('d1', LONG_PROMPT));
    expect((await stream.ended)?.code).toBe(status.DEADLINE_EXCEEDED);
    await waitFor(() => cancelLines().length > before, { what: 'the model to log its cancellation', timeoutMs: 20_000 });
    expect(Number(cancelLines()[before]!.split(' ')[1])).toBeLessThan(400);
  });

  describe('a node killed mid-stream', () => {
    let doomed: DecoupledNode;

    beforeAll(async () => {
      // A second node, the only one serving `doomed_stream` (token_stream renamed).
      doomed = await startDecoupledNode(stack.redis.url, 'doomed-node', { tokenDelayMs: 50, rename: { token_stream: 'doomed_stream' } });
      await waitFor(() => stack.gateway.directory.candidates('doomed_stream').length === 1, { what: 'the doomed node in the fleet view', timeoutMs: 30_000 });
    }, 60_000);

    afterAll(async () => {
      await doomed?.stop();
    });

    it('ends that request with an error in the stream, and the stream goes on serving the others', async () => {
      const stream = openStream(stack.client, KEY);
      stream.call.write(tokenProto('k1', LONG_PROMPT, 'doomed_stream'));
      await stream.received(2);
      doomed.node.process.kill('SIGKILL');
      await waitFor(() => stream.responses.some((r) => r.errorMessage !== ''), { what: 'the in-stream error', timeoutMs: 20_000 });
      const failed = stream.responses.find((r) => r.errorMessage !== '')!;
      expect(failed.inferResponse?.id).toBe('k1');
      expect(failed.inferResponse?.modelName).toBe('doomed_stream');
      // The same stream still serves requests on the surviving node.
      const seen = stream.responses.length;
      stream.call.write(repeatProto('after', [3, 4]));
      stream.call.end();
      expect(await stream.ended).toBeUndefined();
      expect(stream.responses.slice(seen).map((r) => `${r.inferResponse?.id}:${repeatValue(r)}:${r.errorMessage}`)).toEqual(['after:3:', 'after:4:']);
    }, 60_000);
  });
});
