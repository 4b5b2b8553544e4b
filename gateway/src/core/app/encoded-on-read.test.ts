/**
 * A produced answer's KServe body is encoded only when something reads it: the cache's bypass keeps it
 * unread (a gRPC client's no-store miss is answered from the response), its store path reads it, and
 * the body, when read, is exactly encodeInferResponse's.
 */
import { describe, expect, it } from 'vitest';
import { encodeInferResponse } from '../../../../shared/src/kserve/index.js';
import { silentLogger } from '../../../../shared/src/logging/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import { createCacheLayer, withResponseId } from '../cache/index.js';
import type { CachedResponse, ResponseCache, StoredResponse } from '../ports/index.js';
import { EncodedOnRead } from './encoded-on-read.js';

const response: InferResponse = {
  id: '',
  modelName: 'simple',
  modelVersion: '1',
  outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1, 4], data: new Uint8Array(Int32Array.of(1, -2, 3, 2 ** 31 - 1).buffer) }],
};
const options = { binaryOutputDefault: true, outputBinary: new Map<string, boolean>() };
const labels = { tenant: 't', model: 'simple', version: '1' };

/** An in-memory store (the port's contract without Redis: this test is about what the layer reads). */
class MemoryStore implements ResponseCache {
  readonly entries = new Map<string, CachedResponse>();
  async get(key: string): Promise<StoredResponse | undefined> {
    return this.entries.get(key);
  }
  async set(key: string, value: CachedResponse): Promise<void> {
    this.entries.set(key, value);
  }
}

describe('EncodedOnRead', () => {
  it('encodes on first read, once, the same bytes and headers as encodeInferResponse', () => {
    const answer = new EncodedOnRead(response, options, 250);
    expect(answer.wasEncoded).toBe(false);
    expect([answer.modelVersion, answer.computeUs]).toEqual(['1', 250]);
    expect(answer.wasEncoded).toBe(false);
    const expected = encodeInferResponse(response, options);
    expect(Buffer.from(answer.body).toString('hex')).toBe(Buffer.from(expected.body).toString('hex'));
    expect(answer.headers).toEqual(expected.headers);
    expect(answer.body).toBe(answer.body);
  });

  it('is not encoded by a no-store or TTL-0 bypass; is encoded (and stored) by a miss', async () => {
    const store = new MemoryStore();
    const layer = createCacheLayer({ store, logger: silentLogger });
    const produced: EncodedOnRead[] = [];
    const produce = async (): Promise<EncodedOnRead> => {
      const answer = new EncodedOnRead(response, options, 100);
      produced.push(answer);
      return answer;
    };
    const noStore = await layer.run('k', { ttlSeconds: 60, directive: 'no-store' }, labels, produce);
    const ttlZero = await layer.run('k', { ttlSeconds: 0, directive: 'default' }, labels, produce);
    expect([noStore.status, ttlZero.status, noStore.computeUs]).toEqual(['BYPASS', 'BYPASS', 100]);
    expect(produced.map((p) => p.wasEncoded)).toEqual([false, false]);
    // Read when asked (an HTTP answer): the encoded body.
    expect(Buffer.from(noStore.body).toString('hex')).toBe(Buffer.from(encodeInferResponse(response, options).body).toString('hex'));
    expect(produced[0]!.wasEncoded).toBe(true);

    const miss = await layer.run('k', { ttlSeconds: 60, directive: 'default' }, labels, produce);
    expect(miss.status).toBe('MISS');
    expect(produced[2]!.wasEncoded).toBe(true);
    expect(Buffer.from(store.entries.get('k')!.body).toString('hex')).toBe(Buffer.from(miss.body).toString('hex'));
  });

  // An HTTP answer not kept by the cache is framed once with the client's id: not framed without it
  // and copied whole to put the id in (withResponseId), which is what the answer must equal.
  it('frames an unread answer once with the client id, the bytes withResponseId gives; defers to it once the body was read', () => {
    for (const id of ['', 'req-1', 'é"\\\n']) {
      const answer = new EncodedOnRead(response, options, 1);
      const framed = answer.answerWithId(id);
      expect(answer.wasEncoded).toBe(false);
      const expected = withResponseId(encodeInferResponse(response, options), id);
      expect(Buffer.from(framed!.body).toString('hex')).toBe(Buffer.from(expected.body).toString('hex'));
      expect(framed!.headers).toEqual(expected.headers);
    }
    const read = new EncodedOnRead(response, options, 1);
    void read.body;
    expect(read.answerWithId('req-1')).toBeUndefined();
  });
});
