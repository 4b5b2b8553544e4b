import { describe, expect, it } from 'vitest';
import { parseModelConfigText } from '../../../shared/src/model-config/index.js';
import { batchingCandidates, fullBatchDelayUs, mlpConfigText, withoutBatching } from './batching-configs.js';

describe('mlp_large setups', () => {
  it('write configs the node parses, with the batching and threads asked for', () => {
    for (const setup of batchingCandidates(2)) {
      const config = parseModelConfigText(mlpConfigText(setup), 'config.pbtxt');
      expect(config.maxBatchSize).toBe(64);
      expect(config.instanceGroup[0]?.count).toBe(setup.instances);
      expect(config.parameters.intra_op_thread_count?.stringValue).toBe(String(setup.intraOpThreads));
      expect(config.schedulingChoice.case).toBe('dynamicBatching');
      if (config.schedulingChoice.case === 'dynamicBatching') {
        const db = config.schedulingChoice.value;
        expect(db.preferredBatchSize).toEqual(setup.dynamicBatching?.preferredBatchSizes);
        expect(Number(db.maxQueueDelayMicroseconds)).toBe(setup.dynamicBatching?.maxQueueDelayUs);
      }
    }
  });

  it('drop only the dynamic_batching block for the unbatched setup', () => {
    const [first] = batchingCandidates(4);
    const plain = withoutBatching(first!);
    const config = parseModelConfigText(mlpConfigText(plain), 'config.pbtxt');
    expect(config.schedulingChoice.case).toBeUndefined();
    expect(plain).toMatchObject({ instances: first!.instances, intraOpThreads: first!.intraOpThreads });
  });

  it('give full-batch a delay of twice one full execution, in whole ms, at least 10 ms', () => {
    expect(fullBatchDelayUs(13_200)).toBe(27_000);
    expect(fullBatchDelayUs(2_000)).toBe(10_000);
    expect(fullBatchDelayUs(Number.NaN)).toBe(10_000);
    expect(batchingCandidates(2, 14_000).find((c) => c.id === 'full-batch')?.dynamicBatching?.maxQueueDelayUs).toBe(28_000);
  });

  it('split the cores between two instances', () => {
    expect(batchingCandidates(2).find((c) => c.instances === 2)?.intraOpThreads).toBe(1);
    expect(batchingCandidates(1).every((c) => c.instances === 1)).toBe(true);
  });
});
