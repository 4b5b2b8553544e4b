import { describe, expect, it } from 'vitest';
import { encodeInferResponse } from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import { encodeInfer, joinChunks, type DecodedInfer } from './infer-codec.js';

/** How the client asked for its outputs (the request itself is not read by the encoder). */
function asked(binaryOutputDefault: boolean): DecodedInfer {
  return { request: { id: '', modelName: 'mlp', inputs: [], parameters: {} }, binaryOutputDefault, outputBinary: new Map() };
}

/** Two requests' rows cut from one batch output, as the batch plan answers them (views, not copies). */
function waveAnswers(): { batch: Uint8Array; responses: InferResponse[] } {
  const batch = new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer);
  const row = (r: number): InferResponse => ({
    id: `r${r}`,
    modelName: 'mlp',
    modelVersion: '1',
    parameters: {},
    outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 4], data: batch.subarray(r * 16, r * 16 + 16) }],
  });
  return { batch, responses: [row(0), row(1)] };
}

describe('encodeInfer (the HTTP answer as chunks)', () => {
  it('writes a binary output as a view of the batch output, byte-identical to the codec\'s one body', () => {
    const { batch, responses } = waveAnswers();
    for (const [r, response] of responses.entries()) {
      const options = asked(true);
      const answer = encodeInfer(response, options);
      const reference = encodeInferResponse(response, options);
      expect(Buffer.from(joinChunks(answer)).equals(Buffer.from(reference.body))).toBe(true);
      expect(answer.byteLength).toBe(reference.body.byteLength);
      expect(answer.headers).toEqual(reference.headers);
      // The row itself, not a copy: the same memory as the batch's output, at the row's place.
      const section = answer.chunks[1]!;
      expect(section.buffer).toBe(batch.buffer);
      expect([section.byteOffset, section.byteLength]).toEqual([r * 16, 16]);
    }
  });

  it('answers JSON outputs as one body, as before', () => {
    const { responses } = waveAnswers();
    const options = asked(false);
    const answer = encodeInfer(responses[0]!, options);
    expect(answer.chunks).toHaveLength(1);
    expect(Buffer.from(answer.chunks[0]!).toString()).toBe(Buffer.from(encodeInferResponse(responses[0]!, options).body).toString());
  });

  it('counts the JSON header in UTF-8 bytes when a name is not ASCII', () => {
    const { responses } = waveAnswers();
    const response = { ...responses[0]!, modelName: 'modèle' };
    const answer = encodeInfer(response, asked(true));
    const reference = encodeInferResponse(response, asked(true));
    expect(Buffer.from(joinChunks(answer)).equals(Buffer.from(reference.body))).toBe(true);
    expect(answer.headers['Inference-Header-Content-Length']).toBe(reference.headers['Inference-Header-Content-Length']);
  });
});
