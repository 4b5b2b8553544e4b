/**
 * Attack 10 (issue 14): what the shipped deployments exposed. Terraform's load balancer forwarded
 * /metrics to the internet, compose defaulted the admin key to `change-me` and published node ports
 * on every interface, and the nodes' repository API (load/unload) was open to anyone who reached a
 * node. Read here as data, the way an operator deploys them: compose (YAML), Kubernetes (rendered
 * by `kubectl kustomize` when kubectl is present), Terraform (its sources; `terraform test` runs
 * the same assertions against a mocked provider in terraform/), and the gateway configs they ship.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { INFRA, REPO_ROOT } from '../../infra/test/support/tools.js';
import { parseYaml, parseYamlTexts } from '../../infra/test/support/yaml.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- deployment files are checked field by field */
type Doc = any;

const read = (...parts: string[]): string => readFileSync(path.join(...parts), 'utf8');
const compose = parseYaml(read(INFRA, 'compose/compose.yaml')) as Doc;
const RESTRICTED = [/^--http-restricted-api=model-repository,logging:[\w-]+=.+$/, /^--grpc-restricted-protocol=model-repository,logging:[\w-]+=.+$/];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

describe('shipped deployments', () => {
  it('no deployment file ships a default admin key', () => {
    for (const file of [...filesUnder(INFRA), ...filesUnder(path.join(REPO_ROOT, 'terraform'))].filter((f) => /\.(ya?ml|json|tf|tftpl|hcl|sh)$/.test(f))) {
      expect(read(file), file).not.toMatch(/change-me/);
    }
  });

  it('compose refuses to start without the admin keys, and publishes nothing but the gateway beyond loopback', () => {
    expect(compose.services.gateway.environment.TESSERA_ADMIN_KEY).toMatch(/^\$\{TESSERA_ADMIN_KEY:\?.+\}$/);
    for (const [name, service] of Object.entries(compose.services as Record<string, Doc>)) {
      for (const port of service.ports ?? []) {
        if (name === 'gateway') continue;
        expect(String(port), `${name} publishes ${port}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      }
    }
    for (const name of ['node-1', 'node-2']) {
      const command = compose.services[name].command as string[];
      for (const flag of RESTRICTED) expect(command.some((a) => flag.test(a)), `${name}: ${flag}`).toBe(true);
      expect(command.filter((a) => a.startsWith('--') && a.includes('restricted')).every((a) => a.includes('${TESSERA_NODE_ADMIN_KEY:?'))).toBe(true);
    }
  });

  it('Prometheus scrapes the gateway with the admin key (compose secret), since /metrics needs it', () => {
    const prometheus = parseYaml(read(INFRA, 'prometheus/prometheus.yml')) as Doc;
    const gateway = prometheus.scrape_configs.find((c: Doc) => c.job_name === 'tessera-gateway');
    expect(gateway.authorization).toEqual({ type: 'Bearer', credentials_file: '/run/secrets/tessera_admin_key' });
    expect(compose.services.prometheus.secrets).toContain('tessera_admin_key');
    expect(compose.secrets.tessera_admin_key).toEqual({ environment: 'TESSERA_ADMIN_KEY' });
  });

  it('every shipped gateway config keeps /metrics behind the admin key and webhooks on https to public addresses', () => {
    for (const file of ['compose/gateway.json', 'k8s/base/gateway.json']) {
      const config = loadGatewayConfig(read(INFRA, file));
      expect(config.metrics.requireAdminKey, file).toBe(true);
      expect(config.webhooks, file).toEqual({ allowHttp: false, allow: [] });
    }
  });

  it('Terraform: the load balancer answers /metrics itself, the gateway needs the admin key, the nodes get a generated key', () => {
    const gateway = read(REPO_ROOT, 'terraform/modules/gateway/main.tf');
    const rule = /resource "aws_lb_listener_rule" "no_metrics" \{[\s\S]*?\n\}/.exec(gateway)?.[0] ?? '';
    expect(rule).toContain('listener_arn = aws_lb_listener.https.arn');
    expect(rule).toMatch(/values = \["\/metrics", "\/metrics\/\*"/);
    expect(rule).toMatch(/type = "fixed-response"[\s\S]*status_code\s*= "404"/);
    expect(gateway).toMatch(/metrics = \{ requireAdminKey = true \}/);
    const fleet = read(REPO_ROOT, 'terraform/modules/gpu-fleet/main.tf');
    expect(fleet).toContain('data "aws_secretsmanager_random_password" "node_admin_key"');
    const userData = read(REPO_ROOT, 'terraform/modules/node-user-data/main.tf');
    expect(userData).toContain('"--http-restricted-api=model-repository,logging:tessera-node-admin-key=$${TESSERA_NODE_ADMIN_KEY}"');
    expect(userData).toContain('"--grpc-restricted-protocol=model-repository,logging:admin-key=$${TESSERA_NODE_ADMIN_KEY}"');
  });

  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  (kubectl ? it : it.skip)('Kubernetes: no admin secret is generated with a value, nodes restrict their APIs, the gateway is scraped with the admin key', () => {
    const rendered = spawnSync('kubectl', ['kustomize', path.join(INFRA, 'k8s/overlays/cpu')], { encoding: 'utf8' });
    expect(rendered.status, rendered.stderr).toBe(0);
    const [docs = []] = parseYamlTexts([rendered.stdout]) as Doc[][];
    expect(docs.filter((d) => d.kind === 'Secret').map((d) => d.metadata.name.replace(/-[a-z0-9]{10}$/, ''))).toEqual(['tessera-redis']);
    const node = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'tessera-node').spec.template.spec.containers[0];
    for (const flag of RESTRICTED) expect(node.args.some((a: string) => flag.test(a)), String(flag)).toBe(true);
    expect(node.env.find((e: Doc) => e.name === 'TESSERA_NODE_ADMIN_KEY').valueFrom.secretKeyRef).toEqual({ name: 'tessera-node-admin', key: 'TESSERA_NODE_ADMIN_KEY' });
    const monitor = docs.find((d) => d.kind === 'ServiceMonitor' && d.metadata.name === 'tessera-gateway');
    expect(monitor.spec.endpoints[0].authorization.credentials).toEqual({ name: 'tessera-gateway-admin', key: 'TESSERA_ADMIN_KEY' });
  });
});
