/**
 * The observability files against the running services: a real node (with a stand-in nvidia-smi so
 * its GPU families register, and a Redis URL so its load-report families do) and the real gateway
 * in front of it. Every metric name a dashboard or rule reads must be one these processes expose or a
 * recording rule defines; a real Prometheus scrapes both with the real rules and answers a recording
 * rule; the images' health-check script is run against the node.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardExpressions, loadRules, recordedNames, ruleExpressions, ruleFiles } from './support/observability.js';
import { exposedNames, freePort, startGateway, startNode, startProcess, until, type GatewayProcess, type NodeProcess, type Started } from './support/processes.js';
import { metricNames } from './support/promql.js';
import { INFRA, REPO_ROOT, requireTool } from './support/tools.js';

/** Series Prometheus itself writes for every target. */
const SYNTHETIC = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped', 'scrape_samples_post_metric_relabeling', 'scrape_series_added']);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-live-'));
let node: NodeProcess;
let gateway: GatewayProcess;
let exposed: { node: Set<string>; gateway: Set<string> };
let prometheus: Started | undefined;
let promPort: number;

function startPrometheus(port: number, nodeMetricsPort: number, gatewayPort: number): Started {
  requireTool('prometheus');
  const config = path.join(tmp, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      ...ruleFiles().map((f) => `  - ${JSON.stringify(f)}`),
      'scrape_configs:',
      '  - job_name: tessera-node',
      '    static_configs:',
      `      - targets: ["127.0.0.1:${nodeMetricsPort}"]`,
      '  - job_name: tessera-gateway',
      '    static_configs:',
      `      - targets: ["127.0.0.1:${gatewayPort}"]`,
      '',
    ].join('\n'),
  );
  return startProcess('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${path.join(tmp, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`]);
}

/**
 * The node, the gateway and Prometheus on ports chosen here (the gateway's static fleet and Prometheus's
 * config name them), all starting at once: each takes seconds on a busy box.
 */
async function startAll(models: string): Promise<void> {
  const ports = { http: await freePort(), grpc: await freePort(), metrics: await freePort() };
  const config = path.join(tmp, 'gateway.json');
  writeFileSync(config, JSON.stringify({ host: '127.0.0.1', metrics: { requireAdminKey: false }, nodes: [{ id: 'n1', grpc: `127.0.0.1:${ports.grpc}`, http: `127.0.0.1:${ports.http}` }] }));
  const env = { PATH: `${path.join(INFRA, 'test/fixtures')}${path.delimiter}${process.env.PATH ?? ''}` };
  const gatewayPort = await freePort();
  // Prometheus starts alongside them too, scraping every second with the real rule files.
  promPort = await freePort();
  prometheus = startPrometheus(promPort, ports.metrics, gatewayPort);
  // Port 1 refuses connections: the reporter runs (and registers its series) without a Redis.
  const [started, front] = await Promise.allSettled([startNode(models, ['--redis-url', 'redis://127.0.0.1:1'], env, ports), startGateway(config, gatewayPort)]);
  if (started.status === 'fulfilled') node = started.value;
  if (front.status === 'fulfilled') gateway = front.value;
  if (started.status === 'rejected') throw started.reason;
  if (front.status === 'rejected') throw front.reason;
  const ready = `http://127.0.0.1:${promPort}/-/ready`;
  await until('prometheus ready', prometheus, async () => ((await fetch(ready).catch(() => undefined))?.ok ? true : undefined));
}

beforeAll(async () => {
  const models = path.join(tmp, 'models');
  const written = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin/tessera-models.js'), '--out', models, '--only', 'simple'], { encoding: 'utf8' });
  expect(written.status, written.stderr).toBe(0);
  // A port found free can be taken before its process binds it (another suite's outgoing connection draws
  // from the same ephemeral range): then all three start again on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      await startAll(models);
      break;
    } catch (error) {
      await Promise.allSettled([prometheus?.stop(), gateway?.stop(), node?.stop()]);
      if (attempt === 3 || !/EADDRINUSE|address already in use/i.test(String((error as Error).message))) throw error;
    }
  }
  const scrape = async (port: number) => exposedNames(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  exposed = { node: await scrape(node.metricsPort), gateway: await scrape(gateway.port) };
});

