/**
 * The infer fast path on our own HTTP/1.1 reader (shared/src/http/raw-http1): the same logic and answers as
 * native-infer.ts (runInfer, errorAnswer), without node:http's per-request objects. It takes only the requests
 * native-infer would serve (a path matchInferPath accepts, the inference restriction met); every other request
 * hands its connection to node:http, which serves it and the rest of that connection as before.
 *
 * Behind a switch (`rawHttp1` in the server options; the node's `--http-raw-reader`, default true).
 */
import { isTesseraError, TesseraError } from '../../../../shared/src/errors/index.js';
import { matchInferPath, type InferTarget } from '../../../../shared/src/http/index.js';
import { rememberLastTarget, type RawAnswer, type RawHttp1Handler, type RawRequest } from '../../../../shared/src/http/raw-http1/index.js';
import { allowedBy, type Restriction } from '../restricted-apis.js';
import type { ReadBodyOptions } from './body-reader.js';
import { connectionSignal } from './connection-signal.js';
import { runInfer, type InferHttpInput, type InferRouteContext } from './infer-route.js';
import { withLoadHeaders } from './load-headers.js';
import { errorAnswer, type HttpLogger } from './responses.js';

export function createRawInferHandler(context: InferRouteContext, logger: HttpLogger, restriction?: Restriction): RawHttp1Handler {
  const match = rememberLastTarget(matchInferPath);
  return {
    accepts(head) {
      if (restriction !== undefined && !allowedBy(restriction, head.headers.get(restriction.header.toLowerCase()))) return false;
      return match(head.target) !== undefined;
    },
    serve(request, reply) {
      void serve(context, logger, request, reply, match(request.head.target) as InferTarget);
    },
  };
}

async function serve(context: InferRouteContext, logger: HttpLogger, request: RawRequest, reply: RawAnswer, target: InferTarget): Promise<void> {
  // Aborted when the connection closes, as on the node:http path (connection-signal.ts).
  const clientSignal = connectionSignal(request.socket);
  try {
    const answer = await runInfer(context, new RawInferInput(request, clientSignal), target.model, target.version);
    reply.answer(200, withLoadHeaders(answer.headers, context.core, target.model), answer.chunks, answer.byteLength);
  } catch (error) {
    const failure = clientSignal.aborted && !isTesseraError(error) ? TesseraError.cancelled('the client closed the connection') : error;
    const answer = errorAnswer(failure, logger, { method: 'POST', url: request.head.target });
    const body = Buffer.from(answer.body, 'utf8');
    reply.answer(answer.status, withLoadHeaders({ ...answer.headers }, context.core, target.model), [body], body.byteLength);
  }
}

/** The request as infer-route.ts reads it: the whole body is already here, within the node's body limit. */
class RawInferInput implements InferHttpInput {
  constructor(
    private readonly request: RawRequest,
    readonly clientSignal: AbortSignal,
  ) {}

  header(name: string): string | null {
    return this.request.head.headers.get(name) ?? null;
  }

  readBody(_options: ReadBodyOptions): Promise<Uint8Array> {
    return Promise.resolve(this.request.body);
  }
}
