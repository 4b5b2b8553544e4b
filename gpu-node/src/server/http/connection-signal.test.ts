/**
 * The infer fast path shares one "client went away" signal among the requests of a connection
 * (connection-signal.ts). Over the real core, scheduler and onnxruntime backend: many requests on one
 * kept-alive connection (answered, refused, with a deadline) leave no abort listener behind on it, and
 * closing the connection aborts it.
 */
import { getEventListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import { writeExampleRepository } from '../../example-models/index.js';
import { abortWatcherCount } from '../../scheduler/abort-watch.js';
import { abortSignalOf, type NodeCore } from '../../server-api/index.js';
import { createNodeCore, type TesseraNodeCore } from '../../server-api/node-core-impl.js';
import { createHttpServer, type HttpServer } from './http-server.js';

const body = (id: string, values: number): string =>
  JSON.stringify({
    id,
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => values) },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
    ],
  });

function post(agent: Agent, port: number, text: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/v2/models/simple/infer', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('the connection signal of the infer fast path', () => {
  let dir: string;
  let core: TesseraNodeCore;
  let server: HttpServer;
  let port: number;
  const signals = new Map<string, AbortSignal>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-connection-signal-'));
    await writeExampleRepository(dir, { only: ['simple'] });
    core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['*'] });
    await core.start();
    // The real core, recording the signal each request reaches it with.
    const recording = new Proxy(core, {
      get(target, key) {
        if (key === 'infer') {
          return (req: Parameters<NodeCore['infer']>[0], options: Parameters<NodeCore['infer']>[1]) => {
            if (options?.signal !== undefined) signals.set(req.id, abortSignalOf(options.signal));
            return target.infer(req, options);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    server = createHttpServer(recording, { logger: { error: () => undefined, warn: () => undefined } });
    ({ port } = await server.listen(0, '127.0.0.1'));
  });

  afterAll(async () => {
    await server?.close({ graceMs: 200 });
    await core?.shutdown({ timeoutMs: 10_000 });
    await rm(dir, { recursive: true, force: true });
  });

  it('is one per connection, carries nothing after its requests settle, and aborts when the connection closes', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = 0; round < 20; round++) {
        const [ok, refused, withDeadline] = await Promise.all([
          post(agent, port, body(`plain-${round}`, round)),
          post(agent, port, `{"id": "bad-${round}", "inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [1, 3], "data": [1, 2, 3]}]}`),
          post(agent, port, body(`deadline-${round}`, round), { [DEADLINE_HEADER]: '60000' }),
        ]);
        expect(ok.status).toBe(200);
        expect((JSON.parse(ok.text) as { outputs: { data: number[] }[] }).outputs[0]!.data[0]).toBe(round + 1);
        expect(refused.status).toBe(400);
        expect(withDeadline.status).toBe(200);
      }
      const plain = new Set([...signals].filter(([id]) => !id.startsWith('deadline-')).map(([, signal]) => signal));
      const withDeadlines = new Set([...signals].filter(([id]) => id.startsWith('deadline-')).map(([, signal]) => signal));
      expect(signals.size).toBe(60);
      // The 40 requests without a deadline shared the connection's signal; each with one had its own.
      expect(plain.size).toBe(1);
      expect(withDeadlines.size).toBe(20);
      const connection = [...plain][0]!;
      expect(withDeadlines.has(connection)).toBe(false);
      // No request's handler is left: at most the scheduler's one shared watcher (scheduler/abort-watch.ts).
      expect(abortWatcherCount(connection)).toBe(0);
      expect(getEventListeners(connection, 'abort').length).toBeLessThanOrEqual(1);
      expect(connection.aborted).toBe(false);
      agent.destroy();
      await new Promise<void>((resolve) => {
        if (connection.aborted) resolve();
        else connection.addEventListener('abort', () => resolve(), { once: true });
      });
      expect(connection.aborted).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});
