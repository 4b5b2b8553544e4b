/**
 * Every PromQL expression the observability files hold (Grafana dashboards, variable queries,
 * recording and alerting rules), with where it comes from, and the names the recording rules define.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { INFRA } from './tools.js';
import { parseYamlTexts } from './yaml.js';
import { resolveGrafanaVariables, variableQueryExpr } from './promql.js';

export const DASHBOARD_DIR = path.join(INFRA, 'grafana', 'dashboards');
export const RULE_DIR = path.join(INFRA, 'prometheus', 'rules');

export interface Expression {
  /** e.g. "grafana/dashboards/cache.json: Hit ratio by tenant, model and version [A]". */
  readonly where: string;
  /** Plain PromQL (Grafana variables resolved). */
  readonly expr: string;
}

interface Target { expr?: string; refId?: string }
interface Panel { title?: string; type?: string; datasource?: { uid?: string }; targets?: Target[]; panels?: Panel[]; id?: number }
interface Variable { name: string; type: string; query?: string | { query?: string }; datasource?: { uid?: string } }
export interface Dashboard { uid: string; title: string; panels: Panel[]; templating?: { list: Variable[] } }

export function dashboardFiles(): string[] {
  return readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(DASHBOARD_DIR, f));
}

export function loadDashboards(): { file: string; dashboard: Dashboard }[] {
  return dashboardFiles().map((file) => ({ file, dashboard: JSON.parse(readFileSync(file, 'utf8')) as Dashboard }));
}

/** Panels with rows flattened. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

export function dashboardExpressions(): Expression[] {
  const out: Expression[] = [];
  for (const { file, dashboard } of loadDashboards()) {
    const name = path.relative(INFRA, file);
    for (const panel of allPanels(dashboard)) {
      for (const target of panel.targets ?? []) {
        if (target.expr) out.push({ where: `${name}: ${panel.title} [${target.refId}]`, expr: resolveGrafanaVariables(target.expr) });
      }
    }
    for (const variable of dashboard.templating?.list ?? []) {
      if (variable.type !== 'query') continue;
      const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
      if (query) out.push({ where: `${name}: variable $${variable.name}`, expr: resolveGrafanaVariables(variableQueryExpr(query)) });
    }
  }
  return out;
}

interface RuleGroups { groups: { name: string; rules: { record?: string; alert?: string; expr: string }[] }[] }

export function ruleFiles(): string[] {
  return readdirSync(RULE_DIR).filter((f) => f.endsWith('.rules.yml')).sort().map((f) => path.join(RULE_DIR, f));
}

export function loadRules(): { file: string; groups: RuleGroups['groups'] }[] {
  const files = ruleFiles();
  const parsed = parseYamlTexts(files.map((f) => readFileSync(f, 'utf8')));
  return files.map((file, i) => ({ file, groups: (parsed[i]?.[0] as RuleGroups).groups }));
}

export function ruleExpressions(rules = loadRules()): Expression[] {
  return rules.flatMap(({ file, groups }) =>
    groups.flatMap((g) => g.rules.map((r) => ({ where: `${path.relative(INFRA, file)}: ${r.record ?? r.alert}`, expr: r.expr }))),
  );
}

export function recordedNames(rules = loadRules()): Set<string> {
  return new Set(rules.flatMap(({ groups }) => groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : [])))));
}

export function alertNames(rules = loadRules()): Set<string> {
  return new Set(rules.flatMap(({ groups }) => groups.flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])))));
}
