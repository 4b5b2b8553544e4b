import { describe, expect, it } from 'vitest';
import { createStaticNodeDirectory } from './static-node-directory.js';

describe('createStaticNodeDirectory', () => {
  it('serves any model from nodes without a list, only the listed ones otherwise', () => {
    const directory = createStaticNodeDirectory([
      { grpcAddress: '10.0.0.1:8001' },
      { id: 'gpu-b', grpcAddress: '10.0.0.2:8001', models: ['resnet'], capacity: 2 },
    ]);
    expect(directory.candidates('bert').map((n) => n.id)).toEqual(['10.0.0.1:8001']);
    expect(directory.candidates('resnet', '3').map((n) => n.id)).toEqual(['10.0.0.1:8001', 'gpu-b']);
    expect(directory.candidates('resnet')[1]!.models.get('resnet')).toMatchObject({ queued: 0, inflight: 0, capacity: 2 });
  });

  it('learns load only from trailing metadata, and releases each tracked request once', () => {
    const directory = createStaticNodeDirectory([{ id: 'n', grpcAddress: 'localhost:8001' }]);
    const node = directory.candidates('m')[0]!;
    directory.observe('n', 'm', { queued: 4, inflight: 2 });
    expect(node.models.get('m')).toMatchObject({ queued: 4, inflight: 2, capacity: 8 });
    const release = directory.track('n');
    expect(node.localInflight).toBe(1);
    release();
    release();
    expect(node.localInflight).toBe(0);
  });

  it('refuses a node without address, a duplicate id and a bad capacity', () => {
    expect(() => createStaticNodeDirectory([{ id: 'x' }])).toThrow(/static node 0: set grpcAddress or httpAddress/);
    expect(() => createStaticNodeDirectory([{ grpcAddress: 'a:1' }, { grpcAddress: 'a:1' }])).toThrow(/listed twice/);
    expect(() => createStaticNodeDirectory([{ grpcAddress: 'a:1', capacity: 0 }])).toThrow(/capacity must be a positive integer/);
  });
});
