/**
 * serveH2Unary on the raw HTTP/2 front's stream: the stream tells the call of its data, end, close and
 * wantTrailers directly (raw-stream.ts `attach`), so a call adds no listener closures; it is still read,
 * answered with its trailers, refused past the size limit and aborted by a reset. Real HTTP/2 on loopback:
 * the raw front serving, node:http2 calling.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRawH2Front, type RawH2Front } from '../http/raw-http2/front.js';
import type { RawH2Stream } from '../http/raw-http2/raw-stream.js';
import { frameGrpcMessage } from './grpc-frame.js';
import { serveH2Unary, type H2UnaryCall } from './h2-unary-call.js';

const LISTENED_EVENTS = ['data', 'end', 'close', 'error', 'wantTrailers'] as const;

describe('serveH2Unary on the raw front', () => {
  let front: RawH2Front;
  let port: number;
  let onCall: (message: Buffer, call: H2UnaryCall, stream: RawH2Stream) => void = () => undefined;

  beforeAll(async () => {
    front = createRawH2Front(() => (stream) => serveH2Unary(stream, { path: '/p', maxReceiveBytes: 1024, timeoutMs: 60_000 }, (m, call) => onCall(m, call, stream)));
    await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
    port = (front.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    front.destroyAll();
    await new Promise<void>((resolve) => front.server.close(() => resolve()));
  });

  function call(session: ClientHttp2Session, body: Uint8Array | readonly Uint8Array[]): Promise<{ headers: IncomingHttpHeaders; trailers: IncomingHttpHeaders; data: Buffer }> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
      let headers: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (headers = h));
      stream.on('trailers', (t) => (trailers = t));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('close', () => resolve({ headers, trailers, data: Buffer.concat(chunks) }));
      const parts = body instanceof Uint8Array ? [body] : body;
      for (const part of parts.slice(0, -1)) stream.write(part);
      stream.end(parts[parts.length - 1]);
    });
  }

  it('reads and answers a call with no listener on the stream: the call is told directly', async () => {
    const listeners: number[] = [];
    onCall = (message, c, stream) => {
      listeners.push(...LISTENED_EVENTS.map((event) => stream.listenerCount(event)));
      c.reply([frameGrpcMessage(Buffer.concat([message, Buffer.from([9])]))], {}, { 'x-load': '1' });
    };
    const session = connect(`http://127.0.0.1:${port}`);
    try {
      const answer = await call(session, [frameGrpcMessage(new Uint8Array([1, 2])).subarray(0, 3), frameGrpcMessage(new Uint8Array([1, 2])).subarray(3)]);
      expect(listeners).toEqual([0, 0, 0, 0, 0]);
      expect(answer.headers[':status']).toBe(200);
      expect(answer.trailers['grpc-status']).toBe('0');
      expect(answer.trailers['x-load']).toBe('1');
      expect([...answer.data]).toEqual([...frameGrpcMessage(new Uint8Array([1, 2, 9]))]);
    } finally {
      session.close();
    }
  });

  it('refuses a message past the limit RESOURCE_EXHAUSTED, arriving over several frames, without handing it on', async () => {
    let handed = 0;
    onCall = () => void handed++;
    const session = connect(`http://127.0.0.1:${port}`);
    try {
      const big = frameGrpcMessage(new Uint8Array(4000).fill(7));
      const answer = await call(session, [big.subarray(0, 600), big.subarray(600, 1200), big.subarray(1200)]);
      expect(answer.headers['grpc-status']).toBe('8');
      expect(decodeURI(String(answer.headers['grpc-message']))).toBe('Received message larger than max (4000 vs 1024)');
      expect(handed).toBe(0);
    } finally {
      session.close();
    }
  });

  it('aborts the call CANCELLED when the client resets the stream', async () => {
    const aborted = new Promise<string>((resolve) => {
      onCall = (_m, c) => c.addAbortHandler({ handleEvent: () => resolve(String((c.reason as { code?: string }).code)) });
    });
    const session = connect(`http://127.0.0.1:${port}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => undefined);
      stream.end(frameGrpcMessage(new Uint8Array([3])));
      await new Promise((resolve) => setTimeout(resolve, 50));
      stream.close(0x8);
      expect(await aborted).toBe('CANCELLED');
    } finally {
      session.close();
    }
  });
});
