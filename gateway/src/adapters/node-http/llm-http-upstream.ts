/**
 * The LlmUpstream port on node:http: one keep-alive connection pool to the nodes' HTTP ports, the
 * answer body handed over as the IncomingMessage itself (an async iterable of chunks as they arrive,
 * no copy, no Web stream in between). Aborting the request's signal destroys the connection, which the
 * node sees as its client going away (its model's signal aborts). The time to the answer's status line
 * and the connection phase run through the node's circuit breaker when one is given (the breakers the
 * gRPC transport keeps), so a node refusing LLM calls is routed around like one refusing infer calls.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { splitHostPort } from '../../../../shared/src/http/index.js';
import type { LlmUpstream, LlmUpstreamRequest, LlmUpstreamResponse, NodeView } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/upstream-errors.js';
import type { NodeBreakers } from '../grpc/node-breakers.js';

export interface LlmHttpUpstreamOptions {
  readonly breakers?: NodeBreakers;
  /** Sockets kept per node; default 256 (one per concurrent stream). */
  readonly maxSockets?: number;
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EPIPE']);

function flatHeaders(message: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export function createLlmHttpUpstream(options: LlmHttpUpstreamOptions = {}): LlmUpstream & { close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 256, maxFreeSockets: 64 });

  function call(node: NodeView, request: LlmUpstreamRequest): Promise<LlmUpstreamResponse> {
    return new Promise<LlmUpstreamResponse>((resolve, reject) => {
      if (request.signal.aborted) {
        reject(Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true }));
        return;
      }
      const { host, port } = splitHostPort(node.httpAddress!);
      const body = request.body;
      const outgoing = httpRequest({
        host,
        port,
        method: request.method,
        path: request.path,
        agent,
        headers: { ...request.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) },
      });
      let answered = false;
      const timer = setTimeout(() => {
        outgoing.destroy(Object.assign(new Error(`node '${node.id}' did not answer within ${request.headersTimeoutMs} ms`), { code: 'ETIMEDOUT' }));
      }, request.headersTimeoutMs);
      const onAbort = (): void => void outgoing.destroy(Object.assign(new Error('aborted by the gateway'), { code: 'EABORTED' }));
      request.signal.addEventListener('abort', onAbort, { once: true });
      outgoing.once('response', (message) => {
        answered = true;
        clearTimeout(timer);
        // A broken connection mid-body must surface as an error of the iteration, not pass silently.
        message.once('close', () => {
          request.signal.removeEventListener('abort', onAbort);
          if (!message.complete) message.destroy(new Error(`the connection to node '${node.id}' closed mid-answer`));
        });
        resolve({ status: message.statusCode ?? 502, headers: flatHeaders(message), body: message });
      });
      outgoing.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (answered) return; // the body's iteration reports it
        request.signal.removeEventListener('abort', onAbort);
        if (error.code === 'EABORTED') {
          reject(Object.assign(TesseraError.cancelled('the client closed the connection'), { excused: true }));
        } else if (error.code === 'ETIMEDOUT') {
          reject(TesseraError.deadlineExceeded(error.message));
        } else {
          const failure = TesseraError.unavailable(`node '${node.id}' could not be reached: ${error.message}`);
          // No answer came: an LLM request has no side effect, so a reset (a kept-alive socket the node had
          // closed) may be retried on another node like a refused connection.
          reject(markNotAccepted(failure, CONNECT_CODES.has(error.code ?? '')));
        }
      });
      outgoing.end(body);
    });
  }

  return {
    send(node, request) {
      if (node.httpAddress === null) {
        return Promise.reject(markNotAccepted(TesseraError.unavailable(`node '${node.id}' has no HTTP address for LLM routes`)));
      }
      return options.breakers === undefined ? call(node, request) : options.breakers.run(node.id, () => call(node, request));
    },
    close() {
      agent.destroy();
    },
  };
}
