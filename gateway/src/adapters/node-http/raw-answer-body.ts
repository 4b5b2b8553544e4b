/**
 * The body of a raw HTTP/1.1 answer (llm-raw-upstream.ts): a Readable for whoever iterates it, and a
 * direct reader (h2-direct-body.ts's DirectBody) for the native relay, which then gets each slice of
 * the node's socket in one call. Back-pressure pauses the socket itself (TCP then holds the node back).
 * Destroyed before its clean end (client gone, a relay that stopped, a broken answer), it destroys the
 * socket: a connection is reused only after its answer ended cleanly.
 */
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { registerDirectBody } from './h2-direct-body.js';

export class RawAnswerBody extends Readable {
  private consumer: ((chunk: Buffer) => boolean) | undefined;
  private cleanEnd = false;
  /** A failure that came before anyone listened (the head and a broken chunk in one read). */
  private pendingError: Error | undefined;

  constructor(private readonly socket: Socket) {
    super();
    registerDirectBody(this, {
      start: (onChunk) => {
        this.consumer = onChunk;
        // What came with the head, before the relay started, goes first (read() answers all of it).
        const held = this.read() as Buffer | null;
        if (held !== null && !onChunk(held)) this.pauseSocket();
        this.failIfPending();
      },
      resume: () => this.resumeSocket(),
    });
  }

  /** Body bytes from the answer reader. */
  deliver(bytes: Buffer): void {
    const flowing = this.consumer !== undefined ? this.consumer(bytes) : this.push(bytes);
    if (!flowing) this.pauseSocket();
  }

  /** The answer ended by its framing; the socket is no longer this body's. */
  finish(): void {
    this.cleanEnd = true;
    this.push(null);
    // Nobody may be reading the Readable (the direct reader): read(0) lets it emit 'end' anyway.
    this.read(0);
  }

  /**
   * The answer broke (or was cut, or aborted): the socket goes now; the error reaches the reader, or
   * waits for one (an 'error' nobody listens to would end the process).
   */
  fail(error: Error): void {
    if (this.destroyed) return;
    if (this.listenerCount('error') > 0) this.destroy(error);
    else {
      this.pendingError = error;
      this.socket.destroy();
    }
  }

  override _read(): void {
    if (!this.failIfPending()) this.resumeSocket();
  }

  /** Fails with the held error once someone listens (a read-ahead alone, with nobody listening, must not). */
  private failIfPending(): boolean {
    if (this.pendingError === undefined || this.listenerCount('error') === 0) return false;
    this.destroy(this.pendingError);
    return true;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.cleanEnd) this.socket.destroy();
    callback(error);
  }

  private pauseSocket(): void {
    if (!this.cleanEnd) this.socket.pause();
  }

  private resumeSocket(): void {
    if (!this.cleanEnd && !this.socket.destroyed) this.socket.resume();
  }
}
