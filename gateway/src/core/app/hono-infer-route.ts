/**
 * `POST /v2/models/{m}[/versions/{v}]/infer` in the Hono app (Workers, `app.fetch`), as an adapter over
 * DirectInfer (direct-infer.ts): the Web Request becomes a DirectInferRequest and the HttpAnswer a
 * Response. The steps around the route (request id and span, authentication, extra headers, metric,
 * span end, access line) are DirectInfer's, the same the Node fast path and the gRPC front door run,
 * so they exist once. Registered before the app's generic middlewares, which therefore never see it.
 */
import type { Context, Hono } from 'hono';
import { answerToResponse, readBodyLimited } from '../http/index.js';
import type { AppEnv } from './app-env.js';
import type { DirectInfer, DirectInferRequest } from './direct-infer.js';
import { pathOf } from './request-telemetry.js';

export const INFER_PATHS = ['/v2/models/:model/infer', '/v2/models/:model/versions/:version{[0-9]+}/infer'] as const;

export function registerInferRoute(app: Hono<AppEnv>, serveInfer: DirectInfer): void {
  const handler = async (c: Context<AppEnv>): Promise<Response> => {
    const raw = c.req.raw;
    const request: DirectInferRequest = {
      path: pathOf(raw.url),
      headers: raw.headers,
      readBody: (maxBytes) => readBodyLimited(raw, maxBytes),
      signal: raw.signal,
    };
    const version = c.req.param('version');
    // A version keeps its value but not its leading zeros (as the other model routes read it).
    return answerToResponse(await serveInfer(request, c.req.param('model') ?? '', version === undefined ? undefined : BigInt(version).toString()));
  };
  for (const path of INFER_PATHS) app.post(path, handler);
}
