/**
 * The node's load report on its HTTP infer answers (success and failure), as its gRPC answers carry it
 * in trailing metadata: the gateway's raw HTTP/1.1 upstream reads these headers to keep least-queue
 * routing fresh, and to tell an answer the node's own code gave from a broken connection (breakers).
 */
import type { NodeCore } from '../../server-api/index.js';
import { loadTrailerValues } from '../grpc/infer-handlers.js';

/** `headers` with `tessera-queue-depth` and `tessera-inflight` for `model` added (the object is the answer's own). */
export function withLoadHeaders(headers: Record<string, string>, core: NodeCore, model: string): Record<string, string> {
  return Object.assign(headers, loadTrailerValues(core, model));
}
