/**
 * `npm start`: runs the local stack on embedded defaults. Writes the example model repository to
 * ./models when that folder is missing, starts one node agent on Triton's ports (8000 HTTP, 8001 gRPC,
 * 8002 metrics) and the gateway on 8080 in front of it. The gateway runs without Redis (in-process
 * stores, a warning says so) unless REDIS_URL is set, and prints a demo tenant's API key at start.
 * Ctrl-C (SIGINT) or SIGTERM stops both cleanly.
 * Environment overrides: TESSERA_MODELS (repository folder), TESSERA_HTTP_PORT, TESSERA_GRPC_PORT,
 * TESSERA_METRICS_PORT, TESSERA_GATEWAY_PORT, REDIS_URL.
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

if (!existsSync(modelsDir)) {
  console.log(`writing the example model repository to ${modelsDir} ...`);
  await writeExampleRepository(modelsDir);
}

const children: ChildProcess[] = [];
const launch = (script: string, args: readonly string[]): ChildProcess => {
  const child = spawn(process.execPath, [path.join(root, 'bin', script), ...args], { stdio: 'inherit' });
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
launch('tessera-gateway.js', [
  '--port', gatewayPort,
  ...(process.env.REDIS_URL ? [] : ['--node', `grpc=127.0.0.1:${grpcPort},http=127.0.0.1:${httpPort}`]),
]);
console.log(
  `tessera: node HTTP :${httpPort}, gRPC :${grpcPort}, metrics :${metricsPort}; gateway :${gatewayPort} ` +
    '(its demo API key is printed in its log below)',
);

process.on('SIGINT', stop);
process.on('SIGTERM', stop);
let exited = 0;
for (const child of children) {
  child.on('exit', () => {
    exited += 1;
    if (exited === children.length) process.exit(0);
  });
}
