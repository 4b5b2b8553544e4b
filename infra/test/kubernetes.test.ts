/**
 * The Kubernetes manifests as `kubectl kustomize` renders the CPU and GPU overlays: workloads, probes
 * on Triton's health routes, GPU scheduling, autoscaling, disruption budgets, Services and
 * ServiceMonitors that select what exists, generated config and secrets wired by their hashed names,
 * and container arguments the project's own parsers accept.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfig, gatewayOptions, nodeArgsForParser, nodeOptions, restrictedApiFlags } from './support/project.js';
import { INFRA, runOk } from './support/tools.js';
import { parseYamlTexts } from './support/yaml.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are checked field by field */
type Doc = any;

let rendered: Record<'cpu' | 'gpu', Doc[]>;

beforeAll(() => {
  const version = runOk('kubectl', ['version', '--client']);
  const kustomize = /Kustomize Version: v(\d+)/.exec(version)?.[1];
  if (kustomize === undefined || Number(kustomize) < 4) {
    throw new Error(`kubectl with Kustomize v4+ is needed (kubectl 1.21 or later); found:\n${version}`);
  }
  const texts = (['cpu', 'gpu'] as const).map((o) => runOk('kubectl', ['kustomize', path.join(INFRA, 'k8s/overlays', o)]));
  const [cpu = [], gpu = []] = parseYamlTexts(texts);
  rendered = { cpu, gpu };
});

const find = (docs: Doc[], kind: string, name: string): Doc => {
  const found = docs.find((d) => d.kind === kind && d.metadata.name === name);
  expect(found, `${kind}/${name}`).toBeDefined();
  return found;
};
const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const container = (deployment: Doc, name: string): Doc => deployment.spec.template.spec.containers.find((c: Doc) => c.name === name);

