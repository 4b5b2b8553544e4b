/**
 * The raw infer upstream's per-call work in two builds, in turns (issue 17, 2026-11-27e): the request's
 * render (head, JSON header, sections) and one whole exchange on a kept-alive loopback socket (pool take,
 * write, answer read, give back) against a fixed-answer server in a child process on core 1, this
 * process on core 0. Each build's modules are imported from its own checkout: MICRO_A (e.g. a
 * `git archive` of the base) and MICRO_B (default: this checkout). Figures: ns per render and bytes
 * allocated per render (V8 heap + ArrayBuffers); µs of this process's CPU per exchange (user + system,
 * process.cpuUsage) and bytes allocated per exchange; medians of rounds, A and B alternating.
 *
 *   MICRO_A=/tmp/base [MICRO_B=.] node --expose-gc --import tsx loadtests/src/scenarios/gateway-raw-upstream-micro.ts [rounds=7] [batch=3000]
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { median } from '../lib/sampling/percentiles.js';
import { pinSelf, SIMPLE_REQUEST, FP32_4K_REQUEST } from './gateway-per-core-stack.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import type * as RequestModule from '../../../gateway/src/adapters/node-http/raw-infer-request.js';
import type * as BytesModule from '../../../gateway/src/adapters/node-http/raw-request-bytes.js';
import type * as PoolModule from '../../../gateway/src/adapters/node-http/raw-socket-pool.js';
import type * as ExchangeModule from '../../../gateway/src/adapters/node-http/raw-infer-exchange.js';
import type * as CallParametersModule from '../../../gateway/src/adapters/grpc/call-parameters.js';

const rounds = Number(process.argv[2] ?? 7);
const batch = Number(process.argv[3] ?? 3000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');
if (process.env.MICRO_A === undefined) throw new Error('MICRO_A names the base checkout');
pinSelf(0);

interface Build {
  readonly label: string;
  render(request: InferRequest): Uint8Array[];
  exchange(chunks: readonly Uint8Array[]): Promise<unknown>;
}

const OPTS = { deadline: 0, priority: 2, timeoutUs: 1_000_000 };
const LINES = ['x-tessera-deadline-ms: 30000\r\n'];

async function load(label: string, dir: string, address: string): Promise<Build> {
  const base = resolve(dir, 'gateway/src/adapters/node-http');
  const request = (await import(`${base}/raw-infer-request.ts`)) as typeof RequestModule;
  const bytes = (await import(`${base}/raw-request-bytes.ts`)) as typeof BytesModule;
  const pool = new ((await import(`${base}/raw-socket-pool.ts`)) as typeof PoolModule).RawSocketPool(8);
  const { exchange } = (await import(`${base}/raw-infer-exchange.ts`)) as typeof ExchangeModule;
  const heads = new bytes.RawRequestBytes();
  // The base built the node's parameters with withCallParameters before rendering; the change renders them in place.
  const { withCallParameters } = (await import(resolve(dir, 'gateway/src/adapters/grpc/call-parameters.ts'))) as typeof CallParametersModule;
  const inPlace = request.renderInferRequest.length >= 6;
  return {
    label,
    render: (r) =>
      inPlace
        ? (request.renderInferRequest as (...a: unknown[]) => Uint8Array[])(heads, address, '/v2/models/simple/infer', r, LINES, OPTS)
        : request.renderInferRequest(heads, address, '/v2/models/simple/infer', withCallParameters(r, OPTS), LINES),
    exchange: (chunks) => exchange(pool, { nodeId: 'n', address, chunks, deadline: Date.now() + 30_000, maxAnswerBytes: 1 << 20 }),
  };
}

/** A fixed answer per request of a known length, from a child process on core 1. */
function startServer(requestBytes: number): Promise<{ port: number; stop(): void }> {
  const json = '{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}';
  const script = `
    const net = require('node:net');
    const body = Buffer.concat([Buffer.from(${JSON.stringify(json)}), Buffer.alloc(128, 1)]);
    const answer = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\\r\\ncontent-type: application/octet-stream\\r\\ninference-header-content-length: ${json.length}\\r\\ncontent-length: ' + body.length + '\\r\\n\\r\\n'), body]);
    const server = net.createServer({ noDelay: true }, (s) => { let got = 0; s.on('data', (c) => { got += c.length; while (got >= ${requestBytes}) { got -= ${requestBytes}; s.write(answer); } }); });
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));`;
  const child = spawn('taskset', ['-c', '1', process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done) => child.stdout!.once('data', (d: Buffer) => done({ port: Number(d.toString().trim()), stop: () => child.kill() })));
}

let sink: unknown;
function allocated(run: () => void, n: number): number {
  gc!();
  const before = process.memoryUsage();
  run();
  const after = process.memoryUsage();
  return (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / n;
}

async function main(): Promise<void> {
  const probe = await load('B', process.env.MICRO_B ?? '.', '127.0.0.1:1');
  const requestBytes = Buffer.concat(probe.render(SIMPLE_REQUEST)).length;
  const server = await startServer(requestBytes);
  const address = `127.0.0.1:${server.port}`;
  const builds = [await load('A', process.env.MICRO_A!, address), await load('B', process.env.MICRO_B ?? '.', address)];
  const chunks = builds[1]!.render(SIMPLE_REQUEST);
  const results = new Map<string, number[]>();
  const add = (key: string, value: number): void => void (results.get(key) ?? results.set(key, []).get(key)!).push(value);
  for (const b of builds) for (let i = 0; i < 500; i++) await b.exchange(chunks); // warm: sockets open, code optimised
  for (let r = 0; r < rounds; r++) {
    for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
      for (const [name, request] of [['simple', SIMPLE_REQUEST], ['4 KB', FP32_4K_REQUEST]] as const) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < batch * 10; i++) sink = b.render(request);
        add(`${b.label} render ${name} ns`, Number(process.hrtime.bigint() - start) / (batch * 10));
        add(`${b.label} render ${name} B`, allocated(() => { for (let i = 0; i < 1000; i++) sink = b.render(request); }, 1000));
      }
      const cpu = process.cpuUsage();
      const wall = process.hrtime.bigint();
      for (let i = 0; i < batch; i++) await b.exchange(chunks);
      const used = process.cpuUsage(cpu);
      add(`${b.label} exchange CPU µs`, (used.user + used.system) / batch);
      add(`${b.label} exchange wall µs`, Number(process.hrtime.bigint() - wall) / 1000 / batch);
      // A few hundred, within one young generation: no collection in between.
      gc!();
      const before = process.memoryUsage();
      for (let i = 0; i < 200; i++) await b.exchange(chunks);
      const after = process.memoryUsage();
      add(`${b.label} exchange B`, (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers) / 200);
    }
  }
  server.stop();
  for (const [key, values] of [...results].sort(([a], [b]) => a.slice(2).localeCompare(b.slice(2)) || a.localeCompare(b))) {
    process.stdout.write(`${key}: ${median(values).toFixed(1)} (rounds ${values.map((v) => v.toFixed(1)).join(', ')})\n`);
  }
  void sink;
  process.exit(0);
}

await main();
