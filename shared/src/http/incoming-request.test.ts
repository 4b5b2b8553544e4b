/**
 * The body read over a real node:http server: its listeners are shared functions that find the read's state
 * on the request, so a second read of the same request must get the first one's bytes, not a second
 * collection fed by the same listeners (which would count every chunk twice).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { collectIncomingBody, type IncomingBodyErrors } from './incoming-request.js';

const errors: IncomingBodyErrors = {
  overLimit: () => new Error('over the limit'),
  failed: (error) => error,
  closedEarly: () => new Error('closed early'),
};

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves one POST of `body` (sent in two writes) with `read`, and answers what it returns as text. */
async function roundTrip(body: Buffer, read: (incoming: IncomingMessage) => Promise<string>): Promise<string> {
  server = createServer((incoming, outgoing) => {
    read(incoming).then(
      (text) => outgoing.end(text),
      (error: Error) => outgoing.end(`error: ${error.message}`),
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    });
    req.on('error', reject);
    req.write(body.subarray(0, 5));
    setTimeout(() => req.end(body.subarray(5)), 20);
  });
}

describe('collectIncomingBody', () => {
  it('gives a second read of the same request the same bytes, not a doubled body', async () => {
    const answer = await roundTrip(Buffer.from('hello, body'), async (incoming) => {
      const [first, second] = await Promise.all([collectIncomingBody(incoming, 1024, errors), collectIncomingBody(incoming, 1024, errors)]);
      return `${Buffer.from(first).toString()}|${Buffer.from(second).toString()}`;
    });
    expect(answer).toBe('hello, body|hello, body');
  });

  it('refuses a body past the limit', async () => {
    const answer = await roundTrip(Buffer.alloc(64, 1), async (incoming) => Buffer.from(await collectIncomingBody(incoming, 10, errors)).toString());
    expect(answer).toBe('error: over the limit');
  });
});
