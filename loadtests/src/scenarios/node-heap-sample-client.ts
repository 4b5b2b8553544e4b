/**
 * node-heap-sample.ts's load generator in a worker thread (HEAP_SAMPLE_CLIENT_WORKER=1): its allocations are
 * then in another isolate, out of the sampled profile, which holds the node's alone. Each message is a
 * number of requests to send; the reply says they are done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sendClosedLoop } from '../lib/load/closed-loop.js';

interface ClientData {
  readonly protocol: 'http' | 'grpc';
  readonly port: number;
  readonly concurrency: number;
  readonly request: InferRequest;
}

const { protocol, port, concurrency, request } = workerData as ClientData;
const client: InferClient = protocol === 'http' ? createHttpInferClient('127.0.0.1', port, concurrency) : createGrpcInferClient('127.0.0.1', port);

async function drive(n: number): Promise<void> {
  await sendClosedLoop(n, concurrency, () => client.infer(request));
}

parentPort?.on('message', (n: number) => {
  if (n === 0) {
    void client.close().then(() => process.exit(0));
    return;
  }
  void drive(n).then(() => parentPort?.postMessage('done'));
});
