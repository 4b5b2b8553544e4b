/** The engine thread's event batches (event-wire.ts): packed, posted and unpacked unchanged and in order. */
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { packEvents, unpackEvents, type PackedEvents, type WireEvent } from './event-wire.js';

const EVENTS: WireEvent[] = [
  { id: 7, text: 'ab', tokens: 1, promptTokens: 12 },
  { id: 3, text: '', tokens: 0, done: 'cancelled' },
  // Surrogate pairs and combining marks: lengths are UTF-16 units on both sides.
  { id: 2 ** 40, text: 'é😀\u0301x', tokens: 1, done: 'length' },
  { id: 9, text: '', tokens: 0, error: { code: 'INVALID_ARG', message: 'the prompt could not be tokenized: bad' } },
  { id: 4, text: 'z', tokens: 0, done: 'stop' },
  { id: 5, text: '', tokens: 0, error: { code: 'INTERNAL', message: 'decode step failed: boom' } },
  { id: 6, text: 'q', tokens: 1 },
];

describe('event wire', () => {
  it('unpacks every field of every event, in the order packed', () => {
    expect([...unpackEvents(packEvents(EVENTS))]).toEqual(EVENTS);
  });

  it('packs a batch as one number array, one string and the errors', () => {
    const packed = packEvents(EVENTS);
    expect(packed.numbers.length).toBe(EVENTS.length * 5);
    expect(packed.text).toBe(EVENTS.map((e) => e.text).join(''));
    expect(packed.errors.map((e) => e.code)).toEqual(['INVALID_ARG', 'INTERNAL']);
    expect([...unpackEvents(packEvents([]))]).toEqual([]);
  });

  it('crosses a message port unchanged', async () => {
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<PackedEvents>((resolve) => port2.once('message', (m: { packed: PackedEvents }) => resolve(m.packed)));
    port1.postMessage({ type: 'events', packed: packEvents(EVENTS) });
    expect([...unpackEvents(await received)]).toEqual(EVENTS);
    port1.close();
    port2.close();
  });
});
