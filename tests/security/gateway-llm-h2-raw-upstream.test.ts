/**
 * Issue 20: the gateway's LLM upstream over its own HTTP/2 client (gateway/src/adapters/node-http/llm-h2-upstream.ts
 * on shared/src/http/raw-http2/client-connection.ts). A node is a stranger: one that ignores the per-stream window
 * (64 KiB, far below the connection's), one that keeps sending to a reader that paused, one that cuts a stream or
 * its connection mid-answer, one that refuses a stream or never answers: each is bounded, fails the request or
 * its body with a reason (a cut answer is never taken for a whole one), and nothing waits forever.
 *
 * The node is a real `net` server on loopback that reads the client's frames and answers each request stream
 * with the frames a case writes; the upstream is the gateway's real one.
 */
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraError } from '../../shared/src/errors/index.js';
import { startFrameWritingNode, type Answer, type ClientFrame, type FrameWritingNode } from './support/frame-writing-node.js';
import { Flag, FrameType, H2Error, encodeFrame, encodeHeaderBlock, rstStreamFrame } from '../../shared/src/http/raw-http2/index.js';
import { createStaticNodeDirectory } from '../../gateway/src/adapters/fleet/index.js';
import { createLlmH2Upstream } from '../../gateway/src/adapters/node-http/llm-h2-upstream.js';
import type { FleetChange, LlmUpstream, LlmUpstreamResponse } from '../../gateway/src/core/ports/index.js';

type Failure = TesseraError & { notAccepted?: boolean };

const STREAM_WINDOW = 64 * 1024;
const FRAME = 16 * 1024;
const sseHeaders = (id: number): Buffer => encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, id, encodeHeaderBlock({ ':status': '200', 'content-type': 'text/event-stream' }));
const data = (id: number, payload: Uint8Array, flags = 0): Buffer => encodeFrame(FrameType.DATA, flags, id, payload);
const event = Buffer.from('data: {"choices":[{"text":"x"}]}\n\n');

/** The node's normal answer: headers, one event, the end. */
const ok: Answer = (socket, id) => {
  socket.write(sseHeaders(id));
  socket.write(data(id, event, Flag.END_STREAM));
};

