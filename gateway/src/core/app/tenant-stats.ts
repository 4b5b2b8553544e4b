/**
 * Triton's model statistics (`GET /v2/models/stats`, `/v2/models/{m}[/versions/{v}]/stats`) as a
 * tenant sees them through the gateway: counts of that tenant's own inferences through this gateway
 * process, in Triton's JSON shape. The gateway sees whole requests, not the node's phases, so
 * `success`/`fail` carry the request time, `cache_hit`/`cache_miss` the response cache's outcomes, and
 * the node-side phases (queue, compute_*) stay zero; `execution_count` counts requests that reached a
 * node (cache misses and bypasses). A replica counts what it served.
 */

interface Duration {
  count: number;
  ns: number;
}

interface Counters {
  lastInference: number;
  inferenceCount: number;
  executionCount: number;
  success: Duration;
  fail: Duration;
  cacheHit: Duration;
  cacheMiss: Duration;
}

export type InferOutcome = 'success' | 'fail';
export type CacheOutcome = 'HIT' | 'MISS' | 'BYPASS';

const zero = (): Duration => ({ count: 0, ns: 0 });
const fresh = (): Counters => ({ lastInference: 0, inferenceCount: 0, executionCount: 0, success: zero(), fail: zero(), cacheHit: zero(), cacheMiss: zero() });

export class TenantStats {
  /** tenant → "model\0version" → counters. */
  private readonly byTenant = new Map<string, Map<string, Counters>>();

  record(tenant: string, model: string, version: string, outcome: InferOutcome, durationMs: number, at: number, cache?: CacheOutcome): void {
    let models = this.byTenant.get(tenant);
    if (models === undefined) this.byTenant.set(tenant, (models = new Map()));
    const key = `${model}\u0000${version}`;
    let c = models.get(key);
    if (c === undefined) models.set(key, (c = fresh()));
    const ns = Math.max(0, Math.round(durationMs * 1e6));
    c.lastInference = at;
    const target = outcome === 'success' ? c.success : c.fail;
    target.count += 1;
    target.ns += ns;
    if (outcome !== 'success') return;
    c.inferenceCount += 1;
    if (cache === 'HIT') {
      c.cacheHit.count += 1;
      c.cacheHit.ns += ns;
    } else {
      c.executionCount += 1;
      if (cache === 'MISS') {
        c.cacheMiss.count += 1;
        c.cacheMiss.ns += ns;
      }
    }
  }

  /**
   * Triton's `{"model_stats": [...]}` for one tenant: every model (or the one named, every version or
   * the one named) it used, sorted; `alsoList` adds zero entries for models it may use but did not yet.
   */
  snapshot(tenant: string, filter: { model?: string; version?: string } = {}, alsoList: readonly string[] = []): { model_stats: unknown[] } {
    const rows = new Map<string, Counters>(this.byTenant.get(tenant) ?? []);
    for (const name of alsoList) {
      if (![...rows.keys()].some((key) => key.startsWith(`${name}\u0000`))) rows.set(`${name}\u0000${filter.version ?? ''}`, fresh());
    }
    const stats = [...rows.entries()]
      .map(([key, c]) => {
        const [name, version] = key.split('\u0000') as [string, string];
        return { name, version, c };
      })
      .filter((row) => (filter.model === undefined || row.name === filter.model) && (filter.version === undefined || row.version === filter.version))
      .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version))
      .map(({ name, version, c }) => ({
        name,
        version,
        last_inference: c.lastInference,
        inference_count: c.inferenceCount,
        execution_count: c.executionCount,
        inference_stats: {
          success: { ...c.success },
          fail: { ...c.fail },
          queue: zero(),
          compute_input: zero(),
          compute_infer: zero(),
          compute_output: zero(),
          cache_hit: { ...c.cacheHit },
          cache_miss: { ...c.cacheMiss },
        },
        response_stats: {},
        batch_stats: [],
        memory_usage: [],
      }));
    return { model_stats: stats };
  }
}
