/**
 * One LLM request from admission to the client's answer: wait for room on a node serving the model
 * (llm-router.ts), send the client's body to the node's route, and answer with what the node sends:
 * a streamed answer relayed event by event (sse-relay.ts, driven by the server's adapter), anything
 * else read whole (bounded) and passed on with its status. A failure before the node accepted the request (refused, breaker
 * open) is retried once on another node; nothing else is retried, a stream least of all.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import type { AuthContext } from '../auth/index.js';
import type { CancelSignal } from '../http/cancellation.js';
import type { GatewayMetrics, LlmUpstream, LlmUpstreamResponse, RateLimiter } from '../ports/index.js';
import { isNotAccepted } from '../routing/upstream-errors.js';
import { countPiece, countPieceBytes } from './piece-count.js';
import { SseRelay, type StreamFormat } from './sse-relay.js';
import type { LlmRouter, NodeLease } from './llm-router.js';
import { CompletionMeter, tokenLimitError } from './token-budget.js';

/** The largest non-streamed answer (or error body) the gateway reads from a node. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface LlmForwardDeps {
  readonly router: LlmRouter;
  readonly upstream: LlmUpstream;
  readonly rateLimiter: RateLimiter;
  readonly metrics: GatewayMetrics;
  readonly counter: TokenCounter;
  /** Most ms to wait for the node to start answering (a non-streamed answer comes whole, at the end). */
  readonly answerTimeoutMs: number;
  readonly chargeEvery?: number;
}

export interface LlmForwardRequest {
  readonly auth: AuthContext;
  readonly model: string;
  /** Path on the node. */
  readonly path: string;
  readonly body: Uint8Array;
  readonly stream: boolean;
  readonly format: StreamFormat;
  /** Absolute deadline of the wait for a node. */
  readonly deadline: number;
  /** The client's disconnect. */
  readonly signal: CancelSignal;
  /**
   * Aborts `signal` (its owner's controller), when the caller has one: the node's request then rides on
   * the client's own signal, and a relay that stops it (budget spent) aborts that one; without it,
   * forwarding makes a second AbortController per request.
   */
  readonly abort?: () => void;
  /** Called once, after the first event is written to the client (or the stream's end): deferred work. */
  readonly afterFirstWrite?: () => void;
  /**
   * The server's writer of a streamed answer, for a request already admitted: called in the turn the node's head
   * is read, where the upstream reports it (LlmUpstreamRequest.onAnswer), so the client's head and first event
   * leave with no promise hop back through the breaker and the callers. True: it took the stream (the answer
   * then comes back with `started`); false: the answer goes back through the promise as before.
   */
  readonly startStream?: (answer: StreamedAnswer) => boolean;
  /**
   * The request's admission, while it is decided as the node answers (admission-overlap.ts): a whole answer's
   * completion tokens are metered only once it says yes; a refused request's answer reaches no one and costs nothing.
   */
  readonly admission?: Promise<unknown>;
}

/** A non-streamed answer, read whole. */
export interface WholeAnswer {
  readonly kind: 'whole';
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Completion tokens metered from the answer (0 for errors). */
  readonly completionTokens: number;
}

/** The node's streamed answer and the relay to feed it through; the server's adapter does the I/O. */
export interface StreamedAnswer {
  readonly kind: 'stream';
  readonly source: AsyncIterable<Uint8Array>;
  readonly relay: SseRelay;
  /** Already being written to the client (`startStream` took it): callers only pass it back. */
  readonly started?: boolean;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
  // Tells @hono/node-server to send the headers at once instead of waiting a timer turn for more body.
  'Transfer-Encoding': 'chunked',
};