afterAll(async () => {
  await Promise.allSettled([prometheus?.stop(), gateway?.stop(), node?.stop()]);
  rmSync(tmp, { recursive: true, force: true });
});

describe('metric names', () => {
  it('the running node exposes Triton\'s families, GPU families and load-report families', () => {
    for (const name of ['nv_inference_queue_duration_us', 'nv_gpu_utilization', 'tessera_inference_batch_size_bucket', 'tessera_node_load_report_connected']) {
      expect(exposed.node).toContain(name);
    }
    expect(exposed.gateway).toContain('tessera_gateway_requests_total');
  });

  it('every PromQL expression in every dashboard and rule names a metric the code registers or a rule records', () => {
    const rules = loadRules();
    const known = new Set([...exposed.node, ...exposed.gateway, ...recordedNames(rules), ...SYNTHETIC]);
    const expressions = [...dashboardExpressions(), ...ruleExpressions(rules)];
    expect(expressions.length).toBeGreaterThan(60);
    const unknown = expressions.flatMap((e) => metricNames(e.expr).filter((n) => !known.has(n)).map((n) => `${e.where}: ${n}`));
    expect(unknown).toEqual([]);
    // And no expression is empty of metrics (a typo that lexes as a function would hide one).
    for (const e of expressions) expect(metricNames(e.expr).length, e.where).toBeGreaterThan(0);
  });
});

describe('container health check script', () => {
  const check = (url: string) =>
    new Promise<number | null>((resolve) => {
      // A generous timeout: four Node processes starting at once on a loaded 2-core box took over the 2 s default.
      spawn(process.execPath, [path.join(INFRA, 'docker/healthcheck.mjs'), url, '30000'], { stdio: 'ignore' }).once('exit', (code) => resolve(code));
    });

  it('passes on a ready node and gateway, fails on a closed port and on a non-2xx answer', async () => {
    const closed = await freePort();
    const codes = await Promise.all([
      check(`http://127.0.0.1:${node.httpPort}/v2/health/ready`),
      check(`http://127.0.0.1:${gateway.port}/v2/health/ready`),
      check(`http://127.0.0.1:${closed}/v2/health/ready`),
      check(`http://127.0.0.1:${node.httpPort}/v2/models/no-such-model/ready`),
    ]);
    expect(codes).toEqual([0, 0, 1, 1]);
  });
});

describe('a real Prometheus', () => {
  it('scrapes the node and the gateway with the real rules and answers a recording rule', async () => {
    const port = promPort;
    const query = async (q: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
      if (!res?.ok) return [];
      return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
    };
    // Traffic while waiting, so the rates have increases to divide.
    const body = JSON.stringify({ inputs: ['INPUT0', 'INPUT1'].map((name) => ({ name, shape: [1, 16], datatype: 'INT32', data: Array.from({ length: 16 }, (_, i) => i) })) });
    let sending = true;
    const traffic = (async () => {
      while (sending) {
        await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/simple/infer`, { method: 'POST', body }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      const sample = await until('a sample of model_version:nv_inference_batch_size:avg_rate5m', prometheus, async () => {
        const result = await query('model_version:nv_inference_batch_size:avg_rate5m{model="simple"}');
        const value = Number(result[0]?.value[1]);
        return Number.isFinite(value) && value > 0 ? { labels: result[0]?.metric, value } : undefined;
      });
      expect(sample.labels).toEqual({ __name__: 'model_version:nv_inference_batch_size:avg_rate5m', model: 'simple', version: '1' });
      // simple takes [1,16]: one batch element per request; the batcher can only merge, never split.
      expect(sample.value).toBeGreaterThanOrEqual(1);
      const up = await query('up');
      expect(Object.fromEntries(up.map((r) => [r.metric.job, r.value[1]]))).toEqual({ 'tessera-node': '1', 'tessera-gateway': '1' });
    } finally {
      sending = false;
      await traffic;
    }
  });
});
