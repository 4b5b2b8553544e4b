/**
 * The three images, read from their Dockerfiles (no Docker engine here): bases, non-root user, health
 * checks on /v2/health/ready at an exposed port, the onnxruntime install mode, and that everything
 * they copy and run exists in the project, down to the TypeScript entry each bin/ launcher imports.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { all, execForm, last, parseDockerfile, type Stage } from './support/dockerfile.js';
import { INFRA, REPO_ROOT, runOk } from './support/tools.js';

const images = {
  gateway: { port: 8080, entry: 'bin/tessera-gateway.js', onnx: 'skip', base: /^node:20-bookworm-slim$/ },
  node: { port: 8000, entry: 'bin/tessera-node.js', onnx: 'skip', base: /^node:20-bookworm-slim$/ },
  'node-gpu': { port: 8000, entry: 'bin/tessera-node.js', onnx: 'cuda12', base: /^nvidia\/cuda:12\.\d+\.\d+-(cudnn-)?runtime-ubuntu\d+\.\d+$/ },
} as const;

function load(name: string) {
  const file = path.join(INFRA, 'docker', `${name}.Dockerfile`);
  const parsed = parseDockerfile(readFileSync(file, 'utf8'));
  const final = parsed.stages.at(-1) as Stage;
  return { file, ...parsed, final };
}

/** Image path → project path, from the final stage's COPY instructions (WORKDIR /app). */
function projectPathOf(final: Stage, imagePath: string): string | undefined {
  const absolute = path.posix.resolve('/app', imagePath);
  for (const copy of all(final, 'COPY')) {
    if (copy.args.startsWith('--from')) continue;
    const parts = copy.args.split(/\s+/);
    const dest = path.posix.resolve('/app', parts.at(-1) ?? '');
    for (const source of parts.slice(0, -1)) {
      const intoFolder = parts.length > 2 || (parts.at(-1) ?? '').endsWith('/');
      const target = intoFolder ? path.posix.join(dest, path.posix.basename(source)) : dest;
      if (absolute === target) return source;
      if (absolute.startsWith(`${target}/`)) return path.posix.join(source, absolute.slice(target.length + 1));
    }
  }
  return undefined;
}

