/**
 * The body of an answer the gateway reads itself: a raw HTTP/1.1 answer (llm-raw-upstream.ts) or a raw
 * HTTP/2 stream (llm-h2-upstream.ts). A Readable for whoever iterates it, and a direct reader
 * (h2-direct-body.ts's DirectBody) for the native relay, which then gets each slice in one call.
 * Back-pressure pauses the answer's flow: the socket itself (TCP then holds the node back), or the stream's
 * flow-control credit (HTTP/2 then does). Destroyed before its clean end (client gone, a relay that stopped,
 * a broken answer), it destroys the flow: a socket is reused only after its answer ended cleanly, a stream is reset.
 */
import { Readable } from 'node:stream';
import { registerDirectBody } from './h2-direct-body.js';

/** What carries the answer's bytes (a `net.Socket` is one). */
export interface AnswerFlow {
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
  readonly destroyed: boolean;
}

export class RawAnswerBody extends Readable {
  private consumer: ((chunk: Buffer) => boolean) | undefined;
  /** Bytes that came before anyone read (with the head): kept aside, not through the Readable's buffer. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The flow was paused because held bytes reached the mark: the first reader resumes it. */
  private heldPaused = false;
  /** The answer ended while nobody read yet (finish): the Readable ends once someone does. */
  private endPending = false;
  /** Someone reads: the direct reader started, or the Readable was asked for data. */
  private reading = false;
  private cleanEnd = false;
  /** A failure that came before anyone listened (the head and a broken chunk in one read). */
  private pendingError: Error | undefined;

  constructor(private readonly flow: AnswerFlow) {
    super();
    registerDirectBody(this, {
      start: (onChunk) => {
        this.consumer = onChunk;
        this.reading = true;
        // What came with the head, before the relay started, goes first.
        const held = this.takeHeld();
        if (held !== undefined) {
          if (!onChunk(held)) this.pauseSocket();
          else if (this.heldPaused) this.resumeSocket();
        }
        if (this.endPending) this.endReadable(true);
        this.failIfPending();
      },
      resume: () => this.resumeSocket(),
    });
  }

  /** Body bytes from the answer reader. */
  deliver(bytes: Buffer): void {
    if (!this.reading) {
      this.held.push(bytes);
      this.heldBytes += bytes.length;
      // Nobody reads yet: past the Readable's own mark the flow pauses, as it would for a reader that stopped.
      if (this.heldBytes >= this.readableHighWaterMark && !this.heldPaused) {
        this.heldPaused = true;
        this.pauseSocket();
      }
      return;
    }
    const flowing = this.consumer !== undefined ? this.consumer(bytes) : this.push(bytes);
    if (!flowing) this.pauseSocket();
  }

  /** The answer ended by its framing; the flow is no longer this body's. */
  finish(): void {
    this.cleanEnd = true;
    // Ended before anyone reads (the whole answer came with the head): the end waits for a reader, so
    // that neither the held bytes nor 'end' reach nobody.
    if (!this.reading) this.endPending = true;
    else this.endReadable(this.consumer !== undefined);
  }

  /**
   * The answer broke (or was cut, or aborted): the flow goes now; the error reaches the reader, or
   * waits for one (an 'error' nobody listens to would end the process).
   */
  fail(error: Error): void {
    if (this.destroyed) return;
    if (this.listenerCount('error') > 0) this.destroy(error);
    else {
      this.pendingError = error;
      this.flow.destroy();
    }
  }

  override _read(): void {
    this.reading = true;
    const held = this.takeHeld();
    if (held !== undefined) this.push(held);
    if (this.endPending) this.endReadable(false);
    else if (!this.failIfPending()) this.resumeSocket();
  }

  /** The Readable's end; `direct`: nobody reads the Readable itself, and read(0) lets it emit 'end' anyway. */
  private endReadable(direct: boolean): void {
    this.endPending = false;
    this.push(null);
    if (direct) this.read(0);
  }

  private takeHeld(): Buffer | undefined {
    const held = this.held;
    if (held.length === 0) return undefined;
    this.held = [];
    this.heldBytes = 0;
    return held.length === 1 ? held[0] : Buffer.concat(held);
  }

  /** Fails with the held error once someone listens (a read-ahead alone, with nobody listening, must not). */
  private failIfPending(): boolean {
    if (this.pendingError === undefined || this.listenerCount('error') === 0) return false;
    this.destroy(this.pendingError);
    return true;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.cleanEnd) this.flow.destroy();
    callback(error);
  }

  private pauseSocket(): void {
    if (!this.cleanEnd) this.flow.pause();
  }

  private resumeSocket(): void {
    if (!this.cleanEnd && !this.flow.destroyed) this.flow.resume();
  }
}
