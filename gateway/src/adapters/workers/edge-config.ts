/**
 * The edge build's settings, from the Worker's environment (wrangler.toml vars and secrets):
 *
 * | name                 | default        | meaning                                                        |
 * |----------------------|----------------|----------------------------------------------------------------|
 * | GATEWAY_CONFIG       | `{}`           | the gateway config JSON (same schema as `--config` on Node); its tiers, tenants (seeded into KV), routing, cache settings and request limits apply; `port`, `host`, `redisUrl`, `nodes` are ignored |
 * | TESSERA_ADMIN_KEY    | none           | admin key (secret, plaintext); else the config's adminKeyHash; neither → admin API disabled |
 * | TESSERA_FLEET_TOKEN  | none           | token for `POST /admin/fleet/report` (secret); none → reports refused |
 * | NODE_URL_SCHEME      | `http`         | how nodes' reported `host:port` are reached (`http` or `https`) |
 * | FLEET_REFRESH_MS     | `1000`         | how often isolates and admission objects re-read the fleet     |
 * | UPSTREAM_GATEWAYS    | none           | two-tier mode: comma-separated Node gateway base URLs (docs/edge.md) |
 * | UPSTREAM_API_KEY     | none           | two-tier mode: key for metadata calls to those gateways (secret) |
 *
 * Parsed once per isolate (the env does not change within one) and checked as strictly as on Node:
 * a bad value fails every request with a clear 500 rather than running on a guess.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { loadGatewayConfig, type GatewayConfig } from '../../config/index.js';
import { sha256Hex } from '../../core/auth/index.js';
import type { EdgeEnv } from './workers-bindings.js';

export interface EdgeSettings {
  readonly config: GatewayConfig;
  /** sha256 hex of the fleet token, or null (reports refused). */
  readonly fleetTokenHash: string | null;
  readonly nodeScheme: 'http' | 'https';
  readonly fleetRefreshMs: number;
  /** Two-tier mode when non-empty: the Node gateways' base URLs. */
  readonly upstreams: readonly string[];
  readonly upstreamApiKey: string | undefined;
}

export const DEFAULT_FLEET_REFRESH_MS = 1000;

let cached: { readonly source: string; readonly settings: Promise<EdgeSettings> } | undefined;

export function edgeSettings(env: Partial<EdgeEnv>): Promise<EdgeSettings> {
  const source = JSON.stringify([env.GATEWAY_CONFIG, env.TESSERA_ADMIN_KEY, env.TESSERA_FLEET_TOKEN, env.NODE_URL_SCHEME, env.FLEET_REFRESH_MS, env.UPSTREAM_GATEWAYS, env.UPSTREAM_API_KEY]);
  if (cached?.source !== source) cached = { source, settings: parseEdgeSettings(env) };
  return cached.settings;
}

async function parseEdgeSettings(env: Partial<EdgeEnv>): Promise<EdgeSettings> {
  const base = loadGatewayConfig(env.GATEWAY_CONFIG === undefined || env.GATEWAY_CONFIG.trim() === '' ? '{}' : env.GATEWAY_CONFIG);
  const adminKey = nonEmpty(env.TESSERA_ADMIN_KEY);
  const config: GatewayConfig = { ...base, adminKeyHash: adminKey === undefined ? base.adminKeyHash : await sha256Hex(adminKey) };
  const fleetToken = nonEmpty(env.TESSERA_FLEET_TOKEN);
  const scheme = nonEmpty(env.NODE_URL_SCHEME) ?? 'http';
  if (scheme !== 'http' && scheme !== 'https') throw TesseraError.invalidArg(`NODE_URL_SCHEME must be "http" or "https" (got ${JSON.stringify(scheme)})`);
  const refreshText = nonEmpty(env.FLEET_REFRESH_MS);
  const fleetRefreshMs = refreshText === undefined ? DEFAULT_FLEET_REFRESH_MS : Number(refreshText);
  if (!Number.isSafeInteger(fleetRefreshMs) || fleetRefreshMs < 10) {
    throw TesseraError.invalidArg(`FLEET_REFRESH_MS must be an integer number of ms >= 10 (got ${JSON.stringify(refreshText)})`);
  }
  const upstreams = (env.UPSTREAM_GATEWAYS ?? '').split(',').map((u) => u.trim()).filter((u) => u !== '');
  for (const upstream of upstreams) {
    if (!/^https?:\/\/[^/\s]+\/?$/.test(upstream)) {
      throw TesseraError.invalidArg(`UPSTREAM_GATEWAYS: ${JSON.stringify(upstream)} is not a base URL like https://host[:port]`);
    }
  }
  return {
    config,
    fleetTokenHash: fleetToken === undefined ? null : await sha256Hex(fleetToken),
    nodeScheme: scheme,
    fleetRefreshMs,
    upstreams,
    upstreamApiKey: nonEmpty(env.UPSTREAM_API_KEY),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
