/**
 * A real S3-compatible server for the tests: s3rver in a child process on 127.0.0.1 (a free port)
 * over a temporary folder, a client for it, and helpers to upload and delete model folders.
 *
 * A child process, not in-process: s3rver's ListObjectsV2 continuation tokens use DES, which Node's
 * OpenSSL 3 only has with --openssl-legacy-provider, and paging is part of what is tested. It also
 * lets a test stop the server (an outage) and start it again on the same port and data.
 */
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';

/** s3rver's built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface TestS3Server {
  readonly endpoint: string;
  readonly port: number;
  readonly client: S3Client;
  /** Environment for the node's SDK default chain: endpoint, s3rver's keys, a region. */
  readonly env: Readonly<Record<string, string>>;
  putObject(bucket: string, key: string, body: string | Uint8Array): Promise<void>;
  /** Uploads every file under `dir` to `<prefix><relative path>`. */
  uploadFolder(bucket: string, dir: string, prefix: string): Promise<void>;
  /** Deletes every object under `prefix`. */
  deletePrefix(bucket: string, prefix: string): Promise<void>;
  /** Stops the server process, keeping its data (an outage). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

// The child exits when its stdin closes, so it never outlives the test process.
const CHILD = `
const [, s3rverPath, directory, port, buckets] = process.argv;
const S3rver = require(s3rverPath);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory,
  configureBuckets: JSON.parse(buckets).map((name) => ({ name })) });
server.run().then((a) => process.stdout.write(JSON.stringify({ port: a.port }) + '\\n'),
  (e) => { process.stderr.write(String(e)); process.exit(1); });
process.stdin.on('end', () => process.exit(0)).resume();
`;

async function spawnS3rver(directory: string, port: number, buckets: readonly string[]): Promise<{ child: ChildProcess; port: number }> {
  const s3rverPath = createRequire(import.meta.url).resolve('s3rver');
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '-e', CHILD, s3rverPath, directory, String(port), JSON.stringify(buckets)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => String(line)),
    once(child, 'exit').then(([code]) => {
      throw new Error(`s3rver exited with ${String(code)} before listening`);
    }),
  ]);
  return { child, port: (JSON.parse(first) as { port: number }).port };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export async function startS3Server(buckets: readonly string[]): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), 'tessera-s3rver-'));
  let { child, port } = await spawnS3rver(directory, 0, buckets);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3RVER_CREDENTIALS });
  let closed = false;
  const server: TestS3Server = {
    endpoint,
    port,
    client,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
    },
    async putObject(bucket, key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async uploadFolder(bucket, dir, prefix) {
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const path = join(entry.parentPath, entry.name);
        await server.putObject(bucket, `${prefix}${relative(dir, path)}`, await readFile(path));
      }
    },
    async deletePrefix(bucket, prefix) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      for (const object of listed.Contents ?? []) {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
      }
    },
    stop: () => stopChild(child),
    async restart() {
      await stopChild(child);
      ({ child, port } = await spawnS3rver(directory, port, buckets));
    },
    async close() {
      if (closed) return;
      closed = true;
      client.destroy();
      await stopChild(child);
      await rm(directory, { recursive: true, force: true });
    },
  };
  return server;
}

/** Sets environment variables until the returned function restores them. */
export function setEnv(values: Readonly<Record<string, string | undefined>>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]));
  const apply = (from: Record<string, string | undefined>): void => {
    for (const [key, value] of Object.entries(from)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply({ ...values });
  return () => apply(saved);
}
