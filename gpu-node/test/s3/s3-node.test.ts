/**
 * A real node in-process (startNode, ports 0, the onnxruntime backend) whose --model-repository is
 * s3://tessera/models on a real S3-compatible server (s3rver on loopback), found through the SDK's
 * AWS_ENDPOINT_URL_S3: inference, poll mode (new version, new model, removed model, an outage that
 * leaves models serving), sync before explicit loads, and starts that fail with the URL named.
 * Every wait is for a condition (bounded), never for a duration.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, silentLogger, type Logger } from '../../../shared/src/logging/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { parseNodeArgs, type NodeOptions } from '../../src/cli/node-options.js';
import { startNode, type RunningNode } from '../../src/cli/start-node.js';
import { writeExampleRepository } from '../../src/example-models/index.js';
import { setEnv, startS3Server, type TestS3Server } from './s3-server.js';

const BUCKET = 'tessera';
const URL = `s3://${BUCKET}/models`;
const WAIT = { timeoutMs: 30_000, intervalMs: 100 };

function options(repository: string, extra: readonly string[] = []): NodeOptions {
  const args = ['--model-repository', repository, '--http-port', '0', '--http-address', '127.0.0.1'];
  args.push('--allow-grpc', 'false', '--allow-metrics', 'false', '--exit-timeout-secs', '5');
  const parsed = parseNodeArgs([...args, ...extra]);
  if (parsed.kind !== 'options') throw new Error(`bad test options: ${JSON.stringify(parsed)}`);
  return parsed.options;
}

async function infer(node: RunningNode, model: string): Promise<{ status: number; sum?: number[] }> {
  const data = Array.from({ length: 16 }, (_, i) => i);
  const body = {
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data },
    ],
  };
  const response = await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/${model}/infer`, { method: 'POST', body: JSON.stringify(body) });
  if (response.status !== 200) return { status: response.status };
  const json = (await response.json()) as { outputs: { name: string; data: number[] }[] };
  return { status: 200, sum: json.outputs.find((o) => o.name === 'OUTPUT0')?.data };
}

const DOUBLED = Array.from({ length: 16 }, (_, i) => 2 * i);

async function ready(node: RunningNode, path: string): Promise<boolean> {
  return (await fetch(`http://127.0.0.1:${node.httpPort}/v2/models/${path}/ready`)).status === 200;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ write: (line) => lines.push(line) }), lines };
}

describe('a node serving an S3 model repository', () => {
  let s3: TestS3Server;
  let restoreEnv: () => void;
  let examples: string;
  let node: RunningNode | undefined;

  /** Uploads the example 'simple' model as `<name>` (its config renamed) under models/. */
  const uploadSimple = async (name: string, versions: readonly number[] = [1]): Promise<void> => {
    const config = (await readFile(join(examples, 'simple', 'config.pbtxt'), 'utf8')).replace('name: "simple"', `name: "${name}"`);
    await s3.putObject(BUCKET, `models/${name}/config.pbtxt`, config);
    const onnx = await readFile(join(examples, 'simple', '1', 'model.onnx'));
    for (const version of versions) await s3.putObject(BUCKET, `models/${name}/${version}/model.onnx`, onnx);
  };

  beforeAll(async () => {
    s3 = await startS3Server([BUCKET]);
    restoreEnv = setEnv(s3.env);
    examples = await mkdtemp(join(tmpdir(), 'tessera-s3-examples-'));
    await writeExampleRepository(examples, { only: ['simple'] });
    await writeFile(join(examples, 'README.md'), 'not a model');
    await s3.uploadFolder(BUCKET, examples, 'models/');
  });
  afterEach(async () => {
    await node?.stop();
    node = undefined;
  });
  afterAll(async () => {
    restoreEnv?.();
    await s3?.close();
    if (examples) await rm(examples, { recursive: true, force: true });
  });

  it('starts from s3://bucket/prefix and infers over HTTP', async () => {
    node = await startNode(options(URL), silentLogger);
    expect(await infer(node, 'simple')).toEqual({ status: 200, sum: DOUBLED });
    expect(await ready(node, 'README.md')).toBe(false);
  });

  it('poll mode: serves a new version and a new model, drops a removed one, and rides out an outage', async () => {
    const { logger, lines } = capturingLogger();
    node = await startNode(options(URL, ['--model-control-mode', 'poll', '--repository-poll-secs', '1']), logger);
    const running = node;
    expect(await ready(running, 'simple/versions/1')).toBe(true);

    await uploadSimple('simple', [2]);
    await waitFor(() => ready(running, 'simple/versions/2'), { ...WAIT, what: 'simple version 2 after a poll' });
    // The default version policy serves the latest version only.
    await waitFor(async () => !(await ready(running, 'simple/versions/1')), { ...WAIT, what: 'version 1 unloaded' });
    expect(await infer(running, 'simple')).toEqual({ status: 200, sum: DOUBLED });

    await uploadSimple('other');
    await waitFor(() => ready(running, 'other'), { ...WAIT, what: 'model other after a poll' });
    expect(await infer(running, 'other')).toEqual({ status: 200, sum: DOUBLED });

    await s3.deletePrefix(BUCKET, 'models/simple/');
    await waitFor(async () => (await infer(running, 'simple')).status !== 200, { ...WAIT, what: 'simple gone' });
    const index = (await (await fetch(`http://127.0.0.1:${running.httpPort}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as {
      name: string;
    }[];
    expect(index.map((entry) => entry.name)).toEqual(['other']);

    // The server goes away: polls log the failure, naming the repository, and models keep serving.
    await s3.stop();
    await waitFor(() => lines.some((line) => line.includes('failed to sync model repository') && line.includes(URL)), {
      ...WAIT,
      what: 'a logged sync failure',
    });
    expect(await infer(running, 'other')).toEqual({ status: 200, sum: DOUBLED });
    await s3.restart();
    await uploadSimple('simple');
    await waitFor(() => ready(running, 'simple'), { ...WAIT, what: 'simple back after the outage' });
  });

  it('explicit mode: a load syncs the repository first', async () => {
    node = await startNode(options(URL, ['--model-control-mode', 'explicit']), silentLogger);
    await uploadSimple('late');
    const load = await fetch(`http://127.0.0.1:${node.httpPort}/v2/repository/models/late/load`, { method: 'POST', body: '{}' });
    expect(load.status).toBe(200);
    expect(await infer(node, 'late')).toEqual({ status: 200, sum: DOUBLED });
  });

  it('fails to start, naming the URL, when the bucket is missing, access is denied or S3 is unreachable', async () => {
    await expect(startNode(options('s3://no-such-bucket/models'), silentLogger)).rejects.toThrow(
      'cannot read model repository s3://no-such-bucket/models: NoSuchBucket (HTTP 404): The specified bucket does not exist',
    );
    await expect(startNode(options(`s3://${BUCKET}/nothing-here`), silentLogger)).rejects.toThrow(
      `cannot read model repository s3://${BUCKET}/nothing-here: no objects under s3://${BUCKET}/nothing-here/`,
    );

    const restore = setEnv({ AWS_ACCESS_KEY_ID: 'NOT-A-KEY' });
    try {
      await expect(startNode(options(URL), silentLogger)).rejects.toThrow(
        `cannot read model repository ${URL}: InvalidAccessKeyId (HTTP 403)`,
      );
    } finally {
      restore();
    }

    // Triton's host:port form names the endpoint in the URL itself.
    const unreachable = `s3://127.0.0.1:${await closedPort()}/${BUCKET}/models`;
    await expect(startNode(options(unreachable), silentLogger)).rejects.toThrow(
      new RegExp(`^cannot read model repository ${unreachable.replace(/[.]/g, '\\.')}: .*ECONNREFUSED`),
    );
    await expect(startNode(options('gs://bucket/models'), silentLogger)).rejects.toThrow(
      "unsupported model repository 'gs://bucket/models'",
    );
  });
});