describe('a hostile node behind the raw HTTP/2 LLM upstream (the real upstream + a loopback TCP node writing frames)', () => {
  let peer: FrameWritingNode;
  let address: string;
  let answer: Answer = ok;
  const received: ClientFrame[] = [];
  const sockets: Socket[] = [];
  let upstream: (LlmUpstream & { close(): void }) | undefined;

  beforeAll(async () => {
    peer = await startFrameWritingNode({ answer: () => answer, received, sockets });
    address = peer.address;
  });

  afterEach(() => {
    upstream?.close();
    upstream = undefined;
    for (const socket of sockets.splice(0)) socket.destroy();
    received.length = 0;
    answer = ok;
  });

  afterAll(() => peer.close());

  const fallback: LlmUpstream = { send: () => Promise.reject(new Error('the fallback was used')) };
  const node = () => createStaticNodeDirectory([{ id: 'n', httpAddress: '127.0.0.1:1', llmH2Address: address }]).all()[0]!;
  let fleetListener: ((change: FleetChange) => void) | undefined;
  const fleetEvents = { onChange: (listener: (change: FleetChange) => void) => ((fleetListener = listener), () => (fleetListener = undefined)) };
  const send = (options: { signal?: AbortSignal; headersTimeoutMs?: number } = {}): Promise<LlmUpstreamResponse> => {
    upstream ??= createLlmH2Upstream({ fallback, fleetEvents });
    return upstream.send(node(), {
      method: 'POST',
      path: '/v1/completions',
      body: Buffer.from('{"model":"m","prompt":"p","stream":true}'),
      headers: { 'content-type': 'application/json' },
      signal: options.signal ?? new AbortController().signal,
      headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    });
  };
  const readAll = async (body: AsyncIterable<Uint8Array>): Promise<string> => {
    let text = '';
    for await (const chunk of body) text += Buffer.from(chunk).toString();
    return text;
  };
  const failureOf = async (work: Promise<unknown>): Promise<Failure> => {
    try {
      await work;
    } catch (error) {
      return error as Failure;
    }
    throw new Error('expected a failure');
  };
  const streamUpdates = (id: number): ClientFrame[] => received.filter((f) => f.type === FrameType.WINDOW_UPDATE && f.streamId === id);

  it('serves a well-behaved node (the harness itself), the request framed as JSON with its length', async () => {
    const response = await send();
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    expect(response.headers[':status']).toBeUndefined();
    expect(await readAll(response.body)).toBe(event.toString());
  });

  it('announces a 64 KiB stream window: DATA past it resets the stream (FLOW_CONTROL_ERROR) and fails the body, not the next request', async () => {
    answer = (socket, id) => {
      socket.write(sseHeaders(id));
      for (let sent = 0; sent <= STREAM_WINDOW; sent += FRAME) socket.write(data(id, Buffer.alloc(FRAME, 0x61)));
    };
    const response = await send();
    // Read only after the reset: a reader that reads at once hands the window back as it goes.
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.FLOW_CONTROL_ERROR)).toBe(true);
    const error = await failureOf(readAll(response.body));
    expect(String(error)).toMatch(/cut mid-answer: the node broke the protocol: DATA beyond the stream window/);
    answer = ok;
    expect(await readAll((await send()).body)).toBe(event.toString());
  });

  it('a paused reader holds the stream\'s credit back (the node gets no WINDOW_UPDATE for it) and gets it back once it reads', async () => {
    answer = (socket, id) => {
      socket.write(sseHeaders(id));
      // A whole window: a client that credited as it read would hand half of it back at once.
      for (let sent = 0; sent < STREAM_WINDOW; sent += FRAME) socket.write(data(id, Buffer.alloc(FRAME, 0x61)));
    };
    const response = await send();
    const body = response.body as NodeJS.ReadableStream;
    // Nobody reads: the body's buffer fills past its mark and it pauses its flow.
    await expect.poll(() => received.some((f) => f.type === FrameType.WINDOW_UPDATE && f.streamId === 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(streamUpdates(1)).toHaveLength(0);
    let read = 0;
    body.on('data', (chunk: Buffer) => (read += chunk.length));
    await expect.poll(() => read).toBe(STREAM_WINDOW);
    await expect.poll(() => streamUpdates(1).length).toBeGreaterThan(0);
    expect(streamUpdates(1).reduce((sum, f) => sum + f.payload.readUInt32BE(0), 0)).toBe(STREAM_WINDOW);
  });

  it('a stream the node resets mid-answer fails its body (never read as a whole answer)', async () => {
    answer = (socket, id) => {
      socket.write(sseHeaders(id));
      socket.write(data(id, event));
      socket.write(rstStreamFrame(id, H2Error.INTERNAL_ERROR));
    };
    const response = await send();
    expect(String(await failureOf(readAll(response.body)))).toMatch(/cut mid-answer: the peer reset the stream \(code 2\)/);
  });

  it('a connection that drops mid-answer fails the body; the next request opens a fresh connection', async () => {
    answer = (socket, id) => {
      socket.write(sseHeaders(id));
      socket.write(data(id, event), () => socket.destroy());
    };
    const response = await send();
    expect(String(await failureOf(readAll(response.body)))).toMatch(/cut mid-answer/);
    answer = ok;
    expect(await readAll((await send()).body)).toBe(event.toString());
  });

  it('a stream the node refuses before answering is marked not accepted (another node may take it)', async () => {
    answer = (socket, id) => socket.write(rstStreamFrame(id, H2Error.REFUSED_STREAM));
    const error = await failureOf(send());
    expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
  });

  it('a node that never answers: DEADLINE_EXCEEDED at the head timeout and the stream reset (CANCEL)', async () => {
    answer = () => undefined;
    const error = await failureOf(send({ headersTimeoutMs: 200 }));
    expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.CANCEL)).toBe(true);
  });

  it('the client going away mid-answer resets the stream (CANCEL) and fails the body', async () => {
    answer = (socket, id) => {
      socket.write(sseHeaders(id));
      socket.write(data(id, event));
    };
    const controller = new AbortController();
    const response = await send({ signal: controller.signal });
    const reading = failureOf(readAll(response.body));
    controller.abort();
    expect(String(await reading)).toMatch(/aborted by the gateway/);
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.CANCEL)).toBe(true);
  });

  it('a node that leaves the fleet has its connection closed (GOAWAY): connections stay as many as the fleet has nodes', async () => {
    expect(await readAll((await send()).body)).toBe(event.toString());
    expect(received.some((f) => f.type === FrameType.GOAWAY)).toBe(false);
    fleetListener?.({ type: 'leave', nodeId: 'n' });
    await expect.poll(() => received.some((f) => f.type === FrameType.GOAWAY)).toBe(true);
    // Back in the fleet: a fresh connection serves it.
    expect(await readAll((await send()).body)).toBe(event.toString());
    expect(sockets.length).toBe(2);
  });
});
