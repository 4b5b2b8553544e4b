/**
 * Relays a node's Server-Sent Events to the client as they arrive, event by event, while metering the
 * completion tokens they carry. The node's own bytes go out unchanged (no re-encoding); only whole
 * events are forwarded, so the gateway can end a stream cleanly between two events. What is held back
 * is at most one partial event (bounded by MAX_PARTIAL_EVENT_BYTES).
 *
 * How a relayed stream ends:
 * - the node ends it: relayed as is (an OpenAI stream must have sent `data: [DONE]`, else it is a failure);
 * - the node dies or the connection breaks mid-stream: an error event, then `data: [DONE]` for the
 *   OpenAI API (`data: {"error": "..."}` for generate_stream), and the stream closes;
 * - the tenant's token budget runs out: the same with a 429-style error, and the node's request is aborted;
 * - the client goes away (the body is cancelled): the node's request is aborted, so its model stops.
 * `onEnd` is called exactly once, with the outcome, after which nothing is left running.
 */
import { OpenAIApiError } from './openai-error.js';
import type { CompletionMeter } from './token-budget.js';

export type StreamFormat = 'openai' | 'generate';
export type RelayOutcome = 'done' | 'cancelled' | 'over_budget' | 'upstream_failed';

/** A node that sends this much without ending an event is not speaking SSE. */
export const MAX_PARTIAL_EVENT_BYTES = 1024 * 1024;

export interface RelayOptions {
  readonly source: AsyncIterable<Uint8Array>;
  readonly format: StreamFormat;
  readonly countTokens: (text: string) => number;
  readonly meter: CompletionMeter;
  /** The error event a refused charge ends the stream with. */
  readonly overBudgetError: (retryAfterMs: number) => OpenAIApiError;
  /** Stops the node's request (client gone, budget spent). */
  readonly abortUpstream: () => void;
  readonly onEnd: (outcome: RelayOutcome, error?: unknown) => void;
}

const encoder = new TextEncoder();

/** Index just past the last "\n\n" in `bytes`, or -1. */
function lastEventEnd(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    if (bytes[i] === 10 && bytes[i - 1] === 10) return i + 1;
  }
  return -1;
}

function concat(a: Uint8Array | undefined, b: Uint8Array): Uint8Array {
  if (a === undefined || a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The generated text an event's JSON carries (OpenAI chunk: text or delta.content; generate: text_output). */
function textOf(format: StreamFormat, value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  if (format === 'generate') {
    const text = (value as { text_output?: unknown }).text_output;
    return typeof text === 'string' ? text : '';
  }
  const choice = (value as { choices?: { text?: unknown; delta?: { content?: unknown } }[] }).choices?.[0];
  if (choice === undefined) return '';
  if (typeof choice.text === 'string') return choice.text;
  const content = choice.delta?.content;
  return typeof content === 'string' ? content : '';
}

export function errorEvent(format: StreamFormat, error: OpenAIApiError): Uint8Array {
  if (format === 'generate') return encoder.encode(`data: ${JSON.stringify({ error: error.message })}\n\n`);
  return encoder.encode(`data: ${JSON.stringify(error.body())}\n\ndata: [DONE]\n\n`);
}

export function relayEventStream(options: RelayOptions): ReadableStream<Uint8Array> {
  const { format, meter } = options;
  const decoder = new TextDecoder();
  const iterator = options.source[Symbol.asyncIterator]();
  let carry: Uint8Array | undefined;
  let sawDone = false;
  let over = false;
  let refused = false;
  let charging: Promise<void> | undefined;
  const charge = (): void => {
    charging = meter
      .settle()
      .then((allowed) => {
        if (!allowed) refused = true;
      }, () => undefined)
      .finally(() => {
        charging = undefined;
      });
  };

  const finish = (outcome: RelayOutcome, error?: unknown): void => {
    if (over) return;
    over = true;
    if (outcome !== 'done') options.abortUpstream();
    // Tokens still pending are charged (and metered) whatever the outcome: they were generated.
    void meter.settle().catch(() => undefined);
    options.onEnd(outcome, error);
  };

  /** Counts the tokens of whole events; notes `[DONE]`. */
  const tokensIn = (text: string): number => {
    let tokens = 0;
    for (const event of text.split('\n\n')) {
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const payload = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
        if (payload === '[DONE]') {
          sawDone = true;
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(payload);
        } catch {
          continue; // not ours to judge: relayed as the node sent it
        }
        const generated = textOf(format, value);
        if (generated !== '') tokens += options.countTokens(generated);
      }
    }
    return tokens;
  };

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: OpenAIApiError, outcome: RelayOutcome, cause?: unknown): void => {
    controller.enqueue(errorEvent(format, error));
    controller.close();
    finish(outcome, cause ?? error);
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (over) return;
          let next: IteratorResult<Uint8Array>;
          try {
            next = await iterator.next();
          } catch (error) {
            if (over) return;
            fail(controller, new OpenAIApiError(502, 'the node serving the model failed mid-stream; the completion is incomplete', 'server_error', null, 'upstream_failed'), 'upstream_failed', error);
            return;
          }
          if (over) return;
          if (next.done) {
            if (format === 'openai' && !sawDone) {
              fail(controller, new OpenAIApiError(502, 'the node ended the stream before it was complete', 'server_error', null, 'upstream_failed'), 'upstream_failed');
              return;
            }
            controller.close();
            finish('done');
            return;
          }
          const bytes = concat(carry, next.value);
          const cut = lastEventEnd(bytes);
          if (cut < 0) {
            carry = bytes;
            if (carry.length > MAX_PARTIAL_EVENT_BYTES) {
              fail(controller, new OpenAIApiError(502, 'the node sent an event larger than the gateway relays', 'server_error', null, 'upstream_failed'), 'upstream_failed');
              return;
            }
            continue;
          }
          const whole = cut === bytes.length ? bytes : bytes.subarray(0, cut);
          carry = cut === bytes.length ? undefined : bytes.slice(cut);
          if (refused) {
            fail(controller, options.overBudgetError(meter.refusedRetryMs ?? 1000), 'over_budget');
            return;
          }
          // Charged in the background: a store round trip (Redis) never holds an event back. A refusal
          // ends the stream at the next event, so a stream runs at most a step or two past its budget.
          if (meter.add(tokensIn(decoder.decode(whole))) && charging === undefined) charge();
          // After `[DONE]` the node ends its answer; reading on to that end keeps its connection reusable.
          controller.enqueue(whole);
          return;
        }
      },
      cancel(reason) {
        finish('cancelled', reason);
        void iterator.return?.().catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
