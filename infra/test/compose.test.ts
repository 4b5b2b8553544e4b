/**
 * The compose stack, read as data (no Docker engine here): the services, what each runs (checked by
 * the project's own argument parsers and config loader), health checks, ports, environment, volumes,
 * and that Prometheus and Grafana point at services that exist on ports they serve.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execForm, last, parseDockerfile, type Stage } from './support/dockerfile.js';
import { gatewayConfig, gatewayOptions, nodeArgsForParser, nodeOptions } from './support/project.js';
import { INFRA, REPO_ROOT } from './support/tools.js';
import { parseYamlTexts } from './support/yaml.js';

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

const COMPOSE_DIR = path.join(INFRA, 'compose');
const [[compose], [prometheus], [datasources]] = parseYamlTexts([
  readFileSync(path.join(COMPOSE_DIR, 'compose.yaml'), 'utf8'),
  readFileSync(path.join(INFRA, 'prometheus/prometheus.yml'), 'utf8'),
  readFileSync(path.join(INFRA, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8'),
]) as [[{ services: Record<string, Service>; volumes: Record<string, unknown> }], [{ scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] }], [{ datasources: { url: string }[] }]];
const services = compose.services;
const service = (name: string): Service => services[name] as Service;

/** The final stage of the Dockerfile a service builds from. */
function imageOf(name: string): Stage {
  const build = service(name).build;
  expect(build, `${name} has no build section`).toBeDefined();
  const file = path.resolve(COMPOSE_DIR, build?.context ?? '', build?.dockerfile ?? '');
  expect(existsSync(file), `${name}: ${file}`).toBe(true);
  return parseDockerfile(readFileSync(file, 'utf8')).stages.at(-1) as Stage;
}

/** `${VAR:?message}` and `${VAR:-default}` as compose fills them in, with a stand-in value for each variable. */
const interpolate = (text: string): string => text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?][^}]*)?\}/g, (_, name: string) => `stand-in-${name}`);

/** The node's arguments for this checkout's parser (support/project.ts nodeArgsForParser). */
const nodeArgs = (command: readonly string[]): string[] => nodeArgsForParser(command.map(interpolate));

const exposed = (stage: Stage): number[] => (last(stage, 'EXPOSE')?.args ?? '').split(/\s+/).map(Number);
const containerPorts = (s: Service): number[] => (s.ports ?? []).map((p) => Number(p.split(':').at(-1)));
/** Container path → named volume or bind source of a service's mounts. */
const mounts = (s: Service): Map<string, string> => new Map((s.volumes ?? []).map((v) => [v.split(':')[1] ?? '', v.split(':')[0] ?? '']));

