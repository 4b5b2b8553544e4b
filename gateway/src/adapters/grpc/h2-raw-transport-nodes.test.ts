/**
 * The raw HTTP/2 upstream (`rawH2`, h2-raw-node-connection.ts) against real nodes: the node's gRPC port
 * on grpc-js (its default) and on its own raw HTTP/2 front (`--grpc-raw-h2 true`). Every unary RPC the
 * gateway makes, a node error's status and load, concurrent calls answered each with its own result,
 * a deadline that passes on the node (`sleepy`), and a large request sent across the node's windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeView } from '../../core/ports/index.js';
import { createStaticNodeDirectory } from '../fleet/index.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport } from './h2-transport.js';
import { startNodeProcess, type NodeProcess } from '../../../test/support/test-node-process.js';
import { simpleRequest, sleepyRequest } from '../../../test/support/test-node-requests.js';

const int32s = (bytes: Uint8Array | undefined): number[] => [...new Int32Array(new Uint8Array(bytes!).buffer)];

describe.each([
  ['grpc-js', []],
  ['its raw HTTP/2 front', ['--grpc-raw-h2', 'true']],
])('the raw HTTP/2 upstream against a real node on %s', (_front, args) => {
  let node: NodeProcess;
  let view: NodeView;
  let transport: GrpcTransport;

  beforeAll(async () => {
    node = await startNodeProcess(args);
    view = createStaticNodeDirectory([{ id: 'n', grpcAddress: node.grpcAddress }]).all()[0]!;
    transport = createH2Transport({ breaker: { volumeThreshold: 1000 } });
  }, 60_000);

  afterAll(async () => {
    await transport?.close();
    await node?.stop();
  });

  const soon = (): number => Date.now() + 20_000;

  it('ModelInfer: concurrent calls each get their own sums, with the node load from the trailers', async () => {
    const results = await Promise.all([0, 100, 200, 300].map((offset) => transport.infer(view, simpleRequest(offset), { deadline: soon() })));
    results.forEach((result, i) => {
      const out = result.response.outputs.find((o) => o.name === 'OUTPUT0')!;
      expect(int32s(out.data)).toEqual(Array.from({ length: 16 }, (_, k) => k + 100 * i + 1));
      expect(result.load).toBeDefined();
    });
  });

  it('model metadata and config', async () => {
    const metadata = (await transport.modelMetadata(view, 'simple', undefined, { deadline: soon() })) as { name: string };
    expect(metadata.name).toBe('simple');
    const config = (await transport.modelConfig(view, 'simple', undefined, { deadline: soon() })) as { name: string };
    expect(config.name).toBe('simple');
  });

  it("a node's error keeps its status: an unknown model is INVALID_ARGUMENT (as Triton answers) with the node's message", async () => {
    const error = await transport.infer(view, { ...simpleRequest(0), modelName: 'nope' }, { deadline: soon() }).then(
      () => ({ code: 'OK', message: '' }),
      (e: unknown) => e as { code: string; message: string },
    );
    expect(error).toMatchObject({ code: 'INVALID_ARG' });
    expect(error.message).toMatch(/unknown model/);
  });

  it('a deadline that passes while the node works: DEADLINE_EXCEEDED, and the next call is served', async () => {
    const error = await transport.infer(view, sleepyRequest(2000), { deadline: Date.now() + 200 }).catch((e: unknown) => e as { code: string });
    expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect((await transport.infer(view, simpleRequest(7), { deadline: soon() })).response.modelName).toBe('simple');
  });
});
