/**
 * GatewayMetrics for Workers: plain counters in the isolate, rendered as Prometheus text.
 *
 * prom-client does not run on Workers, and an isolate is one of many (per location, recycled at
 * will), so `/metrics` here shows one isolate's counts since it started: useful for a smoke check,
 * not for dashboards. Fleet-wide numbers on the edge come from Workers Analytics / Logpush (the
 * JSON log lines), or from the Node gateways in the two-tier setup (docs/edge.md).
 */
import type { AuthRejection, GatewayMetrics, RequestObservation } from '../../core/ports/index.js';

/** Distinct label sets kept at most; later ones are counted under "_other". */
const MAX_SERIES = 1000;

export function createIsolateMetrics(): GatewayMetrics {
  const requests = new Map<string, number>();
  const limited = new Map<string, number>();
  const rejected = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string): void => {
    const k = map.has(key) || map.size < MAX_SERIES ? key : '_other';
    map.set(k, (map.get(k) ?? 0) + 1);
  };
  const quote = (value: string): string => JSON.stringify(value);
  return {
    request(o: RequestObservation) {
      bump(requests, `route=${quote(o.route)},tenant=${quote(o.tenant || '_anonymous')},tier=${quote(o.tier)},model=${quote(o.model)},status="${o.status}"`);
    },
    rateLimited(tenant, tier) {
      bump(limited, `tenant=${quote(tenant)},tier=${quote(tier)}`);
    },
    authRejected(reason: AuthRejection) {
      bump(rejected, `reason=${quote(reason)}`);
    },
    async render() {
      const lines = ['# Counts of this Workers isolate only (see docs/edge.md).'];
      const family = (name: string, help: string, map: Map<string, number>): void => {
        lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
        for (const [labels, value] of map) lines.push(`${name}{${labels}} ${value}`);
      };
      family('tessera_gateway_requests_total', 'Requests answered by this isolate.', requests);
      family('tessera_gateway_rate_limited_total', 'Requests refused by the rate limit.', limited);
      family('tessera_gateway_auth_rejected_total', 'Requests refused by authentication.', rejected);
      return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: `${lines.join('\n')}\n` };
    },
  };
}
