/**
 * A bound on the requests one HTTP/1.1 connection may have in progress at once.
 *
 * Node's HTTP server hands every pipelined request to the handler as soon as it is parsed; it stops
 * reading a connection only when unsent responses pile up, which slow handlers never do. So one client
 * can start any number of requests with a single write on a single connection: the HTTP/1.1
 * counterpart of opening unlimited HTTP/2 streams, which the node's gRPC server bounds with
 * `grpc.max_concurrent_streams`.
 *
 * HTTP/1.1 cannot advertise a limit, so a request beyond it is refused the way an HTTP/2 server refuses
 * a stream it cannot take: 503 with `Connection: close`, not processed, so safe to send again on a new
 * connection (a pipelining client must be ready to resend what a closed connection left unanswered,
 * RFC 9112 §9.3.2). The requests before it are answered as usual and in order; the ones after it on
 * that connection are refused too, since the connection closes after the first refusal.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, httpStatusOf, TesseraError } from '../errors/index.js';

/**
 * Requests one connection may have in progress (default). Clients that pipeline at all (curl and the
 * browsers do not) keep a few requests outstanding; 32 leaves them room and bounds the rest.
 */
export const DEFAULT_MAX_PIPELINED_REQUESTS = 32;

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => unknown;

export function limitPipelinedRequests(handler: RequestHandler, maxPerConnection = DEFAULT_MAX_PIPELINED_REQUESTS): RequestHandler {
  if (!Number.isSafeInteger(maxPerConnection) || maxPerConnection < 1) {
    throw TesseraError.invalidArg(`the pipelined request limit must be a positive integer, got ${maxPerConnection}`);
  }
  // Per connection: requests handed to `handler` whose response has not closed yet.
  const inProgress = new WeakMap<Socket, number>();
  const closing = new WeakSet<Socket>();
  return (request, response) => {
    const socket = request.socket;
    const count = inProgress.get(socket) ?? 0;
    if (closing.has(socket) || count >= maxPerConnection) {
      closing.add(socket);
      refuse(response, maxPerConnection);
      return;
    }
    inProgress.set(socket, count + 1);
    // 'close' follows the response being sent, or the connection dropping: either way the slot frees.
    response.once('close', () => inProgress.set(socket, (inProgress.get(socket) ?? 1) - 1));
    return handler(request, response);
  };
}

function refuse(response: ServerResponse, limit: number): void {
  const error = TesseraError.unavailable(
    `more than ${limit} requests in progress on one connection; this one was not processed, send it again on a new connection`,
  );
  const body = JSON.stringify(errorBody(error));
  response.writeHead(httpStatusOf(error.code), {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}