async function readWhole(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > MAX_ANSWER_BYTES) throw TesseraError.badGateway(`the node's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** Generated text of a whole answer: OpenAI's usage when present, else the text counted. */
function completionTokensOf(format: StreamFormat, body: Uint8Array, counter: TokenCounter): number {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return 0;
  }
  if (typeof value !== 'object' || value === null) return 0;
  if (format === 'generate') {
    const text = (value as { text_output?: unknown }).text_output;
    return typeof text === 'string' ? counter.count(text) : 0;
  }
  const usage = (value as { usage?: { completion_tokens?: unknown } }).usage?.completion_tokens;
  if (typeof usage === 'number' && Number.isSafeInteger(usage) && usage >= 0) return usage;
  const choice = (value as { choices?: { text?: unknown; message?: { content?: unknown } }[] }).choices?.[0];
  const text = choice?.text ?? choice?.message?.content;
  return typeof text === 'string' ? counter.count(text) : 0;
}


const noop = (): void => undefined;

/**
 * What aborts the node's request: the client's signal itself when the caller can abort it (one
 * AbortSignal per stream: each costs an EventTarget and its listeners, docs/benchmarks.md issue 20),
 * else a controller of its own that follows the client's.
 */
function upstreamAbortOf(request: LlmForwardRequest): { signal: CancelSignal; abort: () => void; detach: () => void } {
  if (request.abort !== undefined) return { signal: request.signal, abort: request.abort, detach: noop };
  const controller = new AbortController();
  const onClientGone = (): void => controller.abort();
  request.signal.addEventListener('abort', onClientGone, { once: true });
  return { signal: controller.signal, abort: () => controller.abort(), detach: () => request.signal.removeEventListener('abort', onClientGone) };
}

export async function forwardLlm(deps: LlmForwardDeps, request: LlmForwardRequest): Promise<WholeAnswer | StreamedAnswer> {
  const { router, upstream } = deps;
  const { auth, model } = request;
  if (request.signal.aborted) throw TesseraError.cancelled('the client closed the connection');
  const { signal: upstreamSignal, abort: abortUpstream, detach } = upstreamAbortOf(request);

  let lease: NodeLease;
  try {
    lease = await router.acquire(model, {
      tier: auth.tier.name,
      priority: auth.tier.priority,
      share: auth.tier.queueShare,
      deadline: request.deadline,
      signal: request.signal,
    });
  } catch (error) {
    detach();
    throw error;
  }
  /** The relay of a streamed answer (the node's request ends with it: its lease released). */
  const streamed = (response: LlmUpstreamResponse): StreamedAnswer => {
    const meter = new CompletionMeter(deps.rateLimiter, deps.metrics, auth, model, deps.chargeEvery);
    const relay = new SseRelay({
      format: request.format,
      countTokens: (text) => countPiece(deps.counter, text),
      countUtf8: (bytes, from, to) => countPieceBytes(deps.counter, bytes, from, to),
      meter,
      overBudgetError: (retryAfterMs) => tokenLimitError(auth, model, meter.total, retryAfterMs),
      abortUpstream,
      ...(request.afterFirstWrite === undefined ? {} : { afterFirstWrite: request.afterFirstWrite }),
      onEnd: () => {
        lease.release();
        detach();
      },
    });
    return { kind: 'stream', source: response.body, relay };
  };
  // Set when the node's head came through `onAnswer`: the stream made then (and started, when the server took it).
  let early: StreamedAnswer | undefined;
  const startStream = request.startStream;
  const onAnswer =
    startStream === undefined || !request.stream
      ? undefined
      : (response: LlmUpstreamResponse): void => {
          if (!isStream(request, response)) return;
          const answer = streamed(response);
          try {
            early = startStream(answer) ? { ...answer, started: true } : answer;
          } catch (error) {
            // Never thrown back into the upstream's reader: the stream is ended here, and nobody writes it again.
            answer.relay.cancel(error);
            early = { ...answer, started: true };
          }
        };
  const send = (target: NodeLease): Promise<LlmUpstreamResponse> =>
    upstream.send(target.node, {
      method: 'POST',
      path: request.path,
      body: request.body,
      headers: { 'content-type': 'application/json' },
      signal: upstreamSignal,
      headersTimeoutMs: deps.answerTimeoutMs,
      ...(onAnswer === undefined ? {} : { onAnswer }),
    });
  let response: LlmUpstreamResponse;
  try {
    try {
      response = await send(lease);
    } catch (error) {
      lease.release();
      const other = isNotAccepted(error) && !request.signal.aborted ? router.leastLoaded(model, lease.node.id) : undefined;
      if (other === undefined) throw error;
      lease = router.claim(other, model);
      response = await send(lease);
    }
  } catch (error) {
    lease.release();
    detach();
    throw error;
  }

  if (early !== undefined && early.source === response.body) return early;
  const contentType = response.headers['content-type'] ?? 'application/json';
  if (!isStream(request, response)) {
    try {
      const body = await readWhole(response.body);
      let completionTokens = 0;
      // A node that ignored `stream: true` may answer whole before a refusal comes: that answer is never delivered.
      const delivered = request.admission === undefined || (await request.admission.then(() => true, () => false));
      if (response.status === 200 && delivered) {
        completionTokens = completionTokensOf(request.format, body, deps.counter);
        const meter = new CompletionMeter(deps.rateLimiter, deps.metrics, auth, model, deps.chargeEvery);
        // The answer exists already: a refused charge cannot take it back, it only leaves the bucket empty.
        meter.add(completionTokens);
        await meter.settle();
      }
      return { kind: 'whole', status: response.status, contentType, body, completionTokens };
    } finally {
      lease.release();
      detach();
    }
  }

  return streamed(response);
}

/** Whether the node answered the request with a stream to relay (else its answer is read whole). */
function isStream(request: LlmForwardRequest, response: LlmUpstreamResponse): boolean {
  return request.stream && response.status === 200 && (response.headers['content-type'] ?? 'application/json').startsWith('text/event-stream');
}
