/**
 * The metric names a PromQL expression reads. A small lexer, not a parser: promtool checks syntax
 * (dashboards.test.ts); this only has to find every series selector's name. It drops string literals,
 * label matchers, range and subquery brackets, label lists of by/without/on/ignoring/group_x,
 * offsets and numbers, then keeps the identifiers not followed by "(" (functions, aggregations).
 */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan', 'atan2']);

export function metricNames(expr: string): string[] {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  s = s.replace(/\{[^}]*\}/g, ' ');
  s = s.replace(/\[[^\]]*\]/g, ' ');
  s = s.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  s = s.replace(/\boffset\s+-?[0-9a-z]+/g, ' ');
  const names = new Set<string>();
  for (const match of s.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = match[0];
    const start = match.index ?? 0;
    // The "e" of 1e-9, the "m" of a bare duration: part of a number, not a name.
    if (start > 0 && /[0-9.]/.test(s[start - 1] ?? '')) continue;
    if (/^\s*\(/.test(s.slice(start + name.length))) continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names].sort();
}

/** Grafana template variables made concrete, so the expression is plain PromQL. */
export function resolveGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__(?:rate_)?interval\b/g, '5m')
    .replace(/\$__range\b/g, '1h')
    .replace(/\$\{?\w+\}?/g, '.*');
}

/** The selector inside a Grafana `label_values(selector, label)` variable query; other queries as they are. */
export function variableQueryExpr(query: string): string {
  const match = /^\s*label_values\(\s*(.*),\s*\w+\s*\)\s*$/s.exec(query);
  return match?.[1] ?? query;
}
