/**
 * The relay of one streamed answer, as a state machine fed with the node's chunks as they arrive:
 * `push` answers the bytes to send the client now (whole events, the node's own bytes unchanged; what
 * is held back is at most one partial event, bounded by MAX_PARTIAL_EVENT_BYTES), while the completion
 * tokens they carry are metered. Drivers own the I/O: a Web ReadableStream (event-stream-relay.ts, the
 * Hono routes and Workers) and the node:http relay (adapters/node-http/native-llm.ts).
 *
 * How a relayed stream ends:
 * - the node ends it (`end`): relayed as is (an OpenAI stream must have sent `data: [DONE]`, else it is a failure);
 * - the node dies or the connection breaks mid-stream (`fail`): an error event, then `data: [DONE]` for
 *   the OpenAI API (`data: {"error": "..."}` for generate_stream);
 * - the tenant's token budget runs out: the same with a 429-style error, and the node's request is aborted;
 * - the client goes away (`cancel`): the node's request is aborted, so its model stops.
 * `onEnd` is called exactly once, with the outcome; `over` is true from then on and the driver stops.
 */
import { EventTextScanner, type StreamFormat } from './event-text-scanner.js';
import { OpenAIApiError } from './openai-error.js';
import type { CompletionMeter } from './token-budget.js';

export type { StreamFormat };
export type RelayOutcome = 'done' | 'cancelled' | 'over_budget' | 'upstream_failed';

/** A node that sends this much without ending an event is not speaking SSE. */
export const MAX_PARTIAL_EVENT_BYTES = 1024 * 1024;

export interface SseRelayOptions {
  readonly format: StreamFormat;
  readonly countTokens: (text: string) => number;
  /** Counts a piece from its UTF-8 bytes (event-text-scanner.ts); absent: its string is made and counted. */
  readonly countUtf8?: (bytes: Uint8Array, from: number, to: number) => number;
  readonly meter: CompletionMeter;
  /** The error event a refused charge ends the stream with. */
  readonly overBudgetError: (retryAfterMs: number) => OpenAIApiError;
  /** Stops the node's request (client gone, budget spent). */
  readonly abortUpstream: () => void;
  readonly onEnd: (outcome: RelayOutcome, error?: unknown) => void;
  /** Called once: after the first events are written (`meterSent`), or at the end if none was. */
  readonly afterFirstWrite?: () => void;
}

const encoder = new TextEncoder();

export function errorEvent(format: StreamFormat, error: OpenAIApiError): Uint8Array {
  if (format === 'generate') return encoder.encode(`data: ${JSON.stringify({ error: error.message })}\n\n`);
  return encoder.encode(`data: ${JSON.stringify(error.body())}\n\ndata: [DONE]\n\n`);
}

const upstreamFailure = (message: string): OpenAIApiError => new OpenAIApiError(502, message, 'server_error', null, 'upstream_failed');

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

export class SseRelay {
  private readonly scanner: EventTextScanner;
  private carry: Uint8Array | undefined;
  private refused = false;
  private charging = false;
  private ended = false;
  /** Whole events handed out by `push` whose tokens are not counted yet (`meterSent`). */
  private unmetered: Uint8Array | undefined;
  private afterFirstWrite: (() => void) | undefined;

  constructor(private readonly options: SseRelayOptions) {
    this.scanner = new EventTextScanner(options.format, options.countTokens, options.countUtf8);
    this.afterFirstWrite = options.afterFirstWrite;
  }

  /** Whether the stream is over (ended, failed, cut or cancelled): nothing more is sent. */
  get over(): boolean {
    return this.ended;
  }

  /**
   * The bytes to send for a chunk of the node's answer (undefined: nothing yet). Their tokens are
   * counted by `meterSent`, which the driver calls once it has written them (else the next call here
   * or the stream's end does): counting the first event (it learns the stream's template) costs
   * about as much as relaying it, and the event is relayed whatever its count (a refusal ends the
   * stream at the next event), so it need not wait for it.
   */
  push(chunk: Uint8Array): Uint8Array | undefined {
    if (this.ended) return undefined;
    this.meterSent();
    const bytes = concat(this.carry, chunk);
    const cut = lastEventEnd(bytes);
    if (cut < 0) {
      this.carry = bytes;
      if (bytes.length > MAX_PARTIAL_EVENT_BYTES) return this.fail(upstreamFailure('the node sent an event larger than the gateway relays'));
      return undefined;
    }
    const whole = cut === bytes.length ? bytes : bytes.subarray(0, cut);
    this.carry = cut === bytes.length ? undefined : bytes.slice(cut);
    if (this.refused) return this.finishWith(this.options.overBudgetError(this.options.meter.refusedRetryMs ?? 1000), 'over_budget');
    this.unmetered = whole;
    // After `[DONE]` the node ends its answer; reading on to that end keeps its connection reusable.
    return whole;
  }

  /** Counts the tokens of what the last `push` gave (sent by now) and starts a charge when one is due. */
  meterSent(): void {
    const whole = this.unmetered;
    if (whole === undefined) return;
    this.unmetered = undefined;
    this.runAfterFirstWrite();
    // Charged in the background: a store round trip (Redis) never holds an event back. A refusal
    // ends the stream at the next event, so a stream runs at most a step or two past its budget.
    if (this.options.meter.add(this.scanner.tokensIn(whole)) && !this.charging && !this.ended) this.charge();
  }

  /** The node ended its answer: the bytes to send last (an error event when it was incomplete). */
  end(): Uint8Array | undefined {
    if (this.ended) return undefined;
    // `[DONE]` is seen while counting.
    this.meterSent();
    if (this.options.format === 'openai' && !this.scanner.sawDone) return this.fail(upstreamFailure('the node ended the stream before it was complete'));
    this.finish('done');
    return undefined;
  }

  /** The node's answer broke (or is not SSE): the error event to send last. */
  fail(error: OpenAIApiError = upstreamFailure('the node serving the model failed mid-stream; the completion is incomplete'), cause?: unknown): Uint8Array | undefined {
    if (this.ended) return undefined;
    return this.finishWith(error, 'upstream_failed', cause);
  }

  /** The client went away. */
  cancel(reason?: unknown): void {
    this.finish('cancelled', reason);
  }

  private finishWith(error: OpenAIApiError, outcome: RelayOutcome, cause?: unknown): Uint8Array {
    this.finish(outcome, cause ?? error);
    return errorEvent(this.options.format, error);
  }

  private finish(outcome: RelayOutcome, error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.carry = undefined;
    const last = this.unmetered;
    this.unmetered = undefined;
    if (last !== undefined) this.options.meter.add(this.scanner.tokensIn(last));
    this.runAfterFirstWrite();
    if (outcome !== 'done') this.options.abortUpstream();
    // Tokens still pending are charged (and metered) whatever the outcome: they were generated.
    void this.options.meter.settle().catch(() => undefined);
    this.options.onEnd(outcome, error);
  }

  private runAfterFirstWrite(): void {
    const run = this.afterFirstWrite;
    if (run === undefined) return;
    this.afterFirstWrite = undefined;
    run();
  }

  private charge(): void {
    this.charging = true;
    this.options.meter.settle().then(this.charged, this.chargeFailed);
  }

  // Made once per stream, not per charge: a charge costs the meter's promise and one `then`.
  private readonly charged = (allowed: boolean): void => {
    this.charging = false;
    if (!allowed) this.refused = true;
  };

  private readonly chargeFailed = (): void => {
    this.charging = false;
  };
}
