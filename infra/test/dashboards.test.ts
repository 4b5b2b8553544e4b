/**
 * Grafana dashboards and provisioning: well-formed, wired to the provisioned datasource, and every
 * PromQL expression valid for promtool (each is wrapped as a recording rule and checked).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allPanels, dashboardExpressions, loadDashboards } from './support/observability.js';
import { metricNames, resolveGrafanaVariables, variableQueryExpr } from './support/promql.js';
import { INFRA, run } from './support/tools.js';
import { parseYaml } from './support/yaml.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-dashboards-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('PromQL name extraction', () => {
  it('keeps series names and drops functions, labels, ranges, modifiers and numbers', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le, tier) (rate(a_bucket{route="infer",x=~"b|c"}[5m])))')).toEqual(['a_bucket']);
    expect(metricNames('x:y:z < 0.5 * (x:y:z offset 1h) and on (model) w > 1e-9')).toEqual(['w', 'x:y:z']);
    expect(metricNames('count(up{job="n"} == 1) or vector(0)')).toEqual(['up']);
    expect(metricNames('sum(rate(m_total[5m])) by (tenant) / ignoring(result) group_left n')).toEqual(['m_total', 'n']);
    expect(variableQueryExpr('label_values(q_total{a="b"}, tenant)')).toBe('q_total{a="b"}');
    expect(resolveGrafanaVariables('rate(m{t=~"$tenant"}[$__rate_interval])')).toBe('rate(m{t=~".*"}[5m])');
  });
});

describe('grafana dashboards', () => {
  const dashboards = loadDashboards();

  it('has the overview, cache, tenants and nodes dashboards with unique uids and panel ids', () => {
    expect(dashboards.map((d) => path.basename(d.file))).toEqual(['cache.json', 'nodes.json', 'overview.json', 'tenants.json']);
    expect(new Set(dashboards.map((d) => d.dashboard.uid)).size).toBe(dashboards.length);
    for (const { dashboard } of dashboards) {
      const ids = allPanels(dashboard).map((p) => p.id);
      expect(new Set(ids).size, `${dashboard.uid}: duplicate panel ids`).toBe(ids.length);
    }
  });

  it('points every panel and variable at the provisioned Prometheus datasource', () => {
    const provisioning = parseYaml(readFileSync(path.join(INFRA, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as { datasources: { uid: string; type: string }[] };
    const uid = provisioning.datasources.find((d) => d.type === 'prometheus')?.uid;
    expect(uid).toBeTruthy();
    for (const { dashboard } of dashboards) {
      for (const panel of allPanels(dashboard).filter((p) => p.type !== 'row')) {
        expect(panel.datasource?.uid, `${dashboard.uid}: ${panel.title}`).toBe(uid);
        expect(panel.targets?.length, `${dashboard.uid}: ${panel.title} has no query`).toBeGreaterThan(0);
      }
      for (const variable of dashboard.templating?.list ?? []) expect(variable.datasource?.uid).toBe(uid);
    }
  });

  it('covers what the runbook asks of each dashboard', () => {
    const exprs = (uid: string) => dashboardExpressions().filter((e) => e.where.startsWith(`grafana/dashboards/${uid}.json`)).map((e) => e.expr).join('\n');
    expect(exprs('cache')).toMatch(/cache_hit:ratio/);
    expect(exprs('cache')).toMatch(/cache_served_bytes_total/);
    expect(exprs('cache')).toMatch(/cache_compute_saved_seconds_total/);
    expect(exprs('tenants')).toMatch(/admission_rejections/);
    expect(exprs('tenants')).toMatch(/rate_limited/);
    expect(exprs('tenants')).toMatch(/request_duration_seconds_bucket/);
    expect(exprs('tenants')).toMatch(/llm_tokens_total/);
    for (const m of ['nv_inference_queue_duration_us', 'nv_inference_compute_infer_duration_us', 'nv_inference_exec_count', 'nv_inference_pending_request_count', 'nv_gpu_utilization']) {
      expect(exprs('nodes')).toContain(m);
    }
  });

  it('every expression is valid PromQL (promtool check rules on each wrapped as a recording rule)', () => {
    const expressions = dashboardExpressions();
    const rules = expressions.map((e, i) => `      - record: dashboard_expr_${i}\n        expr: ${JSON.stringify(e.expr)}`);
    const file = path.join(tmp, 'dashboard-exprs.rules.yml');
    writeFileSync(file, `groups:\n  - name: dashboards\n    rules:\n${rules.join('\n')}\n`);
    const result = run('promtool', ['check', 'rules', file]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`SUCCESS: ${expressions.length} rules found`);
  });

  it('is provisioned from the folder compose mounts', () => {
    const provider = parseYaml(readFileSync(path.join(INFRA, 'grafana/provisioning/dashboards/tessera.yml'), 'utf8')) as { providers: { options: { path: string } }[] };
    const compose = parseYaml(readFileSync(path.join(INFRA, 'compose/compose.yaml'), 'utf8')) as { services: { grafana: { volumes: string[] } } };
    const mount = compose.services.grafana.volumes.find((v) => v.startsWith('../grafana/dashboards:'));
    expect(mount?.split(':')[1]).toBe(provider.providers[0]?.options.path);
  });
});
