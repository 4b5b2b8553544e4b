import { connect, createServer, type ClientHttp2Session, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { directBodyOf, makeDirectBody } from './h2-direct-body.js';

/** A real h2c server answering each stream with `answer`, and a client session to it. */
async function pair(answer: (stream: ServerHttp2Stream) => void): Promise<{ server: Http2Server; session: ClientHttp2Session }> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200 });
    answer(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return { server, session };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('h2-direct-body', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  function closing(server: Http2Server, session: ClientHttp2Session): void {
    cleanup = async () => {
      session.destroy();
      await new Promise((resolve) => server.close(resolve));
    };
  }

  it('hands over what the Readable held first, then each chunk in order, and ends through the Readable', async () => {
    const { server, session } = await pair((stream) => {
      stream.write('first ');
      setTimeout(() => {
        stream.write('second ');
        stream.end('third');
      }, 100);
    });
    closing(server, session);
    const stream = session.request({ ':path': '/' });
    stream.end();
    makeDirectBody(stream, () => true);
    await new Promise((resolve) => stream.once('response', resolve));
    // A read before the relay starts: the first chunk lands in the Readable's buffer.
    stream.read(0);
    await sleep(50);
    expect(stream.readableLength).toBe('first '.length);
    const chunks: string[] = [];
    const ended = new Promise((resolve) => stream.once('end', resolve));
    directBodyOf(stream)!.start((chunk) => {
      chunks.push(chunk.toString());
      return true;
    });
    await ended;
    expect(chunks.join('')).toBe('first second third');
    expect(chunks[0]).toBe('first ');
  });

  it('stops reading while the consumer refuses (the sender is held by flow control), and resumes', async () => {
    const total = 512 * 1024;
    let sent = 0;
    const { server, session } = await pair((stream) => {
      const piece = Buffer.alloc(1024, 'x');
      const more = (): void => {
        while (sent < total) {
          sent += piece.length;
          if (!stream.write(piece)) return void stream.once('drain', more);
        }
        stream.end();
      };
      more();
    });
    closing(server, session);
    const stream = session.request({ ':path': '/' });
    stream.end();
    makeDirectBody(stream, () => true);
    await new Promise((resolve) => stream.once('response', resolve));
    let received = 0;
    let refusing = true;
    const ended = new Promise((resolve) => stream.once('end', resolve));
    const body = directBodyOf(stream)!;
    body.start((chunk) => {
      received += chunk.length;
      return !refusing;
    });
    await sleep(300);
    // One stream window (64 KiB) and the socket buffers, not the whole answer.
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(total / 2);
    refusing = false;
    body.resume();
    await ended;
    expect(received).toBe(total);
  });

  it('lets the end check drop an end (a cut answer): the stream closes without end', async () => {
    const { server, session } = await pair((stream) => stream.end('whole?'));
    closing(server, session);
    const stream = session.request({ ':path': '/' });
    stream.end();
    makeDirectBody(stream, () => {
      stream.destroy(new Error('cut'));
      return false;
    });
    let endSeen = false;
    stream.once('end', () => (endSeen = true));
    stream.on('error', () => undefined);
    const closed = new Promise((resolve) => stream.once('close', resolve));
    await new Promise((resolve) => stream.once('response', resolve));
    directBodyOf(stream)!.start(() => true);
    await closed;
    expect(endSeen).toBe(false);
  });

  it('answers undefined for a body that is not such a stream', () => {
    expect(directBodyOf({})).toBeUndefined();
    expect(directBodyOf(undefined)).toBeUndefined();
  });
});
