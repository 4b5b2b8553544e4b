import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { ModelStreamInferResponseSchema, type ModelStreamInferResponse } from '../gen/grpc_service_pb.js';
import { UnsentBudget, streamAnswerBytes } from './unsent-budget.js';

const answer = (bytes: number): ModelStreamInferResponse =>
  create(ModelStreamInferResponseSchema, { inferResponse: { rawOutputContents: [new Uint8Array(bytes)] } });

/** A stream whose client reads only when told: write callbacks wait until flush(). */
function heldStream() {
  const pending: (() => void)[] = [];
  return {
    written: 0,
    write(_message: ModelStreamInferResponse, callback: () => void) {
      this.written++;
      pending.push(callback);
    },
    flush: () => pending.splice(0).forEach((done) => done()),
  };
}

describe('UnsentBudget', () => {
  it('refuses once more than the limit waits unsent, and counts what went out', () => {
    const budget = new UnsentBudget(4096);
    const stream = heldStream();
    expect(budget.write(stream, answer(1500))).toBe(true);
    expect(budget.write(stream, answer(1500))).toBe(true);
    expect(budget.write(stream, answer(1500))).toBe(false);
    expect(stream.written).toBe(3);
    stream.flush();
    expect(budget.write(stream, answer(1500))).toBe(true);
    expect(budget.overflowMessage()).toBe('the client is not reading the stream: more than 4096 bytes of answers are waiting to be sent');
  });

  it('sizes an answer by its tensor bytes plus a fixed allowance', () => {
    expect(streamAnswerBytes(answer(1000))).toBe(1256);
    expect(streamAnswerBytes(create(ModelStreamInferResponseSchema, { errorMessage: 'no' }))).toBe(258);
  });
});