describe.each(['cpu', 'gpu'] as const)('kustomize overlay %s', (overlay) => {
  const docs = (): Doc[] => rendered[overlay];

  it('renders the namespace, workloads, autoscaler, budgets, services, monitors, config and secrets', () => {
    const kinds = docs().map((d) => `${d.kind}/${d.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`).sort();
    expect(kinds).toEqual([
      'ConfigMap/tessera-gateway-config',
      'Deployment/tessera-gateway',
      'Deployment/tessera-node',
      'HorizontalPodAutoscaler/tessera-gateway',
      'Namespace/tessera',
      'PodDisruptionBudget/tessera-gateway',
      'PodDisruptionBudget/tessera-node',
      // The admin secrets are the operator's to create (no placeholder key is shipped): not rendered.
      'Secret/tessera-redis',
      'Service/tessera-gateway',
      'Service/tessera-node',
      'ServiceMonitor/tessera-gateway',
      'ServiceMonitor/tessera-node',
    ]);
    for (const d of docs().filter((d) => d.kind !== 'Namespace')) expect(d.metadata.namespace, `${d.kind}/${d.metadata.name}`).toBe('tessera');
  });

  it('probes the node on Triton\'s health routes: startup and liveness on live, readiness on ready', () => {
    const node = container(find(docs(), 'Deployment', 'tessera-node'), 'node');
    const portNames = node.ports.map((p: Doc) => p.name);
    expect(node.startupProbe.httpGet.path).toBe('/v2/health/live');
    expect(node.livenessProbe.httpGet.path).toBe('/v2/health/live');
    expect(node.readinessProbe.httpGet.path).toBe('/v2/health/ready');
    for (const probe of [node.startupProbe, node.livenessProbe, node.readinessProbe]) expect(portNames).toContain(probe.httpGet.port);
    expect(node.ports.find((p: Doc) => p.name === node.readinessProbe.httpGet.port).containerPort).toBe(8000);
    // Model loading fits in the startup probe's budget, not the liveness probe's.
    expect(node.startupProbe.periodSeconds * node.startupProbe.failureThreshold).toBeGreaterThanOrEqual(600);
  });

  it('gives the node time to drain: grace period above --exit-timeout-secs', () => {
    const deployment = find(docs(), 'Deployment', 'tessera-node');
    const options = nodeOptions(nodeArgsForParser(container(deployment, 'node').args), { REDIS_URL: 'redis://x:6379' });
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(options.exitTimeoutSecs);
  });

  it('runs the node with arguments it accepts, advertising its pod IP, reading the mounted repository', () => {
    const deployment = find(docs(), 'Deployment', 'tessera-node');
    const node = container(deployment, 'node');
    const env = Object.fromEntries(
      node.env.map((e: Doc) => [e.name, e.valueFrom.fieldRef?.fieldPath ?? `secret ${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`]),
    );
    const args = node.args.map((a: string) => a.replace(/\$\((\w+)\)/g, (_: string, v: string) => `<${env[v]}>`));
    const options = nodeOptions(nodeArgsForParser(args), {});
    // The repository and logging APIs are restricted on both endpoints, with the key of a secret.
    expect(restrictedApiFlags(args).sort()).toEqual([
      '--grpc-restricted-protocol=model-repository,logging:admin-key=<secret tessera-node-admin/TESSERA_NODE_ADMIN_KEY>',
      '--http-restricted-api=model-repository,logging:tessera-node-admin-key=<secret tessera-node-admin/TESSERA_NODE_ADMIN_KEY>',
    ]);
    expect(options.advertiseHost).toBe('<status.podIP>');
    expect(options.nodeId).toBe('<metadata.name>');
    const mount = node.volumeMounts.find((m: Doc) => m.mountPath === options.modelRepository);
    expect(mount, 'the model repository is mounted').toBeDefined();
    const init = deployment.spec.template.spec.initContainers[0];
    expect(init.command).toEqual(['node', 'bin/tessera-models.js']);
    expect(init.volumeMounts.find((m: Doc) => m.name === mount.name).mountPath).toBe(init.args[init.args.indexOf('--out') + 1]);
  });

  it('runs the gateway with arguments it accepts and the generated config, which the gateway loads', () => {
    const deployment = find(docs(), 'Deployment', 'tessera-gateway');
    const gateway = container(deployment, 'gateway');
    const options = gatewayOptions(gateway.args);
    expect(gateway.ports.map((p: Doc) => p.containerPort)).toContain(options.port);
    const mount = gateway.volumeMounts.find((m: Doc) => options.configPath?.startsWith(`${m.mountPath}/`));
    const volume = deployment.spec.template.spec.volumes.find((v: Doc) => v.name === mount.name);
    const configMap = find(docs(), 'ConfigMap', volume.configMap.name);
    const config = gatewayConfig(configMap.data[path.basename(options.configPath ?? '')]);
    expect(config.tenants.length).toBeGreaterThan(0);
    expect(gateway.readinessProbe.httpGet.path).toBe('/v2/health/ready');
    expect(gateway.livenessProbe.httpGet.path).toBe('/v2/health/live');
  });

  it('references only secrets that are rendered (by their hashed names) or that the operator creates (the admin keys, never a placeholder)', () => {
    const secrets = new Map(docs().filter((d) => d.kind === 'Secret').map((d) => [d.metadata.name, d]));
    const operatorSecrets = new Map([['tessera-gateway-admin', ['TESSERA_ADMIN_KEY']], ['tessera-node-admin', ['TESSERA_NODE_ADMIN_KEY']]]);
    const keys = (deployment: string, name: string) =>
      container(find(docs(), 'Deployment', deployment), name).envFrom.flatMap((e: Doc) => {
        const secret = secrets.get(e.secretRef.name);
        if (secret === undefined) {
          expect(operatorSecrets.has(e.secretRef.name), `secret ${e.secretRef.name}`).toBe(true);
          expect(e.secretRef.optional, `${e.secretRef.name} is required`).not.toBe(true);
          return operatorSecrets.get(e.secretRef.name)!;
        }
        return Object.keys(secret.data);
      });
    expect(keys('tessera-gateway', 'gateway').sort()).toEqual(['REDIS_URL', 'TESSERA_ADMIN_KEY']);
    expect(keys('tessera-node', 'node')).toEqual(['REDIS_URL']);
    for (const secret of secrets.values()) {
      for (const value of Object.values(secret.data as Record<string, string>)) expect(Buffer.from(value, 'base64').toString()).not.toBe('change-me');
    }
  });

  it('runs every container as the images\' non-root uid, without privilege escalation, on a read-only root', () => {
    for (const name of ['tessera-gateway', 'tessera-node']) {
      const pod = find(docs(), 'Deployment', name).spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext, `${name}/${c.name}`).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        expect(c.volumeMounts.map((m: Doc) => m.mountPath), `${name}/${c.name}: a writable /tmp for tsx`).toContain('/tmp');
      }
    }
  });

  it('autoscales the gateway on CPU, which the gateway requests, and leaves its replica count to the HPA', () => {
    const hpa = find(docs(), 'HorizontalPodAutoscaler', 'tessera-gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tessera-gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    const deployment = find(docs(), 'Deployment', 'tessera-gateway');
    expect(deployment.spec.replicas).toBeUndefined();
    expect(container(deployment, 'gateway').resources.requests.cpu).toBeDefined();
  });

  it('has Services, budgets and ServiceMonitors that select the pods and ports that exist', () => {
    const pods = docs().filter((d) => d.kind === 'Deployment');
    for (const service of docs().filter((d) => d.kind === 'Service')) {
      const targets = pods.filter((p) => matches(service.spec.selector, p.spec.template.metadata.labels));
      expect(targets.length, `Service ${service.metadata.name}`).toBe(1);
      const portNames = targets[0].spec.template.spec.containers.flatMap((c: Doc) => c.ports.map((p: Doc) => p.name));
      for (const port of service.spec.ports) expect(portNames).toContain(port.targetPort);
    }
    for (const pdb of docs().filter((d) => d.kind === 'PodDisruptionBudget')) {
      expect(pods.filter((p) => matches(pdb.spec.selector.matchLabels, p.spec.template.metadata.labels)).length, `PDB ${pdb.metadata.name}`).toBe(1);
    }
    const jobs = new Set<string>();
    for (const monitor of docs().filter((d) => d.kind === 'ServiceMonitor')) {
      const services = docs().filter((d) => d.kind === 'Service' && matches(monitor.spec.selector.matchLabels, d.metadata.labels));
      expect(services.length, `ServiceMonitor ${monitor.metadata.name}`).toBe(1);
      for (const endpoint of monitor.spec.endpoints) expect(services[0].spec.ports.map((p: Doc) => p.name)).toContain(endpoint.port);
      // No jobLabel: the job is the Service name.
      expect(monitor.spec.jobLabel).toBeUndefined();
      jobs.add(services[0].metadata.name);
    }
    // The job names the alert rules select on.
    const rules = readFileSync(path.join(INFRA, 'prometheus/rules/alerts.rules.yml'), 'utf8');
    for (const job of rules.matchAll(/job="([^"]+)"/g)) expect(jobs).toContain(job[1]);
    const node = find(docs(), 'ServiceMonitor', 'tessera-node');
    expect(find(docs(), 'Service', 'tessera-node').spec.ports.find((p: Doc) => p.name === node.spec.endpoints[0].port).port).toBe(8002);
  });
});

describe('GPU scheduling', () => {
  it('the GPU overlay runs the CUDA image with one GPU per pod, a GPU toleration and a GPU node selector', () => {
    const deployment = find(rendered.gpu, 'Deployment', 'tessera-node');
    const pod = deployment.spec.template.spec;
    const node = container(deployment, 'node');
    expect(node.image).toMatch(/^tessera\/node-gpu:/);
    expect(pod.initContainers[0].image).toBe(node.image);
    expect(node.resources.limits['nvidia.com/gpu']).toBe(1);
    expect(pod.tolerations).toContainEqual({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
    expect(pod.nodeSelector['nvidia.com/gpu.present']).toBe('true');
  });

  it('the CPU overlay asks for no GPU and runs the CPU image', () => {
    const deployment = find(rendered.cpu, 'Deployment', 'tessera-node');
    const node = container(deployment, 'node');
    expect(node.image).toMatch(/^tessera\/node:/);
    expect(JSON.stringify(deployment)).not.toContain('nvidia.com/gpu');
    expect(node.resources.limits.cpu).toBeDefined();
  });
});
