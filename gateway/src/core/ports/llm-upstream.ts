/**
 * How the gateway reaches a node's LLM routes (the OpenAI-compatible API and Triton's generate
 * extension, both on the node's HTTP port): one HTTP request whose answer body arrives chunk by chunk
 * as the node sends it. Node: node:http with keep-alive (adapters/node-http/llm-http-upstream.ts);
 * Workers: fetch.
 */
import type { CancelSignal } from '../http/cancellation.js';
import type { NodeView } from './node-directory.js';

export interface LlmUpstreamRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query on the node, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly body?: Uint8Array;
  /** Extra request headers (content type, traceparent). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborting closes the connection to the node (the node's model sees its request cancelled). */
  readonly signal: CancelSignal;
  /** Most ms to wait for the answer's status line; the body may take as long as it takes. */
  readonly headersTimeoutMs: number;
  /**
   * Called with the answer the moment its head is read, before the returned promise settles, by upstreams that
   * read the head themselves (the raw one): a stream can start to its client in the same turn, with no promise
   * hop back through the breaker. Must not throw. Upstreams without it answer through the promise alone.
   */
  readonly onAnswer?: (response: LlmUpstreamResponse) => void;
}

export interface LlmUpstreamResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The body as it arrives. Ends normally only when the node ended the answer; throws when the
   * connection broke first (a node dying mid-stream) or the request was aborted.
   */
  readonly body: AsyncIterable<Uint8Array>;
}

export interface LlmUpstream {
  /**
   * Sends the request. Rejects with a TesseraError marked `notAccepted` (core/ports/routing.ts) when
   * the node could not be reached (refused, reset before an answer, breaker open).
   */
  send(node: NodeView, request: LlmUpstreamRequest): Promise<LlmUpstreamResponse>;
}
