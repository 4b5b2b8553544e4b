import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Flag, FrameType } from './frame.js';
import { createRawH2Front, type RawH2Front } from './front.js';
import { HpackDecoder } from './hpack-decoder.js';
import type { RawH2Stream } from './raw-stream.js';
import { connectClient, headersFrame, isAnswerEnd, type TestClient } from './test-client.js';

const STREAMS = 8;
const ANSWER = Buffer.alloc(4096, 9);

let front: RawH2Front | undefined;
let client: TestClient | undefined;
afterEach(async () => {
  client?.destroy();
  front?.destroyAll();
  await new Promise<void>((resolve) => (front === undefined ? resolve() : front.server.close(() => resolve())));
  front = undefined;
});

describe('a raw HTTP/2 connection writes one turn as one buffer', () => {
  it('sends 8 answers (HEADERS, two DATA, trailers each) made in one turn with one socket write, every frame in order', async () => {
    let writes = 0;
    let writesBeforeAnswers = -1;
    const waiting: RawH2Stream[] = [];
    // Counts the server socket's writes (the real socket still writes them).
    const counted = (socket: Socket): void => {
      const write = socket.write.bind(socket) as (chunk: Uint8Array) => boolean;
      socket.write = ((chunk: Uint8Array) => {
        writes++;
        return write(chunk);
      }) as typeof socket.write;
    };
    front = createRawH2Front((socket) => {
      counted(socket);
      return (stream) => {
        stream.on('end', () => {
          waiting.push(stream);
          if (waiting.length < STREAMS) return;
          // The last request is in: all answers in this one turn, as a batch's answers come back together.
          writesBeforeAnswers = writes;
          for (const one of waiting) {
            one.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
            one.on('wantTrailers', () => one.sendTrailers({ 'grpc-status': '0', 'x-stream': String(one.id) }));
            one.write(Buffer.from([0, 0, 0, 16, 0]));
            one.end(ANSWER.subarray(0, 2048 + one.id));
          }
        });
      };
    });
    await new Promise<void>((resolve) => front!.server.listen(0, '127.0.0.1', resolve));
    client = await connectClient((front.server.address() as AddressInfo).port);
    const ids = Array.from({ length: STREAMS }, (_, i) => 2 * i + 1);
    client.send(...ids.map((id) => headersFrame(id, undefined, Flag.END_HEADERS | Flag.END_STREAM)));
    for (const id of ids) await client.waitFor(isAnswerEnd(id));
    expect(writesBeforeAnswers).toBeGreaterThanOrEqual(0);
    expect(writes - writesBeforeAnswers).toBe(1);
    const decoder = new HpackDecoder(64 * 1024);
    for (const id of ids) {
      const frames = client.frames.filter((f) => f.streamId === id);
      expect(frames.map((f) => f.type)).toEqual([FrameType.HEADERS, FrameType.DATA, FrameType.DATA, FrameType.HEADERS]);
      expect(decoder.decode(frames[0]!.payload).fields).toEqual([[':status', '200'], ['content-type', 'application/grpc']]);
      expect(frames[1]!.payload).toEqual(Buffer.from([0, 0, 0, 16, 0]));
      expect(frames[2]!.payload).toEqual(ANSWER.subarray(0, 2048 + id));
      expect(decoder.decode(frames[3]!.payload).fields).toEqual([['grpc-status', '0'], ['x-stream', String(id)]]);
      expect(frames[3]!.flags & Flag.END_STREAM).toBe(Flag.END_STREAM);
    }
  });
});
