/**
 * serveH2Unary's cancellation made on demand: the call's AbortSignal exists only once read, and one
 * read after the client went away (or the deadline passed) comes already aborted with that reason,
 * so code that reads it late sees what code that read it early saw; its `watch` tells the same to
 * listeners without making one. Real HTTP/2 on loopback.
 */
import { connect, createServer, type ClientHttp2Session, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { frameGrpcMessage } from './grpc-frame.js';
import { serveH2Unary, type H2UnaryCall } from './h2-unary-call.js';

describe('serveH2Unary cancellation', () => {
  let server: Http2Server;
  let port: number;
  let onCall: (call: H2UnaryCall, stream: ServerHttp2Stream) => void = () => undefined;

  beforeAll(async () => {
    server = createServer();
    server.on('stream', (stream) => serveH2Unary(stream, { path: '/p', maxReceiveBytes: 1024, timeoutMs: 60_000 }, (_m, call) => onCall(call, stream)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('a signal read after the client reset the stream is already aborted, CANCELLED; aborted says so without one', async () => {
    let called!: () => void;
    const arrived = new Promise<void>((resolve) => (called = resolve));
    const seen = new Promise<{ before: boolean; after: boolean; signalAborted: boolean; reason: string }>((resolve) => {
      onCall = (call, stream) => {
        called();
        const before = call.aborted;
        stream.once('close', () => {
          const after = call.aborted;
          const signal = call.signal;
          resolve({ before, after, signalAborted: signal.aborted, reason: String((signal.reason as { code?: string }).code) });
        });
      };
    });
    const session = connect(`http://127.0.0.1:${port}`);
    const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    stream.end(frameGrpcMessage(new Uint8Array([1, 2, 3])));
    await arrived;
    stream.close(0x8); // RST_STREAM CANCEL
    expect(await seen).toEqual({ before: false, after: true, signalAborted: true, reason: 'CANCELLED' });
    session.close();
  });

  it('a signal read before the reset aborts when it comes; an answered call never aborts', async () => {
    let called!: () => void;
    const arrived = new Promise<void>((resolve) => (called = resolve));
    const aborted = new Promise<boolean>((resolve) => {
      onCall = (call) => {
        call.signal.addEventListener('abort', () => resolve(call.signal.aborted));
        called();
      };
    });
    const session = await callThenReset(port, 1, arrived);
    expect(await aborted).toBe(true);

    const answered = new Promise<{ aborted: boolean; signalAborted: boolean }>((resolve) => {
      onCall = (call, s) => {
        call.reply([frameGrpcMessage(new Uint8Array([7]))], {}, {});
        s.once('close', () => resolve({ aborted: call.aborted, signalAborted: call.signal.aborted }));
      };
    });
    const ok = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    ok.on('data', () => undefined);
    ok.end(frameGrpcMessage(new Uint8Array([2])));
    expect(await answered).toEqual({ aborted: false, signalAborted: false });
    session.close();
  });

  it('a reply in several chunks (an output sent uncopied) reaches the client as one DATA frame', async () => {
    const tensor = new Uint8Array(4096).fill(2);
    // One message split where an encoder puts an uncopied output: the prefix and head, then the bytes.
    const message = Buffer.concat([frameGrpcMessage(new Uint8Array(48 + 4096)).subarray(0, 5), new Uint8Array(48).fill(1), tensor]);
    onCall = (call) => call.reply([message.subarray(0, 53), message.subarray(53)], {}, {});
    const session = connect(`http://127.0.0.1:${port}`);
    const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => stream.on('end', resolve));
    stream.end(frameGrpcMessage(new Uint8Array([1])));
    await ended;
    session.close();
    expect(Buffer.concat(chunks).equals(message)).toBe(true);
    // Uncorked, the first chunk left alone and the rest after it was out: two DATA frames, two segments.
    expect(chunks).toHaveLength(1);
  });

  it("the watch: a listener is called once on the reset, with CANCELLED, and no signal is made; a removed one is not called", async () => {
    let called!: () => void;
    const arrived = new Promise<void>((resolve) => (called = resolve));
    const seen = new Promise<{ calls: number; removedCalls: number; aborted: boolean; reason: string; controllerMade: boolean }>((resolve) => {
      onCall = (call, stream) => {
        let calls = 0;
        let removedCalls = 0;
        const removed = () => removedCalls++;
        call.watch.addEventListener('abort', () => calls++);
        call.watch.addEventListener('abort', removed);
        call.watch.removeEventListener('abort', removed);
        stream.once('close', () =>
          resolve({
            calls,
            removedCalls,
            aborted: call.watch.aborted,
            reason: String((call.watch.reason as { code?: string }).code),
            // The point of the watch: nothing read `signal`, so no AbortController exists.
            controllerMade: (call as unknown as { controller: unknown }).controller !== undefined,
          }),
        );
        called();
      };
    });
    const session = await callThenReset(port, 3, arrived);
    expect(await seen).toEqual({ calls: 1, removedCalls: 0, aborted: true, reason: 'CANCELLED', controllerMade: false });
    session.close();
  });

  it('the watch: an answered call never calls its listeners; one added after the abort is not called', async () => {
    const session = connect(`http://127.0.0.1:${port}`);
    const answered = new Promise<{ calls: number; aborted: boolean }>((resolve) => {
      onCall = (call, s) => {
        let calls = 0;
        call.watch.addEventListener('abort', () => calls++);
        call.reply([frameGrpcMessage(new Uint8Array([7]))], {}, {});
        s.once('close', () => resolve({ calls, aborted: call.watch.aborted }));
      };
    });
    const ok = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    ok.on('data', () => undefined);
    ok.end(frameGrpcMessage(new Uint8Array([2])));
    expect(await answered).toEqual({ calls: 0, aborted: false });

    let called!: () => void;
    const arrived = new Promise<void>((resolve) => (called = resolve));
    const late = new Promise<{ calls: number; aborted: boolean }>((resolve) => {
      onCall = (call, s) => {
        s.once('close', () => {
          let calls = 0;
          call.watch.addEventListener('abort', () => calls++);
          // Give a wrongly queued call a turn to run before reading the count.
          setImmediate(() => resolve({ calls, aborted: call.watch.aborted }));
        });
        called();
      };
    });
    const reset = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    reset.on('error', () => undefined);
    reset.end(frameGrpcMessage(new Uint8Array([4])));
    await arrived;
    reset.close(0x8);
    expect(await late).toEqual({ calls: 0, aborted: true });
    session.close();
  });

  it('abort handlers are told once at a reset, with the reason, before any signal is read; a removed one is not', async () => {
    let called!: () => void;
    const arrived = new Promise<void>((resolve) => (called = resolve));
    const told: string[] = [];
    const seen = new Promise<{ told: string[]; reason: string }>((resolve) => {
      onCall = (call, stream) => {
        const removed = { handleEvent: () => told.push('removed') };
        call.addAbortHandler({ handleEvent: () => told.push(`first ${String(call.aborted)}`) });
        call.addAbortHandler(removed);
        call.addAbortHandler({ handleEvent: () => told.push('third') });
        call.removeAbortHandler(removed);
        called();
        stream.once('close', () => resolve({ told: [...told], reason: String((call.reason as { code?: string }).code) }));
      };
    });
    const session = await callThenReset(port, 3, arrived);
    expect(await seen).toEqual({ told: ['first true', 'third'], reason: 'CANCELLED' });
    session.close();
  });
});

describe('serveH2Unary deadline', () => {
  let server: Http2Server;
  let port: number;
  let onCall: (call: H2UnaryCall) => void = () => undefined;

  beforeAll(async () => {
    server = createServer();
    server.on('stream', (stream) => serveH2Unary(stream, { path: '/p', maxReceiveBytes: 1024, timeoutMs: 60_000 }, (_m, call) => onCall(call)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    vi.useRealTimers();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('the watch is called once when the deadline passes, with DEADLINE_EXCEEDED, and the client gets DEADLINE_EXCEEDED', async () => {
    // Only the call's deadline timer is faked, so the deadline passes when the test says, not by the clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let arrived!: (call: H2UnaryCall) => void;
    const taken = new Promise<H2UnaryCall>((resolve) => (arrived = resolve));
    let calls = 0;
    onCall = (call) => {
      call.watch.addEventListener('abort', () => calls++);
      arrived(call);
    };
    const session = connect(`http://127.0.0.1:${port}`);
    const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
    stream.on('error', () => undefined);
    const status = new Promise<string | undefined>((resolve) => {
      stream.on('response', (headers) => resolve(headers['grpc-status'] as string | undefined));
    });
    stream.resume();
    stream.end(frameGrpcMessage(new Uint8Array([5])));
    const call = await taken;
    expect(calls).toBe(0);
    vi.advanceTimersByTime(60_000);
    vi.useRealTimers();
    expect(await status).toBe('4');
    expect({ calls, aborted: call.watch.aborted, reason: String((call.watch.reason as { code?: string }).code) }).toEqual({ calls: 1, aborted: true, reason: 'DEADLINE_EXCEEDED' });
    // Nothing read `signal`: the deadline, too, made no AbortController.
    expect((call as unknown as { controller: unknown }).controller).toBeUndefined();
    session.close();
  });
});

/** Sends a one-byte call, waits until the server has it, then resets it with CANCEL; the session stays open. */
async function callThenReset(port: number, byte: number, arrived: Promise<void>): Promise<ClientHttp2Session> {
  const session = connect(`http://127.0.0.1:${port}`);
  const stream = session.request({ ':method': 'POST', ':path': '/p', 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined);
  stream.end(frameGrpcMessage(new Uint8Array([byte])));
  await arrived;
  stream.close(0x8);
  return session;
}
