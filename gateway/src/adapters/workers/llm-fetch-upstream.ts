/**
 * The LlmUpstream port over `fetch`, for the Workers build: `<scheme>://<node.httpAddress><path>`, the
 * answer's body read chunk by chunk from its ReadableStream. Aborting the request's signal aborts the
 * fetch (the node sees its client go away). A fetch that throws before an answer is UNAVAILABLE marked
 * `notAccepted` (fetch cannot tell a refused connection from a reset), so it may go to another node.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LlmUpstream, LlmUpstreamResponse } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/upstream-errors.js';

export interface FetchLlmUpstreamOptions {
  /** Default "http". */
  readonly scheme?: 'http' | 'https';
  /** Default: the global fetch. */
  readonly fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

async function* chunksOf(stream: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (stream === null) return;
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Left early (the client went away): stop the body, which closes the node's connection.
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

export function createFetchLlmUpstream(options: FetchLlmUpstreamOptions = {}): LlmUpstream {
  const scheme = options.scheme ?? 'http';
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  return {
    async send(node, request): Promise<LlmUpstreamResponse> {
      if (node.httpAddress === null) throw markNotAccepted(TesseraError.unavailable(`node '${node.id}' has no HTTP address for LLM routes`));
      const controller = new AbortController();
      const abort = (): void => controller.abort();
      request.signal.addEventListener('abort', abort, { once: true });
      const timer = setTimeout(abort, request.headersTimeoutMs);
      let response: Response;
      try {
        response = await doFetch(`${scheme}://${node.httpAddress}${request.path}`, {
          method: request.method,
          ...(request.body === undefined ? {} : { body: request.body }),
          headers: { ...request.headers },
          signal: controller.signal,
        });
      } catch (error) {
        request.signal.removeEventListener('abort', abort);
        if (request.signal.aborted) throw Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true });
        if (controller.signal.aborted) throw TesseraError.deadlineExceeded(`node '${node.id}' did not answer within ${request.headersTimeoutMs} ms`);
        throw markNotAccepted(TesseraError.unavailable(`node '${node.id}' could not be reached: ${error instanceof Error ? error.message : String(error)}`));
      } finally {
        clearTimeout(timer);
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value;
      });
      return { status: response.status, headers, body: chunksOf(response.body) };
    },
  };
}