describe.each(Object.entries(images))('%s image', (name, spec) => {
  const { file, final, stages } = load(name);

  it('builds its runtime on the expected base with Node 20', () => {
    expect(final.from).toMatch(spec.base);
    if (name === 'node-gpu') {
      // Node comes from the official Node 20 image, copied into the CUDA base.
      const nodeStage = stages.find((s) => s.from === 'node:20-bookworm-slim' && s.instructions.length === 0);
      expect(nodeStage, 'a bare node:20-bookworm-slim stage to copy Node from').toBeDefined();
      expect(all(final, 'COPY').some((c) => c.args.startsWith(`--from=${nodeStage?.name} /usr/local/bin/node `))).toBe(true);
    }
  });

  it('runs as a numeric non-root user', () => {
    const user = last(final, 'USER')?.args ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    // The uid the Kubernetes manifests ask for.
    expect(user.split(':')[0]).toBe('10001');
  });

  it('checks health on /v2/health/ready at an exposed port, with a script the image carries', () => {
    const health = last(final, 'HEALTHCHECK')?.args ?? '';
    const command = execForm(health.slice(health.indexOf('CMD') + 3));
    expect(command[0]).toBe('node');
    const url = new URL(command[2] ?? '');
    expect(url.pathname).toBe('/v2/health/ready');
    expect(Number(url.port)).toBe(spec.port);
    const exposed = (last(final, 'EXPOSE')?.args ?? '').split(/\s+/).map(Number);
    expect(exposed).toContain(spec.port);
    const script = projectPathOf(final, command[1] ?? '');
    expect(script, `${command[1]} is not copied into the image`).toBeDefined();
    expect(existsSync(path.join(REPO_ROOT, script ?? ''))).toBe(true);
  });

  it('runs its bin/ launcher on the production bundle built in the image', async () => {
    const [program, ...rest] = execForm(last(final, 'ENTRYPOINT')?.args ?? '');
    expect(program).toBe('node');
    // Node/V8 flags may come before the launcher (the gateway's young-generation size): this node accepts them.
    const flags = rest.slice(0, rest.findIndex((arg) => !arg.startsWith('-')));
    expect(spawnSync(process.execPath, [...flags, '-e', '0']).status, `node refuses ${flags.join(' ')}`).toBe(0);
    const script = rest[flags.length];
    expect(script).toBe(spec.entry);
    const launcher = projectPathOf(final, script ?? '');
    expect(launcher, `${script} is not copied into the image`).toBe(spec.entry);
    const launcherFile = path.join(REPO_ROOT, spec.entry);
    expect(existsSync(launcherFile), `${spec.entry} does not exist in the project`).toBe(true);
    const text = readFileSync(launcherFile, 'utf8');
    // Its helper module is copied; its source fallback exists in the project (the image runs the bundle).
    for (const target of [...text.matchAll(/from '(\.[^']+)'/g)].map((m) => m[1] ?? '')) {
      const projectFile = path.relative(REPO_ROOT, path.resolve(path.dirname(launcherFile), target));
      expect(projectPathOf(final, projectFile), `${projectFile} is not copied into the image`).toBe(projectFile);
    }
    for (const target of [...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)].map((m) => m[1] ?? '')) {
      expect(existsSync(path.resolve(path.dirname(launcherFile), target)), `${target} (imported by ${spec.entry})`).toBe(true);
    }
    // The bundle it runs is an entry of the build, which a stage runs and the final stage copies.
    const bundleName = /runBundle\('([^']+)'\)/.exec(text)?.[1];
    const { ENTRIES } = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts/bundle-entries/entries.mjs')).href)) as {
      ENTRIES: Record<string, string>;
    };
    expect(Object.keys(ENTRIES)).toContain(bundleName);
    const builder = stages.find((s) => all(s, 'RUN').some((r) => /\bnpm run build\b/.test(r.args)));
    expect(builder, 'a stage that runs npm run build').toBeDefined();
    expect(all(final, 'COPY').some((c) => c.args === `--from=${builder?.name} /app/dist ./dist`)).toBe(true);
  });

  it('copies only paths that exist, and installs onnxruntime-node in the right mode', () => {
    for (const stage of stages) {
      for (const copy of all(stage, 'COPY').filter((c) => !c.args.startsWith('--from'))) {
        for (const source of copy.args.split(/\s+/).slice(0, -1)) {
          expect(existsSync(path.join(REPO_ROOT, source)), `${path.basename(file)}: COPY ${source}`).toBe(true);
        }
      }
    }
    // The stage whose node_modules the image ships decides the onnxruntime-node install mode.
    const shipped = /^--from=(\S+) \/app\/node_modules /.exec(all(final, 'COPY').find((c) => / \/app\/node_modules /.test(c.args))?.args ?? '')?.[1];
    const install = stages.find((s) => s.name === shipped && all(s, 'RUN').some((r) => /\bnpm ci\b/.test(r.args)));
    expect(install, 'the stage whose node_modules are shipped runs npm ci').toBeDefined();
    const env = all(install as Stage, 'ENV').map((e) => e.args).join(' ');
    expect(env).toContain(`ONNXRUNTIME_NODE_INSTALL=${spec.onnx}`);
    // The lock file goes in with package.json, so the install is the locked one; the onnxruntime mode is the ENV above.
    expect(all(install as Stage, 'COPY')[0]?.args).toMatch(/package\.json package-lock\.json \.\//);
  });
});

describe('build script', () => {
  it('builds the three images under the names the manifests use', () => {
    // A fake docker on PATH records the calls, so the script runs for real without an engine.
    const log = runOk('sh', ['-c', `d=$(mktemp -d) && printf '#!/bin/sh\\necho "$@"\\n' > "$d/docker" && chmod +x "$d/docker" && DOCKER="$d/docker" TAG=t ${path.join(INFRA, 'docker/build-images.sh')} 2>/dev/null; rm -rf "$d"`]);
    const lines = log.trim().split('\n');
    expect(lines).toEqual(
      Object.keys(images).map((n) => `build --file ${path.join(INFRA, 'docker', `${n}.Dockerfile`)} --tag tessera/${n}:t ${REPO_ROOT}`),
    );
  });
});
