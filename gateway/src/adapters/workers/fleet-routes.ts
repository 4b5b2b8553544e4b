/**
 * The edge's own routes, answered by the Worker before the core app (whose `/admin/*` needs the
 * admin key, while nodes present the fleet token):
 *
 * - `POST /admin/fleet/report`  fleet token. Body: one LoadReport JSON (shared/src/fleet) or an array
 *                               of them (a Node gateway pushing its whole fleet). 204, 400 naming the
 *                               bad field, 401 bad token, 403 when no fleet token is configured.
 * - `POST /admin/fleet/leave`   fleet token. Body `{"nodeId", "startedAt"}`: the node leaves now.
 * - `GET  /admin/fleet`         admin key. `{"reports": [...]}`: the fresh reports the edge routes on.
 * - `GET  /admin/edge/queues/{model}`  admin key. `{"model", "depth"}`: requests waiting in the model's
 *                               global admission queue.
 *
 * The fleet token goes as `Authorization: Bearer <token>` (or `x-fleet-token`); only its SHA-256 is
 * kept, compared in constant time.
 */
import { MAX_LOAD_REPORT_CHARS } from '../../../../shared/src/fleet/index.js';
import { authenticateAdmin, constantTimeEqual, sha256Hex } from '../../core/auth/index.js';
import { AccessError, jsonResponse, readBodyLimited } from '../../core/http/index.js';
import { admissionDepth } from './edge-dispatcher.js';
import type { FleetClient } from './fleet-do.js';
import type { DurableObjectNamespaceLike } from './workers-bindings.js';

export interface FleetRoutesContext {
  readonly fleet: FleetClient;
  readonly admission: DurableObjectNamespaceLike;
  readonly fleetTokenHash: string | null;
  readonly adminKeyHash: string | null;
}

/** Largest body of a report push (an array of reports from a Node gateway): 8 MiB. */
const MAX_PUSH_BYTES = 8 * MAX_LOAD_REPORT_CHARS;

/** The answer for an edge route, or undefined when the path is not one (the core app takes it). */
export async function handleFleetRoutes(request: Request, ctx: FleetRoutesContext): Promise<Response | undefined> {
  const path = new URL(request.url).pathname;
  if (path === '/admin/fleet/report' || path === '/admin/fleet/leave') {
    if (request.method !== 'POST') return jsonResponse({ error: 'Method Not Allowed' }, 405);
    await checkFleetToken(ctx.fleetTokenHash, request.headers);
    const body = new TextDecoder().decode(await readBodyLimited(request, MAX_PUSH_BYTES));
    const answer = path.endsWith('/report') ? await ctx.fleet.report(body) : await ctx.fleet.leave(body);
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  }
  if (path === '/admin/fleet') {
    if (request.method !== 'GET') return jsonResponse({ error: 'Method Not Allowed' }, 405);
    await authenticateAdmin(ctx.adminKeyHash, request.headers);
    return jsonResponse({ reports: await ctx.fleet.snapshot() });
  }
  const queue = /^\/admin\/edge\/queues\/([^/]+)$/.exec(path);
  if (queue !== null) {
    if (request.method !== 'GET') return jsonResponse({ error: 'Method Not Allowed' }, 405);
    await authenticateAdmin(ctx.adminKeyHash, request.headers);
    const model = decodeURIComponent(queue[1]!);
    return jsonResponse({ model, depth: await admissionDepth(ctx.admission, model) });
  }
  return undefined;
}

async function checkFleetToken(expectedHash: string | null, headers: Headers): Promise<void> {
  if (expectedHash === null) throw new AccessError(403, 'fleet reports are disabled: set the TESSERA_FLEET_TOKEN secret');
  const auth = headers.get('authorization');
  const token = auth !== null && /^Bearer /i.test(auth) ? auth.slice(7).trim() : headers.get('x-fleet-token');
  if (token === null || token === '' || token.length > 512) throw new AccessError(401, 'a fleet token is required (Authorization: Bearer <token>)');
  if (!constantTimeEqual(await sha256Hex(token), expectedHash)) throw new AccessError(401, 'invalid fleet token');
}
