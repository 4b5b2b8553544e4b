/**
 * NodeTransport over KServe v2 HTTP with `fetch`: what the edge build uses, since gRPC cannot run on
 * Workers. Inputs and outputs travel as binary tensors (`binary_data_size` sections after the JSON
 * header, shared/src/kserve), so no tensor is ever spelled out as JSON numbers between edge and node.
 *
 * - URL: `<scheme>://<node.httpAddress>/v2/models/<m>[/versions/<v>]/infer` (scheme default "http").
 * - Deadline: the remaining time goes to the node as `x-tessera-deadline-ms` (shared/src/fleet) and
 *   as Triton's `timeout` parameter (µs, from the dispatcher); the fetch itself is aborted at the
 *   deadline (DEADLINE_EXCEEDED) or when the caller's signal aborts (CANCELLED).
 * - Priority: Triton's `priority` request parameter, from the tier (the node's batcher orders by it).
 * - Failures: a fetch that throws (connection refused, DNS, reset) is UNAVAILABLE marked `notAccepted`,
 *   so the dispatcher retries it once on another node; fetch cannot tell a refused connection from a
 *   reset after the node accepted, and inference on our nodes is a pure function, so a rare duplicate
 *   execution is the accepted cost. A node's non-2xx answer keeps its code (httpErrorFromResponse).
 * - No load figures come back over HTTP (the node sends them only in gRPC trailers): the edge routes
 *   on load reports plus its own in-flight counts.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import {
  decodeInferResponseBody,
  encodeInferRequestBody,
  httpErrorFromResponse,
  INFERENCE_HEADER_CONTENT_LENGTH,
} from '../../../../shared/src/kserve/index.js';
import type { NodeTransport, NodeView, UpstreamCallOptions } from '../../core/ports/index.js';
import { markNotAccepted } from '../../core/routing/index.js';

export interface HttpTransportOptions {
  /** "http" (default) or "https": how a node's reported `host:port` is reached. */
  readonly scheme?: 'http' | 'https';
  /** Default: the global fetch. */
  readonly fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Default Date.now. */
  readonly now?: () => number;
}

export function createHttpTransport(options: HttpTransportOptions = {}): NodeTransport {
  const scheme = options.scheme ?? 'http';
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const now = options.now ?? Date.now;

  function modelUrl(node: NodeView, model: string, version: string | undefined, suffix: string): string {
    if (node.httpAddress === null) {
      throw markNotAccepted(TesseraError.unavailable(`node '${node.id}' has no HTTP address; the edge reaches nodes over HTTP only`));
    }
    const versioned = version === undefined || version === '' ? '' : `/versions/${encodeURIComponent(version)}`;
    return `${scheme}://${node.httpAddress}/v2/models/${encodeURIComponent(model)}${versioned}${suffix}`;
  }

  /** fetch with the deadline and the caller's signal; maps transport failures to TesseraErrors. */
  async function call(node: NodeView, url: string, init: RequestInit, opts: UpstreamCallOptions): Promise<{ status: number; body: Uint8Array; headers: Headers }> {
    const remaining = Math.floor(opts.deadline - now());
    if (remaining <= 0) throw TesseraError.deadlineExceeded(`the deadline passed before the request was sent to node '${node.id}'`);
    if (opts.signal?.aborted) throw TesseraError.cancelled('the client cancelled the request');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, remaining);
    const onAbort = (): void => controller.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const headers = new Headers(init.headers);
    headers.set(DEADLINE_HEADER, String(remaining));
    try {
      let response: Response;
      try {
        response = await doFetch(url, { ...init, headers, signal: controller.signal });
      } catch (error) {
        if (timedOut) throw TesseraError.deadlineExceeded(`node '${node.id}' did not answer before the deadline`);
        if (opts.signal?.aborted) throw TesseraError.cancelled('the client cancelled the request');
        throw markNotAccepted(TesseraError.unavailable(`cannot reach node '${node.id}' at ${node.httpAddress}: ${(error as Error).message}`));
      }
      const body = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, body, headers: response.headers };
    } catch (error) {
      if (error instanceof TesseraError) throw error;
      if (timedOut) throw TesseraError.deadlineExceeded(`node '${node.id}' did not answer before the deadline`);
      if (opts.signal?.aborted) throw TesseraError.cancelled('the client cancelled the request');
      throw TesseraError.unavailable(`reading the answer of node '${node.id}' failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async function getJson(node: NodeView, model: string, version: string | undefined, suffix: string, opts: UpstreamCallOptions): Promise<unknown> {
    const { status, body } = await call(node, modelUrl(node, model, version, suffix), { method: 'GET' }, opts);
    if (status < 200 || status >= 300) throw httpErrorFromResponse(status, body);
    try {
      return JSON.parse(new TextDecoder().decode(body)) as unknown;
    } catch {
      throw TesseraError.internal(`node '${node.id}' answered ${suffix || 'model metadata'} with invalid JSON`);
    }
  }

  return {
    async infer(node, request, opts) {
      const parameters = {
        ...request.parameters,
        ...(opts.priority === undefined ? {} : { priority: opts.priority }),
        ...(opts.timeoutUs === undefined ? {} : { timeout: opts.timeoutUs }),
      };
      const encoded = encodeInferRequestBody({ ...request, parameters }, { binaryInputs: true, binaryDataOutput: true });
      const url = modelUrl(node, request.modelName, request.modelVersion, '/infer');
      const { status, body, headers } = await call(node, url, { method: 'POST', headers: encoded.headers, body: encoded.body }, opts);
      if (status < 200 || status >= 300) throw httpErrorFromResponse(status, body);
      return { response: decodeInferResponseBody(body, headers.get(INFERENCE_HEADER_CONTENT_LENGTH)) };
    },
    modelConfig: (node, model, version, opts) => getJson(node, model, version, '/config', opts),
    modelMetadata: (node, model, version, opts) => getJson(node, model, version, '', opts),
    async close() {},
  };
}
