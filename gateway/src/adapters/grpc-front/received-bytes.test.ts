import type { MethodDefinition } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { MalformedMessage } from '../../../../shared/src/grpc/index.js';
import { receivedBytesOf, recordingReceivedBytes } from './received-bytes.js';

type Method = MethodDefinition<unknown, unknown>;

/** A service definition whose deserializers return what `decode` makes of the bytes. */
function definitionWith(decode: (bytes: Buffer) => unknown): Record<string, Method> {
  const method = (path: string): Method => ({
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (value) => value as Buffer,
    requestDeserialize: decode,
    responseSerialize: (value) => value as Buffer,
    responseDeserialize: (bytes) => bytes,
  });
  return { modelInfer: method('/inference.GRPCInferenceService/ModelInfer'), modelStreamInfer: method('/inference.GRPCInferenceService/ModelStreamInfer'), serverLive: method('/inference.GRPCInferenceService/ServerLive') };
}

describe('recordingReceivedBytes', () => {
  it('records what ModelInfer and ModelStreamInfer requests arrived as, and nothing for other methods', () => {
    const recording = recordingReceivedBytes(definitionWith(() => ({ modelName: 'm' })));
    const bytes = Buffer.from([0x0a, 0x01, 0x6d]);
    expect(receivedBytesOf(recording.modelInfer!.requestDeserialize(bytes) as object)).toBe(bytes);
    expect(receivedBytesOf(recording.modelStreamInfer!.requestDeserialize(bytes) as object)).toBe(bytes);
    expect(receivedBytesOf(recording.serverLive!.requestDeserialize(bytes) as object)).toBeUndefined();
  });

  it('keeps the record on the message itself, unseen by keys, spreads and JSON (no weak table the scavenger would promote)', () => {
    const recording = recordingReceivedBytes(definitionWith(() => ({ modelName: 'm', id: 'x' })));
    const message = recording.modelInfer!.requestDeserialize(Buffer.from([0x0a, 0x01, 0x6d])) as object;
    // One own symbol-keyed property, not enumerable: a WeakMap entry kept its value alive through every
    // minor collection (a promoted copy of each request's bytes).
    const symbols = Object.getOwnPropertySymbols(message);
    expect(symbols).toHaveLength(1);
    expect(Object.getOwnPropertyDescriptor(message, symbols[0]!)?.enumerable).toBe(false);
    expect(Object.keys(message)).toEqual(['modelName', 'id']);
    expect(JSON.stringify(message)).toBe('{"modelName":"m","id":"x"}');
    // A changed copy was not received as those bytes: it has no record.
    expect(receivedBytesOf({ ...message })).toBeUndefined();
    expect(receivedBytesOf(Object.create(message) as object)).toBeUndefined();
  });

  it('records nothing for a malformed message or a frozen one', () => {
    const malformed = recordingReceivedBytes(definitionWith(() => new MalformedMessage(TesseraError.invalidArg('bad'))));
    expect(receivedBytesOf(malformed.modelInfer!.requestDeserialize(Buffer.from([0xff])) as object)).toBeUndefined();
    const frozen = recordingReceivedBytes(definitionWith(() => Object.freeze({ modelName: 'm' })));
    expect(receivedBytesOf(frozen.modelInfer!.requestDeserialize(Buffer.from([0x0a])) as object)).toBeUndefined();
  });
});
