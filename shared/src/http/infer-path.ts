/**
 * Recognizes an infer URL the way the Hono routes would route it, for servers that take infer requests
 * before the router: the node agent's and the gateway's node:http fast paths (native-infer.ts in
 * gpu-node/src/server/http and gateway/src/adapters/node-http).
 *
 * Deliberately narrow: it accepts only origin-form URLs whose model segment is plain (letters, digits
 * and the URL-safe punctuation that neither URL parsing nor percent-decoding changes), and never "." or
 * "..", which URL parsing would remove. Anything else (percent-escapes, a trailing slash, an absolute
 * URL) is left to the router, whose answer then stands, so the two can never route a request apart.
 */

/** `/v2/models/{model}[/versions/{digits}]/infer`, query string allowed. */
const INFER_PATH = /^\/v2\/models\/([A-Za-z0-9._~!$&'()*+,;=:@-]+)(?:\/versions\/([0-9]+))?\/infer(?:\?.*)?$/;

export interface InferTarget {
  readonly model: string;
  /** Without leading zeros, as the Hono route normalizes it; undefined when the URL names none. */
  readonly version: string | undefined;
  /** The URL's path, without the query. */
  readonly path: string;
}

/** The target of an infer URL, or undefined when the router should decide. */
export function matchInferPath(url: string): InferTarget | undefined {
  const match = INFER_PATH.exec(url);
  if (match === null) return undefined;
  const model = match[1] as string;
  if (model === '.' || model === '..') return undefined;
  const version = match[2];
  const query = url.indexOf('?');
  return {
    model,
    version: version === undefined ? undefined : BigInt(version).toString(),
    path: query < 0 ? url : url.slice(0, query),
  };
}
