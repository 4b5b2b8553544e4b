/** Two raw-path handlers on one front door (infer and LLM routes): a request goes to the first that accepts it. */
import type { RawHttp1Handler } from './connection.js';

export function chainRawHandlers(first: RawHttp1Handler, second: RawHttp1Handler): RawHttp1Handler {
  return {
    accepts: (head) => first.accepts(head) || second.accepts(head),
    // `accepts` is asked again: the handlers remember their last target's parse (last-target.ts).
    serve: (request, reply) => (first.accepts(request.head) ? first : second).serve(request, reply),
  };
}
