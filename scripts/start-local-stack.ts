/**
 * `npm start`: runs the local stack on embedded defaults. Writes the example model repository to
 * ./models when that folder is missing, then starts one node agent on Triton's ports (8000 HTTP,
 * 8001 gRPC, 8002 metrics). Ctrl-C (SIGINT) or SIGTERM stops everything cleanly.
 * Environment overrides: TESSERA_MODELS (repository folder), TESSERA_HTTP_PORT, TESSERA_GRPC_PORT,
 * TESSERA_METRICS_PORT.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeExampleRepository } from '../gpu-node/src/example-models/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.resolve(process.env.TESSERA_MODELS ?? path.join(root, 'models'));

if (!existsSync(modelsDir)) {
  console.log(`writing the example model repository to ${modelsDir} ...`);
  await writeExampleRepository(modelsDir);
}

const nodeArgs = [
  path.join(root, 'bin', 'tessera-node.js'),
  '--model-repository',
  modelsDir,
  '--http-port',
  process.env.TESSERA_HTTP_PORT ?? '8000',
  '--grpc-port',
  process.env.TESSERA_GRPC_PORT ?? '8001',
  '--metrics-port',
  process.env.TESSERA_METRICS_PORT ?? '8002',
];
const node = spawn(process.execPath, nodeArgs, { stdio: 'inherit' });
console.log(`tessera-node starting: HTTP :${nodeArgs[4]}, gRPC :${nodeArgs[6]}, metrics :${nodeArgs[8]}`);

const stop = (signal: NodeJS.Signals): void => {
  node.kill(signal);
};
process.on('SIGINT', () => stop('SIGTERM'));
process.on('SIGTERM', () => stop('SIGTERM'));
node.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
