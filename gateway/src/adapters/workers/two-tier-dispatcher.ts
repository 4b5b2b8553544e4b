/**
 * The two-tier option (docs/edge.md): the edge Worker does auth, cache and the coarse per-tenant
 * quota, and forwards inference to Node gateways (`UPSTREAM_GATEWAYS`), which do priority admission,
 * least-queue routing and gRPC fan-out over their Redis fleet view. No AdmissionDO, no FleetDO.
 *
 * - The client's own key (`Authorization` / `x-api-key`) is forwarded, so the Node gateway applies
 *   the tenant's tier to admission; both tiers must know the same keys (seed both from one config).
 * - The remaining deadline goes as `x-tessera-deadline-ms` (the Node gateway may only shorten it).
 * - Tensors travel as binary sections; the Node gateway's own cache is bypassed (`no-store`): the
 *   edge has just missed its cache, and a second cache layer would only add a lookup.
 * - A gateway that cannot be reached is retried once on the next one; anything else is returned as is
 *   (status, message and Retry-After survive the hop).
 * - Metadata and config go with `UPSTREAM_API_KEY` (the core asks for them without client headers);
 *   readiness is "some upstream is configured" (the Node gateway answers per model).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import {
  decodeInferResponseBody,
  encodeInferRequestBody,
  httpErrorFromResponse,
  INFERENCE_HEADER_CONTENT_LENGTH,
} from '../../../../shared/src/kserve/index.js';
import type { GatewayDispatcher } from '../../core/app/index.js';
import { toAbortSignal, type CancelSignal } from '../../core/http/index.js';

export interface TwoTierOptions {
  /** Base URLs of the Node gateways, e.g. `https://gw-eu.example.com`. At least one. */
  readonly upstreams: readonly string[];
  /** Key used for metadata and config calls; default none (those calls then go without a key). */
  readonly apiKey?: string;
  /** Default: the global fetch. */
  readonly fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Default Date.now. */
  readonly now?: () => number;
}

export function createTwoTierDispatcher(options: TwoTierOptions): GatewayDispatcher {
  if (options.upstreams.length === 0) throw TesseraError.invalidArg('two-tier mode needs at least one upstream gateway');
  const upstreams = options.upstreams.map((u) => u.replace(/\/+$/, ''));
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const now = options.now ?? Date.now;
  let next = 0;

  const path = (model: string, version: string | undefined, suffix: string): string =>
    `/v2/models/${encodeURIComponent(model)}${version ? `/versions/${encodeURIComponent(version)}` : ''}${suffix}`;

  /** One call, on the next upstream in turn; a network failure is retried once on the following one. */
  async function call(pathname: string, init: RequestInit, deadline: number, cancel: CancelSignal | undefined): Promise<Response> {
    const signal = cancel === undefined ? undefined : toAbortSignal(cancel);
    const first = next++ % upstreams.length;
    let lastError: unknown;
    for (let attempt = 0; attempt < Math.min(2, upstreams.length); attempt++) {
      const remaining = Math.floor(deadline - now());
      if (remaining <= 0) throw TesseraError.deadlineExceeded('the deadline passed before an upstream gateway answered');
      const headers = new Headers(init.headers);
      headers.set(DEADLINE_HEADER, String(remaining));
      try {
        return await doFetch(`${upstreams[(first + attempt) % upstreams.length]}${pathname}`, {
          ...init,
          headers,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        if (signal?.aborted) throw TesseraError.cancelled('the client cancelled the request');
        lastError = error;
      }
    }
    throw new TesseraError('UNAVAILABLE', `no upstream gateway could be reached: ${(lastError as Error).message}`, { retryAfterMs: 1000 });
  }

  async function failure(response: Response): Promise<TesseraError> {
    const error = httpErrorFromResponse(response.status, new Uint8Array(await response.arrayBuffer()));
    const retryAfter = Number(response.headers.get('retry-after'));
    return Number.isFinite(retryAfter) && retryAfter > 0 ? new TesseraError(error.code, error.message, { retryAfterMs: retryAfter * 1000 }) : error;
  }

  async function metadata(model: string, version: string | undefined, suffix: string, ctx: { deadline: number; signal?: CancelSignal }): Promise<unknown> {
    const headers: Record<string, string> = options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` };
    const response = await call(path(model, version, suffix), { method: 'GET', headers }, ctx.deadline, ctx.signal);
    if (!response.ok) throw await failure(response);
    return response.json();
  }

  return {
    async dispatch(request, ctx) {
      const encoded = encodeInferRequestBody(request, { binaryInputs: true, binaryDataOutput: true });
      const headers: Record<string, string> = { ...encoded.headers, 'cache-control': 'no-store' };
      for (const name of ['authorization', 'x-api-key']) {
        const value = ctx.headers?.get(name);
        if (value !== null && value !== undefined) headers[name] = value;
      }
      const response = await call(path(request.modelName, request.modelVersion, '/infer'), { method: 'POST', headers, body: encoded.body }, ctx.deadline, ctx.signal);
      if (!response.ok) throw await failure(response);
      const body = new Uint8Array(await response.arrayBuffer());
      return { response: decodeInferResponseBody(body, response.headers.get(INFERENCE_HEADER_CONTENT_LENGTH)) };
    },
    modelConfig: (model, version, ctx) => metadata(model, version, '/config', ctx),
    modelMetadata: (model, version, ctx) => metadata(model, version, '', ctx),
    modelReady: () => true,
  };
}
