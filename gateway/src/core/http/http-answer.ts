/**
 * An HTTP exchange without a server API: what the gateway's request logic reads of a request and what
 * it answers, so the same logic runs inside Hono (Web Request/Response: Workers, `app.fetch`) and on
 * Node's own IncomingMessage/ServerResponse (the infer fast path, adapters/node-http).
 */
import type { InferResponse } from '../../../../shared/src/tensors/index.js';

/** A request header by its lower-case name, null when absent (Web `Headers` is one). */
export interface HeaderReader {
  get(name: string): string | null;
}

/** An answer before it becomes a Web Response or a node:http write. */
export interface HttpAnswer {
  readonly status: number;
  /** Without Content-Length: each server adds its own. Names are unique regardless of case. */
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | string | null;
  /**
   * An inference answer produced for this request (not a cache hit): the response `body` was encoded
   * from, its id still empty. A protocol adapter may encode it its own way (the gRPC front door).
   */
  readonly inferResponse?: InferResponse | undefined;
}

export function answerToResponse(answer: HttpAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
