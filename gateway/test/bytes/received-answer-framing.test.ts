/**
 * The node's answer as the h2 transport reads it (infer-response-reader.ts, rememberReceivedResponse) framed into an HTTP binary answer (core/app/encoded-on-read.ts): its binary
 * sections are views of the received message up to the body's one copy, and the answer's bytes are the
 * ones a fresh response of the same tensors gives, with the client's id in them.
 */
import { describe, expect, it } from 'vitest';
import { encodeInferResponseFramed, rememberReceivedResponse } from '../../../shared/src/grpc/index.js';
import { encodeInferResponse } from '../../../shared/src/kserve/index.js';
import { encodeBytesElements, type InferResponse } from '../../../shared/src/tensors/index.js';
import { readNodeAnswer } from '../../src/adapters/grpc/infer-response-reader.js';
import { EncodedOnRead } from '../../src/core/app/encoded-on-read.js';
import { withResponseId } from '../../src/core/cache/index.js';

const response: InferResponse = {
  id: '',
  modelName: 'simple',
  modelVersion: '1',
  outputs: [
    { name: 'OUTPUT0', datatype: 'FP32', shape: [1, 1024], data: new Uint8Array(Float32Array.from({ length: 1024 }, (_, i) => i / 7).buffer) },
    { name: 'NAMES', datatype: 'BYTES', shape: [2], data: encodeBytesElements([Uint8Array.of(0, 0xff, 0x80), new Uint8Array(0)]) },
  ],
};
const options = { binaryOutputDefault: true, outputBinary: new Map<string, boolean>() };

describe("the node's received answer framed for HTTP", () => {
  it('keeps the outputs as views of the message and frames the bytes a fresh response gives', () => {
    const message = Buffer.concat(encodeInferResponseFramed(response, Infinity).chunks).subarray(5);
    const decoded = readNodeAnswer(message);
    rememberReceivedResponse(decoded, message);
    for (const output of decoded.outputs) expect(output.data.buffer).toBe(message.buffer);
    for (const id of ['', 'req-2']) {
      const framed = new EncodedOnRead(decoded, options, 1).answerWithId(id)!;
      const expected = withResponseId(encodeInferResponse(response, options), id);
      expect(Buffer.from(framed.body).toString('hex')).toBe(Buffer.from(expected.body).toString('hex'));
      expect(framed.headers).toEqual(expected.headers);
    }
  });
});
