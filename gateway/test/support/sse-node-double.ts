/**
 * A stand-in for a node's LLM routes, written for the gateway's relay tests: a real HTTP server on
 * loopback answering `POST /v1/completions` (and generate_stream) with Server-Sent Events the test
 * scripts byte by byte, so the exact bytes, their split across TCP writes, the end and the node's view
 * of a cancellation are the test's to choose and to see. (A real node's streams cannot be split at
 * will, nor made endless and as fast as the socket takes them, which the back-pressure test needs.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2cServer, type Http2Server, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface SseScript {
  /** Raw pieces written one by one (each its own write, `gapMs` apart). */
  readonly pieces?: readonly (string | Uint8Array)[];
  readonly gapMs?: number;
  /** Instead of pieces: writes events forever, as fast as the socket drains (stops when the client goes). */
  readonly endless?: boolean;
  /** Instead of events: this JSON body as a whole 200 (a node that ignores `stream: true`). */
  readonly whole?: string;
}

export interface SseNodeDouble {
  readonly address: string;
  /** The same answers over cleartext HTTP/2 (as a node's --llm-h2c-port), when started with `h2`. */
  readonly h2Address: string;
  /** Requests whose connection closed before their answer ended (the gateway cancelled them). */
  readonly cancelled: number;
  /** Requests received so far over each protocol (HTTP/1.1 on `address`, HTTP/2 on `h2Address`). */
  readonly requestsByProtocol: { http1: number; h2: number };
  /** Bytes written by endless answers so far, and how many of them now wait for the socket to drain. */
  readonly endlessBytes: number;
  readonly waitingForDrain: number;
  script: SseScript;
  /** Sends GOAWAY on every HTTP/2 session and then drops its connection (a node going away mid-answer). */
  dropH2Sessions(): void;
  close(): Promise<void>;
}

export const openAIChunk = (text: string): string => `data: ${JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text, finish_reason: null }] })}\n\n`;

export async function startSseNodeDouble(script: SseScript = {}, options: { h2?: boolean } = {}): Promise<SseNodeDouble> {
  const state = { cancelled: 0, endlessBytes: 0, waitingForDrain: 0 };
  const requestsByProtocol = { http1: 0, h2: 0 };
  const double = {
    address: '',
    h2Address: '',
    get cancelled() {
      return state.cancelled;
    },
    requestsByProtocol,
    get endlessBytes() {
      return state.endlessBytes;
    },
    get waitingForDrain() {
      return state.waitingForDrain;
    },
    script,
    dropH2Sessions: () => undefined,
    close: async () => undefined,
  } as SseNodeDouble;

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    requestsByProtocol[req.httpVersionMajor === 2 ? 'h2' : 'http1'] += 1;
    for await (const _ of req) void _;
    const current = double.script;
    if (current.whole !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(current.whole);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let gone = false;
    let ended = false;
    let wake: (() => void) | undefined;
    // Closed before the double ended its answer: the gateway cancelled it. (Not `writableFinished`: over
    // HTTP/2 the compat response reports a reset stream as finished.)
    res.once('close', () => {
      if (!ended) {
        gone = true;
        state.cancelled += 1;
      }
      wake?.();
    });
    if (current.endless === true) {
      const event = Buffer.from(openAIChunk(' word'));
      while (!gone) {
        state.endlessBytes += event.length;
        if (!res.write(event)) {
          state.waitingForDrain += 1;
          await new Promise<void>((resolve) => {
            wake = resolve;
            res.once('drain', resolve);
          });
          state.waitingForDrain -= 1;
        }
      }
      return;
    }
    for (const piece of current.pieces ?? []) {
      if (gone) return;
      res.write(piece);
      await new Promise((resolve) => setTimeout(resolve, current.gapMs ?? 1));
    }
    ended = true;
    res.end();
  };

  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (double as { address: string }).address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  let h2: Http2Server | undefined;
  const h2Sessions = new Set<ServerHttp2Session>();
  if (options.h2 === true) {
    // The compat API's request and response have the members `answer` uses (write/drain/close/writableFinished).
    const created = createH2cServer((req, res) => void answer(req as unknown as IncomingMessage, res as unknown as ServerResponse));
    created.on('session', (session) => {
      h2Sessions.add(session);
      session.once('close', () => h2Sessions.delete(session));
    });
    await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
    (double as { h2Address: string }).h2Address = `127.0.0.1:${(created.address() as AddressInfo).port}`;
    h2 = created;
    double.dropH2Sessions = () => {
      for (const session of h2Sessions) {
        session.goaway();
        session.destroy();
      }
    };
  }
  double.close = async () => {
    if (h2 !== undefined) {
      const closing = h2;
      for (const session of h2Sessions) session.destroy();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    }
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  };
  return double;
}
