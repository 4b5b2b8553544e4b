/**
 * The LLM streams' fast path: `POST .../generate_stream`, `/v1/completions` and `/v1/chat/completions`
 * served straight on node's request and response, HTTP/1.1 (the HTTP port) or HTTP/2 (the h2c LLM
 * port), ahead of Hono; anything else (and a path the matcher is unsure of) goes on to the Hono app.
 *
 * Why: a streamed token costs the main thread an event, and through Hono each event crossed a Web
 * ReadableStream that @hono/node-server pumps back into the response (a read, a promise, a Uint8Array
 * per event). Here each event is one write (native-sse.ts). The routes' logic is the Hono routes' own
 * (generate-route.ts, openai-routes.ts), so both paths answer alike: status, headers, events, errors.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { isTesseraError, TesseraError } from '../../../../shared/src/errors/index.js';
import { incomingHeader } from '../../../../shared/src/http/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { completionReply, openAIBody, type Kind } from '../openai/openai-routes.js';
import { toOpenAIApiError } from '../openai/openai-error.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import { payloadBodyLimits, readIncomingBody } from './body-reader.js';
import { GENERATE_ENCODING_REFUSAL, generateRequest, generateStreamProducer } from './generate-route.js';
import { parseJsonObject } from './json-body.js';
import { writeNativeSse, type SseOutgoing } from './native-sse.js';
import { errorAnswer, type HttpLogger } from './responses.js';
import type { HttpLimits } from './server-options.js';
import type { SseProducer } from './sse.js';

export type LlmIncoming = IncomingMessage | Http2ServerRequest;
export type LlmOutgoing = ServerResponse | Http2ServerResponse;
/** Serves the request and answers true, or answers false (and touches nothing) for the router to serve it. */
export type NativeLlmListener = (incoming: LlmIncoming, outgoing: LlmOutgoing) => boolean;

export interface NativeLlmContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

/** `/v2/models/{model}[/versions/{digits}]/generate_stream`: plain model names only, as matchInferPath. */
const GENERATE_STREAM_PATH = /^\/v2\/models\/([A-Za-z0-9._~!$&'()*+,;=:@-]+)(?:\/versions\/([0-9]+))?\/generate_stream(?:\?.*)?$/;
const COMPLETIONS_PATH = /^\/v1\/(chat\/)?completions(?:\?.*)?$/;

type Target = { readonly generate: { readonly model: string; readonly version: string | undefined } } | { readonly openai: Kind };

function targetOf(url: string): Target | undefined {
  const completions = COMPLETIONS_PATH.exec(url);
  if (completions !== null) return { openai: completions[1] === undefined ? 'completion' : 'chat' };
  const generate = GENERATE_STREAM_PATH.exec(url);
  if (generate === null) return undefined;
  const model = generate[1] as string;
  if (model === '.' || model === '..') return undefined;
  const version = generate[2];
  return { generate: { model, version: version === undefined ? undefined : BigInt(version).toString() } };
}

/**
 * With the inference category restricted (--http-restricted-api), a request without the header and
 * value is left to the router, which refuses it (403) as every route does.
 */
export function createNativeLlmListener(context: NativeLlmContext, logger: HttpLogger, restriction?: Restriction): NativeLlmListener {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url === undefined) return false;
    const target = targetOf(incoming.url);
    if (target === undefined) return false;
    if (restriction !== undefined && !allowedBy(restriction, incoming.headers[restriction.header.toLowerCase()])) return false;
    const client = clientSignal(outgoing);
    if ('openai' in target) void serveCompletion(context, incoming, outgoing, client, target.openai);
    else void serveGenerateStream(context, logger, incoming, outgoing, client, target.generate.model, target.generate.version);
    return true;
  };
}

/**
 * Aborted when the response closes before we ended it: the client's connection (or HTTP/2 stream) went
 * away. `writableEnded`, not `writableFinished`: an HTTP/2 response reset by the client reads finished.
 */
function clientSignal(outgoing: LlmOutgoing): AbortSignal {
  const controller = new AbortController();
  outgoing.once('close', () => {
    if (!outgoing.writableEnded) controller.abort(TesseraError.cancelled('the client closed the connection'));
  });
  return controller.signal;
}

