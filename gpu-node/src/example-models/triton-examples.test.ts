/**
 * The Triton example models on a real node core (typescript backend, sequence batcher, decoupled sender):
 * each answers what Triton's own example clients check, and refuses what it cannot carry exactly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBytesElements, encodeBytesElements, type InferResponse, type Tensor } from '../../../shared/src/tensors/index.js';
import { createNodeCore, type TesseraNodeCore } from '../server-api/node-core-impl.js';
import { writeExampleRepository } from './example-repository.js';

const MODELS = ['simple_string', 'simple_int8', 'simple_sequence', 'simple_dyna_sequence', 'simple_string_dyna_sequence', 'repeat_int32'];

function tensor(name: string, datatype: string, shape: number[], data: ArrayBufferView): Tensor {
  return { name, datatype, shape, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) } as Tensor;
}

function int32s(t: Tensor | undefined): number[] {
  return Array.from(new Int32Array(t!.data.slice().buffer));
}

describe("Triton's example models", () => {
  let dir: string;
  let core: TesseraNodeCore;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-triton-examples-'));
    await writeExampleRepository(dir, { only: MODELS });
    core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['*'] });
    await core.start();
  }, 60_000);

  afterAll(async () => {
    await core?.shutdown({ timeoutMs: 10_000 });
    await rm(dir, { recursive: true, force: true });
  });

  it('simple_string adds and subtracts decimal strings, and names an element that is not an integer', async () => {
    const a = Array.from({ length: 16 }, (_, i) => String(i));
    const b = Array.from({ length: 16 }, () => '1');
    const bytes = (values: string[]) => encodeBytesElements(values);
    const response = await core.infer({
      id: '',
      modelName: 'simple_string',
      inputs: [tensor('INPUT0', 'BYTES', [1, 16], bytes(a)), tensor('INPUT1', 'BYTES', [1, 16], bytes(b))],
      parameters: {},
    });
    const text = (name: string) => decodeBytesElements(response.outputs.find((o) => o.name === name)!.data).map((e) => new TextDecoder().decode(e));
    expect(text('OUTPUT0')).toEqual(a.map((v) => String(Number(v) + 1)));
    expect(text('OUTPUT1')).toEqual(a.map((v) => String(Number(v) - 1)));
    const bad = [...a.slice(0, 15), 'x1'];
    await expect(
      core.infer({ id: '', modelName: 'simple_string', inputs: [tensor('INPUT0', 'BYTES', [1, 16], bytes(bad)), tensor('INPUT1', 'BYTES', [1, 16], bytes(b))], parameters: {} }),
    ).rejects.toThrow(/INPUT0\[15\] must be a decimal integer/);
  });

  it('simple_int8 adds and subtracts, and refuses a sum INT8 cannot carry instead of wrapping it', async () => {
    const a = Int8Array.from({ length: 16 }, (_, i) => i);
    const ones = new Int8Array(16).fill(1);
    const response = await core.infer({
      id: '',
      modelName: 'simple_int8',
      inputs: [tensor('INPUT0', 'INT8', [1, 16], a), tensor('INPUT1', 'INT8', [1, 16], ones)],
      parameters: {},
    });
    expect(Array.from(new Int8Array(response.outputs[0]!.data.slice().buffer))).toEqual(Array.from(a, (v) => v + 1));
    const big = new Int8Array(16).fill(120);
    const ten = new Int8Array(16).fill(10);
    await expect(
      core.infer({ id: '', modelName: 'simple_int8', inputs: [tensor('INPUT0', 'INT8', [1, 16], big), tensor('INPUT1', 'INT8', [1, 16], ten)], parameters: {} }),
    ).rejects.toThrow(/does not fit INT8/);
  });

  /** One sequence, request by request, as the example clients send it: [start value, ...values]. */
  async function runSequence(model: string, id: number | string, values: number[]): Promise<number[]> {
    const out: number[] = [];
    for (const [i, value] of values.entries()) {
      const response: InferResponse = await core.infer({
        id: `${id}_${i + 1}`,
        modelName: model,
        inputs: [tensor('INPUT', 'INT32', [1, 1], Int32Array.of(value))],
        parameters: { sequence_id: id, sequence_start: i === 0, sequence_end: i === values.length - 1 },
      });
      out.push(int32s(response.outputs[0])[0]!);
    }
    return out;
  }

  const VALUES = [11, 7, 5, 3, 2, 0, 1];
const NEGATED = VALUES.map((v) => 0 - v || 0); // `|| 0`: -0 is not 0 to toEqual

  it('simple_sequence answers its input, plus one on the first request, for numeric and string IDs', async () => {
    expect(await runSequence('simple_sequence', 1000, [0, ...VALUES])).toEqual([1, ...VALUES]);
    expect(await runSequence('simple_sequence', 'c0ffee-uuid', [20, ...NEGATED])).toEqual([21, ...NEGATED]);
  });

  it('simple_dyna_sequence adds the correlation ID on the last request', async () => {
    const out = await runSequence('simple_dyna_sequence', 1001, [100, ...NEGATED]);
    expect(out).toEqual([101, ...NEGATED.slice(0, -1), -1 + 1001]);
  });

  it('simple_string_dyna_sequence keeps a running sum per string ID and adds the ID at the end', async () => {
    const inputs = [20, ...NEGATED];
    const sums = inputs.map((_, i) => inputs.slice(0, i + 1).reduce((s, v) => s + v, 0));
    sums[sums.length - 1]! += 1002;
    expect(await runSequence('simple_string_dyna_sequence', '1002', inputs)).toEqual(sums);
  });

  it('repeat_int32 sends one response per element of IN, none of them final: the final flag comes alone', async () => {
    const responses: { out: number[]; idx: number; final: boolean }[] = [];
    await core.infer(
      {
        id: 'r',
        modelName: 'repeat_int32',
        inputs: [
          tensor('IN', 'INT32', [4], Int32Array.of(100, 101, 102, 103)),
          tensor('DELAY', 'UINT32', [4], Uint32Array.of(5, 5, 5, 5)),
          tensor('WAIT', 'UINT32', [1], Uint32Array.of(5)),
        ],
        parameters: {},
      },
      {
        onResponse: (response, final) => {
          const out = response.outputs.find((o) => o.name === 'OUT');
          const idx = response.outputs.find((o) => o.name === 'IDX');
          responses.push({ out: out ? int32s(out) : [], idx: idx ? new Uint32Array(idx.data.slice().buffer)[0]! : -1, final });
        },
      },
    );
    const data = responses.filter((r) => r.out.length > 0);
    expect(data.map((r) => [r.out, r.idx])).toEqual([[[100], 0], [[101], 1], [[102], 2], [[103], 3]]);
    expect(responses.every((r) => !r.final)).toBe(true);
  });

  it('repeat_int32 refuses a DELAY it would have to sit on for minutes', async () => {
    const errors: unknown[] = [];
    const outcome = core.infer(
      {
        id: 'r2',
        modelName: 'repeat_int32',
        inputs: [tensor('IN', 'INT32', [1], Int32Array.of(1)), tensor('DELAY', 'UINT32', [1], Uint32Array.of(4_000_000_000)), tensor('WAIT', 'UINT32', [1], Uint32Array.of(0))],
        parameters: {},
      },
      { onResponse: (response) => errors.push(response) },
    );
    await expect(outcome).rejects.toThrow(/DELAY\[0\] may be at most 60000 ms/);
  });
});