describe('compose stack', () => {
  it('has Redis, the example models, two nodes, the gateway, Prometheus and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway', 'grafana', 'models', 'node-1', 'node-2', 'prometheus', 'redis']);
  });

  it.each(['node-1', 'node-2', 'gateway'])('%s: image built from infra/docker, health check on /v2/health/ready at an exposed port', (name) => {
    const stage = imageOf(name);
    const s = service(name);
    const dockerfile = path.basename(s.build?.dockerfile ?? '', '.Dockerfile');
    expect(s.image).toBe(`tessera/${dockerfile}:dev`);
    const test = s.healthcheck?.test ?? [];
    expect(test[0]).toBe('CMD');
    // The same check as the image's own HEALTHCHECK.
    const imageCheck = last(stage, 'HEALTHCHECK')?.args ?? '';
    expect(test.slice(1)).toEqual(execForm(imageCheck.slice(imageCheck.indexOf('CMD') + 3)));
    const url = new URL(test.at(-1) ?? '');
    expect(url.pathname).toBe('/v2/health/ready');
    expect(exposed(stage)).toContain(Number(url.port));
    for (const port of containerPorts(s)) expect(exposed(stage), `${name} publishes ${port}`).toContain(port);
  });

  it('publishes no host port twice', () => {
    // "[host ip:]host port:container port": the address and port on the host.
    const hostPorts = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(':').slice(0, -1).join(':')));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  it('runs each node with arguments the node accepts, its own id, its service name as address, and Redis', () => {
    const ids = new Set<string>();
    for (const name of ['node-1', 'node-2']) {
      const s = service(name);
      const entry = execForm(last(imageOf(name), 'ENTRYPOINT')?.args ?? '');
      expect(entry).toEqual(['node', 'bin/tessera-node.js']);
      const options = nodeOptions(nodeArgs(s.command ?? []), s.environment);
      expect(options.advertiseHost).toBe(name);
      ids.add(options.nodeId ?? '');
      expect(mounts(s).get(options.modelRepository), 'the model repository is a mounted volume').toBe('models');
      expect(options.redisUrl).toBe('redis://redis:6379');
      expect(options.httpPort).toBe(8000);
      expect(options.metricsPort).toBe(8002);
      expect(s.depends_on?.redis?.condition).toBe('service_healthy');
      expect(s.depends_on?.models?.condition).toBe('service_completed_successfully');
    }
    expect(ids.size).toBe(2);
    expect(new URL(service('node-1').environment?.REDIS_URL ?? '').hostname).toBe('redis');
    expect(service('redis').healthcheck?.test).toContain('ping');
  });

  it('writes the example models into the volume the nodes read, with the project\'s model writer', () => {
    const s = service('models');
    expect(s.entrypoint?.[1]).toBe('bin/tessera-models.js');
    expect(existsSync(path.join(REPO_ROOT, s.entrypoint?.[1] ?? ''))).toBe(true);
    const out = s.command?.[(s.command?.indexOf('--out') ?? -2) + 1] ?? '';
    expect(mounts(s).get(out)).toBe('models');
    expect(Object.keys(compose.volumes)).toContain('models');
  });

  it('runs the gateway with arguments it accepts and a config file it loads', () => {
    const s = service('gateway');
    const options = gatewayOptions(s.command ?? []);
    expect(containerPorts(s)).toContain(options.port);
    const source = mounts(s).get(options.configPath ?? '');
    expect(source, 'the config file is bind-mounted').toBeDefined();
    const config = gatewayConfig(readFileSync(path.resolve(COMPOSE_DIR, source ?? ''), 'utf8'));
    expect(config.tenants.length).toBeGreaterThan(0);
    expect(s.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(s.environment?.TESSERA_ADMIN_KEY).toBeTruthy();
    for (const dep of ['redis', 'node-1', 'node-2']) expect(s.depends_on?.[dep]?.condition).toBe('service_healthy');
  });

  it('waits only on services that have health checks or run once', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(services[dep], `${name} depends on a missing ${dep}`).toBeDefined();
        if (condition === 'service_healthy') expect(services[dep]?.healthcheck, `${name} waits on ${dep}'s health`).toBeDefined();
      }
    }
  });

  it('bind-mounts only files and folders that exist', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const source of mounts(s).values()) {
        if (source.startsWith('.')) expect(existsSync(path.resolve(COMPOSE_DIR, source)), `${name}: ${source}`).toBe(true);
      }
    }
  });

  it('has Prometheus scrape every node and the gateway on ports their images expose', () => {
    const mount = mounts(service('prometheus'));
    expect(path.resolve(COMPOSE_DIR, mount.get('/etc/prometheus') ?? '')).toBe(path.join(INFRA, 'prometheus'));
    expect(service('prometheus').command).toContain('--config.file=/etc/prometheus/prometheus.yml');
    const targets = new Map(prometheus.scrape_configs.map((c) => [c.job_name, c.static_configs.flatMap((s) => s.targets)]));
    expect(targets.get('tessera-node')?.sort()).toEqual(['node-1:8002', 'node-2:8002']);
    expect(targets.get('tessera-gateway')).toEqual(['gateway:8080']);
    for (const target of [...(targets.get('tessera-node') ?? []), ...(targets.get('tessera-gateway') ?? [])]) {
      const [host = '', port] = target.split(':');
      expect(exposed(imageOf(host))).toContain(Number(port));
    }
  });

  it('has Grafana read the Prometheus service', () => {
    const url = new URL(datasources.datasources[0]?.url ?? '');
    expect(services[url.hostname]).toBeDefined();
    expect(containerPorts(service(url.hostname))).toContain(Number(url.port));
  });
});
