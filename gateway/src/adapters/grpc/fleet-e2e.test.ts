/**
 * The whole routing path with real parts: a node process reporting to a real redis-server, the Redis
 * node directory, the gRPC transport (each of the two) and the dispatcher.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { startRedisServer, waitFor } from '../../../../shared/test/support/index.js';
import type { RedisServer } from '../../../../shared/test/support/index.js';
import type { Tier } from '../../core/ports/index.js';
import { createDispatcher } from '../../core/routing/index.js';
import { createRedisNodeDirectory } from '../fleet/index.js';
import type { RedisNodeDirectory } from '../fleet/index.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport, type H2TransportOptions } from './h2-transport.js';
import { startNodeProcess } from '../../../test/support/test-node-process.js';
import { simpleRequest } from '../../../test/support/test-node-requests.js';
import type { NodeProcess } from '../../../test/support/test-node-process.js';
import { testTier } from '../../core/routing/test-tier.js';

const tier: Tier = testTier(20_000);

const request: InferRequest = simpleRequest(2);

const transports: [string, (options: Pick<H2TransportOptions, 'fleetEvents'>) => GrpcTransport][] = [
  ['http2', createH2Transport],
];

describe.each(transports)('a reporting node through Redis, the directory and the dispatcher (%s transport)', (_name, createTransport) => {
  let redis: RedisServer;
  let node: NodeProcess | undefined;
  let directory: RedisNodeDirectory;

  beforeAll(async () => {
    redis = await startRedisServer();
    directory = await createRedisNodeDirectory({ redis: redis.url, refreshMs: 100 });
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'e2e-node', '--advertise-host', '127.0.0.1']);
  });

  afterAll(async () => {
    await node?.stop();
    await directory?.close();
    await redis?.stop();
  });

  it('becomes a candidate from its report, serves, and leaves the pick set when it stops', async () => {
    await waitFor(() => directory.candidates('simple').length === 1, { what: 'the node to register', timeoutMs: 30_000 });
    const view = directory.candidates('simple')[0]!;
    expect(view.id).toBe('e2e-node');
    expect(view.grpcAddress).toBe(node!.grpcAddress);
    expect(view.models.get('simple')).toMatchObject({ versions: ['1'], capacity: expect.any(Number) });
    expect(directory.candidates('sleepy').map((n) => n.id)).toEqual(['e2e-node']);

    const transport = createTransport({ fleetEvents: directory });
    const dispatcher = createDispatcher({ directory, transport, breakers: transport.breakers, fleetEvents: directory });
    try {
      const result = await dispatcher.dispatch(request, { tenantId: 't', tier, deadline: Date.now() + 20_000 });
      expect(result.response.outputs.map((o) => o.name).sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
      expect(view.localInflight).toBe(0);
      expect(dispatcher.modelReady('simple', '1')).toBe(true);
      expect(dispatcher.modelReady('simple', '2')).toBe(false);

      await node!.stop();
      node = undefined;
      await waitFor(() => directory.all().length === 0, { what: 'the node to leave', timeoutMs: 30_000 });
      expect(dispatcher.modelReady('simple')).toBe(false);
      // A model the gateway knows, with no node serving it now: 503, worth a retry (not Triton's unknown-model answer).
      await expect(dispatcher.dispatch(request, { tenantId: 't', tier, deadline: Date.now() + 5000 })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
      });
    } finally {
      await dispatcher.close();
      await transport.close();
    }
  });
});
