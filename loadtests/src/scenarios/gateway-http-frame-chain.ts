/**
 * The steps of an HTTP binary no-store miss between the node's ModelInferResponse bytes and the answer
 * the node:http fast path writes, called as the gateway calls them (h2-transport.ts, infer-route.ts,
 * the cache's bypass): gateway-http-frame-micro.ts times them.
 */
import { readNodeAnswer } from '../../../gateway/src/adapters/grpc/infer-response-reader.js';
import { EncodedOnRead } from '../../../gateway/src/core/app/encoded-on-read.js';
import { bypassRunOf, withResponseId } from '../../../gateway/src/core/cache/index.js';
import { rememberReceivedResponse } from '../../../shared/src/grpc/index.js';

const options = { binaryOutputDefault: true, outputBinary: new Map<string, boolean>() };

export function frameHttpMiss(message: Buffer, id: string): unknown {
  const decoded = readNodeAnswer(message);
  rememberReceivedResponse(decoded, message);
  const produced = new EncodedOnRead(decoded, options, 100);
  const cached = bypassRunOf(produced);
  // infer-route.ts: the answer framed once with the id when the cache did not read the body.
  const framed = produced.answerWithId(id);
  if (framed !== undefined) {
    framed.headers['x-cache'] = cached.status;
    return { status: 200, headers: framed.headers, body: framed.body, inferResponse: decoded };
  }
  const result = withResponseId(cached, id);
  return { status: 200, headers: { ...result.headers, 'x-cache': cached.status }, body: result.body, inferResponse: decoded };
}
