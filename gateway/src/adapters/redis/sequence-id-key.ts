/**
 * The key of the node-level sequence ids (core/sequences/node-sequence-id.ts), shared by every gateway
 * and job worker of one Redis: the first one to ask writes 32 random bytes with SET NX, everyone reads
 * the stored value. It is never rotated while sequences may be live (a new key would move every live
 * sequence to an id its node does not know); deleting it is safe once no sequence is in flight.
 */
import type { Redis } from 'ioredis';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { sequenceIdSecretKey } from '../../../../shared/src/fleet/index.js';
import type { SequenceIdKeySource } from '../../core/ports/index.js';

export function redisSequenceIdKey(redis: Redis, prefix: string): SequenceIdKeySource {
  const name = sequenceIdSecretKey(prefix);
  return async () => {
    const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
    await redis.set(name, fresh, 'NX');
    const stored = await redis.get(name);
    if (stored === null || !/^[0-9a-f]{64}$/.test(stored)) throw TesseraError.unavailable(`the sequence id key ${name} in Redis is missing or malformed`);
    return new Uint8Array(Buffer.from(stored, 'hex'));
  };
}
