/**
 * The remembered answer heads against the encoder itself: over a run of answers that mixes repeats with
 * every way an answer can differ (model, version, id, parameters, an output's name, datatype, shape or
 * size, a small output, a second output), each memo answer is byte for byte the fresh encoding, and a
 * repeat of the last layout reuses the remembered head instead of encoding again.
 */
import { describe, expect, it } from 'vitest';
import { encodeInferResponseFramed } from '../../../../shared/src/grpc/index.js';
import type { InferResponse, Tensor } from '../../../../shared/src/tensors/index.js';
import { AnswerHeadMemo } from './answer-head-memo.js';

const VIEW_BYTES = 1024;

function output(name: string, rows: number, width: number, datatype = 'FP32', fill = 1): Tensor {
  return { name, datatype, shape: [rows, width], data: new Uint8Array(rows * width * 4).fill(fill) } as Tensor;
}

function answer(over: Partial<InferResponse> = {}): InferResponse {
  return { id: '', modelName: 'mlp_large', modelVersion: '1', outputs: [output('y', 1, 1024)], ...over };
}

const bytesOf = (chunks: readonly Uint8Array[]): Buffer => Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));

describe('AnswerHeadMemo', () => {
  it('gives the encoder’s bytes for every answer, repeats and changes alike', () => {
    const memo = new AnswerHeadMemo(VIEW_BYTES);
    const run: InferResponse[] = [
      answer(),
      answer({ outputs: [output('y', 1, 1024, 'FP32', 7)] }),
      answer({ modelName: 'other' }),
      answer(),
      answer({ modelVersion: '2' }),
      answer({ id: 'request-7' }),
      answer(),
      answer({ parameters: { sequence_id: 3 } }),
      answer(),
      answer({ outputs: [output('z', 1, 1024)] }),
      answer({ outputs: [output('z', 1, 1024, 'INT32')] }),
      answer({ outputs: [output('z', 2, 512)] }),
      answer({ outputs: [output('z', 1, 2048)] }),
      answer({ outputs: [output('z', 1, 8)] }),
      answer({ outputs: [output('a', 1, 1024), output('b', 1, 300)] }),
      answer({ outputs: [output('a', 1, 1024), output('b', 1, 300)] }),
      answer({ outputs: [output('a', 1, 1024), output('b', 1, 400)] }),
      answer({ outputs: [] }),
      answer(),
    ];
    for (const [i, response] of run.entries()) {
      const fresh = encodeInferResponseFramed(response, VIEW_BYTES);
      const memoized = memo.encode(response);
      expect(memoized.messageBytes, `answer ${i}`).toBe(fresh.messageBytes);
      expect(bytesOf(memoized.chunks).equals(bytesOf(fresh.chunks)), `answer ${i}`).toBe(true);
    }
  });

  it('reuses the remembered head for an answer of the same layout, and sends each output uncopied', () => {
    const memo = new AnswerHeadMemo(VIEW_BYTES);
    const first = answer();
    const second = answer({ outputs: [output('y', 1, 1024, 'FP32', 9)] });
    const a = memo.encode(first);
    const b = memo.encode(second);
    const c = memo.encode(answer());
    expect(b.chunks).toHaveLength(2);
    expect(b.chunks[0]).toBe(c.chunks[0]);
    expect(b.chunks[1]).toBe(second.outputs[0]!.data);
    // The remembered head is the memo's own copy: the first answer's buffer is not kept.
    expect(b.chunks[0]).not.toBe(a.chunks[0]);
  });

  it('encodes afresh once the layout changes, and remembers the new one', () => {
    const memo = new AnswerHeadMemo(VIEW_BYTES);
    memo.encode(answer());
    const repeat = memo.encode(answer());
    const wider = memo.encode(answer({ outputs: [output('y', 2, 1024)] }));
    expect(wider.chunks[0]).not.toBe(repeat.chunks[0]);
    expect(wider.messageBytes).toBe(encodeInferResponseFramed(answer({ outputs: [output('y', 2, 1024)] }), VIEW_BYTES).messageBytes);
    expect(memo.encode(answer({ outputs: [output('y', 2, 1024)] })).chunks[0]).toBe(memo.encode(answer({ outputs: [output('y', 2, 1024)] })).chunks[0]);
  });
});
