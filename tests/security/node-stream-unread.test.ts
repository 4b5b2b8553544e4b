// A client that opens ModelStreamInfer on a decoupled model and stops reading: the node must not hold an
// unbounded backlog of answers. Past MAX_UNSENT_STREAM_BYTES unsent, the stream ends RESOURCE_EXHAUSTED and
// the model sees its request cancelled.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema, type ModelInferRequest, type ModelStreamInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { MAX_UNSENT_STREAM_BYTES } from '../../gpu-node/src/server/grpc/infer-handlers.js';
import { grpcClient, startTestNode, type TestNode } from '../../gpu-node/test/support.js';

const svc = clientServiceDefinition(GRPCInferenceService);
const MIB = 1024 * 1024;
const RESPONSES = 256; // 256 MiB if nothing stopped it

// Sends 1 MiB answers as fast as the node takes them until told to stop, then records how many it sent.
const FLOOD_MODEL = `import { writeFileSync } from 'node:fs';
let marker = '';
export function initialize(args) { marker = args.parameters.marker; }
export async function execute(requests) {
  for (const request of requests) {
    let sent = 0;
    for (; sent < ${RESPONSES} && !request.signal.aborted; sent++) {
      request.sender.send({ outputs: { OUTPUT0: { datatype: 'FP32', shape: [262144], data: new Float32Array(262144) } } });
      await new Promise((resolve) => setImmediate(resolve));
    }
    writeFileSync(marker, JSON.stringify({ sent, aborted: request.signal.aborted }));
    request.sender.close();
  }
}
`;

describe('ModelStreamInfer with a client that stops reading', () => {
  let dir: string;
  let node: TestNode;
  let client: Client;
  const marker = () => join(dir, 'flood-done.json');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-unread-'));
    const model = join(dir, 'models', 'flood');
    await mkdir(join(model, '1'), { recursive: true });
    await writeFile(join(model, '1', 'model.js'), FLOOD_MODEL);
    await writeFile(join(model, '1', 'package.json'), '{ "type": "module" }\n');
    await writeFile(
      join(model, 'config.pbtxt'),
      `name: "flood"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
parameters { key: "marker" value: { string_value: "${marker()}" } }
`,
    );
    node = await startTestNode(join(dir, 'models'));
    client = grpcClient(node.grpcTarget);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await node?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends the stream RESOURCE_EXHAUSTED and cancels the model instead of buffering without bound', async () => {
    const stream = client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
    const ended = new Promise<ServiceError | undefined>((resolve) => {
      stream.on('error', (error: ServiceError) => resolve(error));
      stream.on('end', () => resolve(undefined));
    });
    const request: ModelInferRequest = create(ModelInferRequestSchema, {
      modelName: 'flood',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n], contents: { fp32Contents: [1] } }],
    });
    stream.write(request);
    // Not reading: answers pile up at the node until its bound ends the stream.
    stream.pause();
    const deadline = Date.now() + 60_000;
    while (!existsSync(marker()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const result = JSON.parse(readFileSync(marker(), 'utf8')) as { sent: number; aborted: boolean };
    expect(result.aborted, `the model sent ${result.sent} MiB`).toBe(true);
    expect(result.sent).toBeLessThan(RESPONSES);
    // Reading again drains what was sent, then the status that ended it.
    const received: ModelStreamInferResponse[] = [];
    stream.on('data', (r: ModelStreamInferResponse) => received.push(r));
    stream.resume();
    const error = await ended;
    expect(error?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error?.details).toMatch(/the client is not reading the stream/);
    expect(received.length * MIB).toBeLessThan(MAX_UNSENT_STREAM_BYTES + 64 * MIB);
  }, 90_000);
});