function readJson(context: NativeLlmContext, incoming: LlmIncoming): Promise<Record<string, unknown> | undefined> {
  // Http2ServerRequest is read the same way (a Readable with headers); the reader needs nothing else.
  return readIncomingBody(incoming as IncomingMessage, payloadBodyLimits(context.limits)).then(parseJsonObject);
}

async function serveGenerateStream(
  context: NativeLlmContext,
  logger: HttpLogger,
  incoming: LlmIncoming,
  outgoing: LlmOutgoing,
  client: AbortSignal,
  model: string,
  version: string | undefined,
): Promise<void> {
  try {
    const coding = incomingHeader(incoming as IncomingMessage, 'content-encoding');
    if (coding !== null && coding.trim().toLowerCase() !== 'identity') throw TesseraError.invalidArg(GENERATE_ENCODING_REFUSAL);
    const body = (await readJson(context, incoming)) ?? {};
    const inferRequest = generateRequest(context.core, body, model, version, context.limits);
    await stream(outgoing, client, generateStreamProducer(context.core, inferRequest, context.core.isDecoupled(model, version)));
  } catch (error) {
    // After the client went away, whatever the core threw is the cancellation's consequence (routes.ts's cancelledOr).
    const failure = client.aborted && !isTesseraError(error) ? TesseraError.cancelled('the client closed the connection') : error;
    const answer = errorAnswer(failure, logger, { method: 'POST', url: incoming.url ?? '' });
    sendError(incoming, outgoing, answer.status, answer.body);
  }
}

async function serveCompletion(context: NativeLlmContext, incoming: LlmIncoming, outgoing: LlmOutgoing, client: AbortSignal, kind: Kind): Promise<void> {
  try {
    const reply = await completionReply(context, await openAIBody(readJson(context, incoming)), client, kind);
    if ('stream' in reply) {
      await stream(outgoing, client, reply.stream);
      return;
    }
    if (!outgoing.headersSent && !outgoing.destroyed) sendJson(incoming, outgoing, 200, JSON.stringify(reply.json));
  } catch (error) {
    const failure = toOpenAIApiError(error);
    sendError(incoming, outgoing, failure.status, JSON.stringify(failure.body()));
  }
}

function stream(outgoing: LlmOutgoing, client: AbortSignal, producer: SseProducer): Promise<void> {
  return writeNativeSse(outgoing as unknown as SseOutgoing, client, producer);
}

/** A JSON error answer, as the Hono routes send it; nothing once the answer has begun or the client is gone. */
function sendError(incoming: LlmIncoming, outgoing: LlmOutgoing, status: number, body: string): void {
  if (outgoing.headersSent || outgoing.destroyed) return;
  // HTTP/1.1: a body we stopped reading (over a limit) cannot be skipped on a kept-alive connection
  // without reading it all, so the connection closes after the answer (HTTP/2 resets only the stream).
  const unread = !incoming.complete && incoming.httpVersionMajor === 1;
  if (unread) outgoing.setHeader('Connection', 'close');
  sendJson(incoming, outgoing, status, body);
  if (unread) outgoing.once('finish', () => (incoming as IncomingMessage).socket.destroySoon());
}

/**
 * A JSON answer with the headers @hono/node-server writes for one: over HTTP/1.1 node adds the
 * Content-Length itself when `end` gets the whole body (so it comes last, as there); HTTP/2 names it.
 */
function sendJson(incoming: LlmIncoming, outgoing: LlmOutgoing, status: number, body: string): void {
  outgoing.statusCode = status;
  outgoing.setHeader('Content-Type', 'application/json');
  if (incoming.httpVersionMajor !== 1) outgoing.setHeader('Content-Length', String(Buffer.byteLength(body)));
  outgoing.end(body);
}

/**
 * The listener made for an HTTP server's app, so the h2c LLM listener built on that app (start-node.ts
 * hands it the app) serves its streams natively too, with the same context and restriction.
 */
const listenersByApp = new WeakMap<object, NativeLlmListener>();

export function rememberNativeLlmListener(app: object, listener: NativeLlmListener): void {
  listenersByApp.set(app, listener);
}

export function nativeLlmListenerOf(app: object): NativeLlmListener | undefined {
  return listenersByApp.get(app);
}
