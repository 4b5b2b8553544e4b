/**
 * `npm start`: runs the local stack on embedded defaults. Writes the example model repository to
 * ./models when that folder is missing, starts one node agent on Triton's ports (8000 HTTP, 8001 gRPC,
 * 8002 metrics) and the gateway on 8080 (HTTP) and 8081 (gRPC, Triton's protocol with an API key) in front of it. The gateway runs without Redis (in-process
 * stores, a warning says so) unless REDIS_URL is set, and prints a demo tenant's API key at start.
 * Once the node is ready (its models loaded) and the gateway answers, it says so and prints a
 * ready-to-paste `export DEMO_KEY=...` and curl through the gateway.
 * Ctrl-C (SIGINT) or SIGTERM stops both cleanly.
 * Environment overrides: TESSERA_MODELS (repository folder), TESSERA_HTTP_PORT, TESSERA_GRPC_PORT,
 * TESSERA_METRICS_PORT, TESSERA_GATEWAY_PORT, TESSERA_GATEWAY_GRPC_PORT, REDIS_URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeExampleRepository } from '../gpu-node/src/example-models/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.resolve(process.env.TESSERA_MODELS ?? path.join(root, 'models'));
const httpPort = process.env.TESSERA_HTTP_PORT ?? '8000';
const grpcPort = process.env.TESSERA_GRPC_PORT ?? '8001';
const metricsPort = process.env.TESSERA_METRICS_PORT ?? '8002';
const gatewayPort = process.env.TESSERA_GATEWAY_PORT ?? '8080';
const gatewayGrpcPort = process.env.TESSERA_GATEWAY_GRPC_PORT ?? '8081';

if (!existsSync(modelsDir)) {
  console.log(`writing the example model repository to ${modelsDir} ...`);
  await writeExampleRepository(modelsDir);
}

const children: ChildProcess[] = [];
const launch = (script: string, args: readonly string[], stdout: 'inherit' | 'pipe' = 'inherit'): ChildProcess => {
  const child = spawn(process.execPath, [path.join(root, 'bin', script), ...args], { stdio: ['ignore', stdout, 'inherit'] });
  children.push(child);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${script} exited (${signal ?? code}); stopping the stack`);
      stop();
    }
  });
  return child;
};

let stopping = false;
const stop = (): void => {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
};

launch('tessera-node.js', [
  '--model-repository', modelsDir,
  '--http-port', httpPort,
  '--grpc-port', grpcPort,
  '--metrics-port', metricsPort,
  ...(process.env.REDIS_URL ? ['--redis-url', process.env.REDIS_URL] : []),
]);
// Without Redis the gateway learns the node from --node; with Redis it reads the node's load reports.
const gateway = launch(
  'tessera-gateway.js',
  ['--port', gatewayPort, '--grpc-port', gatewayGrpcPort, ...(process.env.REDIS_URL ? [] : ['--node', `grpc=127.0.0.1:${grpcPort},http=127.0.0.1:${httpPort}`])],
  'pipe',
);
// The gateway prints the demo tenant's key on stdout once; we pass its output through and keep the key.
const demoKey = new Promise<string | undefined>((resolve) => {
  let buffered = '';
  gateway.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    buffered += chunk.toString('utf8');
    const found = /API key \(shown once\): (\S+)/.exec(buffered);
    if (found) resolve(found[1]);
  });
  gateway.on('exit', () => resolve(undefined));
});
console.log(`tessera: starting a node (HTTP :${httpPort}, gRPC :${grpcPort}, metrics :${metricsPort}) and the gateway (HTTP :${gatewayPort}, gRPC :${gatewayGrpcPort}) ...`);

/** Polls `url` until it answers 200; false once the stack is stopping. */
async function untilOk(url: string): Promise<boolean> {
  while (!stopping) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

// Ready means the node loaded its models (its /v2/health/ready) and the gateway answers: only then say so.
const [nodeReady, gatewayReady, key] = await Promise.all([
  untilOk(`http://127.0.0.1:${httpPort}/v2/health/ready`),
  untilOk(`http://127.0.0.1:${gatewayPort}/v2/health/ready`),
  demoKey,
]);
if (nodeReady && gatewayReady) {
  const body =
    '{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},' +
    '{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}';
  const lines = [
    `tessera: ready. Node http://localhost:${httpPort} (gRPC :${grpcPort}, metrics http://localhost:${metricsPort}/metrics), gateway http://localhost:${gatewayPort} (gRPC :${gatewayGrpcPort})`,
    ...(key === undefined
      ? []
      : [
          'Try it through the gateway with the demo tenant\'s key:',
          `  export DEMO_KEY=${key}`,
          `  curl -s -X POST localhost:${gatewayPort}/v2/models/simple/infer -H "Authorization: Bearer $DEMO_KEY" -d '${body}'`,
        ]),
  ];
  console.log(lines.join('\n'));
}

process.on('SIGINT', stop);
process.on('SIGTERM', stop);
let exited = 0;
for (const child of children) {
  child.on('exit', () => {
    exited += 1;
    if (exited === children.length) process.exit(0);
  });
}
