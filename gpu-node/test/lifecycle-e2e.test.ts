/**
 * End to end over the node's lifetime:
 * - a repository with one broken config.pbtxt: that model is UNAVAILABLE with a reason naming the file,
 *   the others serve, and the node is not ready (strict readiness);
 * - POLL mode (`--repository-poll-secs 1`): a model folder added → READY and served; a version 2 added
 *   → served as the latest; the folder removed → gone;
 * - the CLI as a child process (`node bin/tessera-node.js`): --help, a bad flag, and SIGTERM while a
 *   request is in flight (it completes, new work is refused, the process exits 0).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import { GRPCInferenceService, ServerReadyRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus } from '../../shared/src/gen/health_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import {
  exampleRepository,
  grpcClient,
  nodeArgs,
  removeDir,
  scaleBody,
  startTestNode,
  writeScriptModel,
  type TestNode,
} from './support.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO_ROOT, 'bin', 'tessera-node.js');

interface Answer {
  status: number;
  text: string;
}

async function call(url: string, method = 'GET', body?: string): Promise<Answer> {
  const response = await fetch(url, { method, ...(body === undefined ? {} : { body }) });
  return { status: response.status, text: await response.text() };
}

function scaleRequest(values: number[]): string {
  return JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, values.length], datatype: 'FP32', data: values }] });
}

interface IndexEntry {
  name: string;
  version?: string;
  state?: string;
  reason?: string;
}

describe('broken config and POLL mode (one in-process node)', () => {
  let repo: string | undefined;
  let staging: string | undefined;
  let node: TestNode;
  const index = async (): Promise<IndexEntry[]> => JSON.parse((await call(`${node.http}/v2/repository/index`, 'POST')).text);
  const entry = async (name: string): Promise<IndexEntry | undefined> => (await index()).find((e) => e.name === name);

  /** Writes a script model outside the repository; the caller renames it in, so a poll never sees it half-written. */
  async function stage(name: string, options: Parameters<typeof writeScriptModel>[2]): Promise<string> {
    const dir = await mkdtemp(join(staging ?? tmpdir(), 'build-'));
    await writeScriptModel(dir, name, options);
    return join(dir, name);
  }

  beforeAll(async () => {
    repo = await exampleRepository(['ts_scale']);
    staging = await mkdtemp(join(tmpdir(), 'tessera-staging-'));
    await mkdir(join(repo, 'broken', '1'), { recursive: true });
    await writeFile(join(repo, 'broken', 'config.pbtxt'), 'name: "broken"\nmax_batch_size: [[[ this is not text format\n');
    node = await startTestNode(repo, ['--model-control-mode', 'poll', '--repository-poll-secs', '1']);
  });

  afterAll(async () => {
    await node?.stop();
    await Promise.all([removeDir(repo), removeDir(staging)]);
  });

  it('the broken model is UNAVAILABLE with a reason naming config.pbtxt; the others are READY', async () => {
    const broken = await entry('broken');
    expect(broken?.state).toBe('UNAVAILABLE');
    expect(broken?.reason).toMatch(/config\.pbtxt/);
    expect(await entry('ts_scale')).toEqual({ name: 'ts_scale', version: '1', state: 'READY' });
    const served = await call(`${node.http}/v2/models/ts_scale/infer`, 'POST', scaleRequest([1, 2]));
    expect(served.status, served.text).toBe(200);
    expect(JSON.parse(served.text).outputs[0].data).toEqual([2, 4]);
    const brokenReady = await call(`${node.http}/v2/models/broken/ready`);
    expect(brokenReady.status).toBe(400);
    expect(JSON.parse(brokenReady.text).error).toMatch(/'broken'/);
  });

  it('strict readiness: live, but not ready while a model is UNAVAILABLE', async () => {
    expect((await call(`${node.http}/v2/health/live`)).status).toBe(200);
    const ready = await call(`${node.http}/v2/health/ready`);
    expect(ready.status).toBe(400);
    expect(ready.text).toBe('');
    // gRPC says the same: ServerReady false, and Health/Check (readiness, as in Triton) NOT_SERVING.
    const client = grpcClient(node.grpcTarget);
    try {
      const svc = clientServiceDefinition(GRPCInferenceService);
      expect((await callUnary(client, svc.serverReady, create(ServerReadyRequestSchema))).response.ready).toBe(false);
      const check = await callUnary(client, clientServiceDefinition(Health).check, create(HealthCheckRequestSchema));
      expect(check.response.status).toBe(HealthCheckResponse_ServingStatus.NOT_SERVING);
    } finally {
      client.close();
    }
  });

  it('a model folder added to the repository becomes READY and is served', async () => {
    await rename(await stage('added', { executeBody: scaleBody(3) }), join(repo ?? '', 'added'));
    await waitFor(async () => (await entry('added'))?.state === 'READY', { timeoutMs: 30_000, what: "'added' READY" });
    const answer = await call(`${node.http}/v2/models/added/infer`, 'POST', scaleRequest([1, 2]));
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ model_version: '1', outputs: [{ data: [3, 6] }] });
  });

  it('a version 2 added to that model is served as the latest', async () => {
    const staged = await stage('added', { version: 2, executeBody: scaleBody(4), withConfig: false });
    await rename(join(staged, '2'), join(repo ?? '', 'added', '2'));
    const answer = await waitFor(
      async () => {
        const a = await call(`${node.http}/v2/models/added/infer`, 'POST', scaleRequest([1, 2]));
        return a.status === 200 && JSON.parse(a.text).model_version === '2' ? a : undefined;
      },
      { timeoutMs: 30_000, what: "'added' version 2 served" },
    );
    expect(JSON.parse(answer.text).outputs[0].data).toEqual([4, 8]);
    const meta = JSON.parse((await call(`${node.http}/v2/models/added`)).text);
    expect(meta.versions).toEqual(['2']);
  });

  it('removing the folder makes the model go away', async () => {
    await rm(join(repo ?? '', 'added'), { recursive: true, force: true });
    await waitFor(async () => (await call(`${node.http}/v2/models/added/infer`, 'POST', scaleRequest([1]))).status === 400, {
      timeoutMs: 30_000,
      what: "'added' gone",
    });
    const left = await entry('added');
    expect(left === undefined || left.state !== 'READY').toBe(true);
    expect((await call(`${node.http}/v2/models/added/ready`)).status).not.toBe(200);
  });

  it('removing the broken model lets the node become ready', async () => {
    await rm(join(repo ?? '', 'broken'), { recursive: true, force: true });
    await waitFor(async () => (await call(`${node.http}/v2/health/ready`)).status === 200, {
      timeoutMs: 30_000,
      what: 'node ready',
    });
  });
});

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runCli(args: readonly string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('the tessera-node CLI as a child process', () => {
  it('--help prints the usage with the flags and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    for (const flag of ['--model-repository', '--model-control-mode', '--http-port', '--grpc-port', '--metrics-port', '--repository-poll-secs', '--exit-timeout-secs']) {
      expect(result.stdout).toContain(flag);
    }
  });

  it('an unknown flag exits 2 naming it, with the usage on stderr', async () => {
    const result = await runCli(['--model-repository', '/nonexistent', '--no-such-flag']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no-such-flag/);
    expect(result.stderr).toMatch(/Usage: tessera-node/);
    expect(result.stdout).toBe('');
  });

  it('a missing --model-repository exits 2', async () => {
    const result = await runCli(['--http-port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--model-repository is required/);
  });

  describe('SIGTERM with a request in flight', () => {
    let repo: string | undefined;
    beforeAll(async () => {
      repo = await mkdtemp(join(tmpdir(), 'tessera-slow-'));
      // execute() marks that it started, waits 1.5 s, then doubles its input.
      await writeScriptModel(repo, 'slow', {
        parameters: { marker: join(repo, 'started') },
        executeBody: `writeFileSync(params.marker, 'started');\nawait sleep(1500);\n${scaleBody(2)}`,
      });
    });
    afterAll(() => removeDir(repo));

    it('finishes the in-flight request with 200, refuses new work, and exits 0', async () => {
      const child = spawn(process.execPath, [CLI, ...nodeArgs(repo ?? '', ['--exit-timeout-secs', '30'])], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      let stderr = '';
      let httpPort: number | undefined;
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        for (const line of stderr.split('\n')) {
          if (!line.startsWith('{')) continue;
          try {
            const record = JSON.parse(line) as { msg?: string; httpPort?: number };
            if (record.msg === 'tessera-node started') httpPort = record.httpPort;
          } catch {
            // a partial line; the next chunk completes it
          }
        }
      });
      try {
        const port = await waitFor(() => httpPort, { timeoutMs: 60_000, what: `"tessera-node started" (stderr: ${stderr})` });
        const base = `http://127.0.0.1:${port}`;
        const marker = join(repo ?? '', 'started');

        const inflight = call(`${base}/v2/models/slow/infer`, 'POST', scaleRequest([1.5, 2]));
        await waitFor(() => existsSync(marker), { timeoutMs: 30_000, what: 'slow execute started' });
        child.kill('SIGTERM');

        // While shutting down, new work is refused: 503 (UNAVAILABLE) or, once closed, no connection.
        // Health answers 503 "Server exiting" like Triton's (not a plain 400) while the port is open.
        const refused = async (path: string, method: string, body?: string): Promise<Answer> =>
          waitFor(
            async () => {
              try {
                const a = await call(`${base}${path}`, method, body);
                return a.status === 200 ? undefined : a;
              } catch (error) {
                return { status: 0, text: String((error as { cause?: unknown }).cause ?? error) };
              }
            },
            { timeoutMs: 30_000, intervalMs: 50, what: `${path} refused during shutdown` },
          );
        for (const [path, method, body, message] of [
          ['/v2/health/live', 'GET', undefined, /Server exiting/],
          ['/v2/models/slow/infer', 'POST', scaleRequest([1]), /exiting|stopping/i],
        ] as const) {
          const refusal = await refused(path, method, body);
          if (refusal.status === 0) {
            expect(refusal.text).toMatch(/ECONNREFUSED|ECONNRESET|other side closed|socket/i);
          } else {
            expect(refusal.status, refusal.text).toBe(503);
            expect(JSON.parse(refusal.text).error).toMatch(message);
          }
        }

        const done = await inflight;
        expect(done.status, done.text).toBe(200);
        expect(JSON.parse(done.text).outputs[0].data).toEqual([3, 4]);
        expect(await exited).toEqual({ code: 0, signal: null });
        expect(stderr).toMatch(/"msg":"tessera-node stopped"/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });
  });
});
