/**
 * The sequence batcher against fake instances and a FakeClock: slot assignment, backlog, idle reaper,
 * control inputs, null requests, the oldest strategy, implicit state, cancellation and Triton's errors.
 * Time only moves when a test advances it, so every decision is deterministic.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import { BatcherCounters } from '../../src/scheduler/dynamic/batcher-observer.js';
import { FakeClock, flushPromises } from '../../src/scheduler/dynamic/fake-clock.js';
import { track } from '../support/batcher-test-support.js';
import type { ScheduledResult } from '../../src/scheduler/scheduler.js';
import { SequenceBatchScheduler } from '../../src/scheduler/sequence/index.js';
import {
  accumulatorConfig,
  control,
  FakeStatefulInstance,
  floats,
  fp32,
  input,
  seqRequest,
} from './fake-stateful-instance.js';

function setup(config: ModelConfig = accumulatorConfig(), instanceCount = 1) {
  const clock = new FakeClock();
  const instances = Array.from({ length: instanceCount }, (_, i) => new FakeStatefulInstance(`fake_${i}`));
  const counters = new BatcherCounters();
  const executions: number[] = [];
  const scheduler = new SequenceBatchScheduler(
    config,
    instances,
    { executionFinished: (batchSize) => executions.push(batchSize) },
    { clock, queueObserver: counters },
  );
  return { clock, instances, scheduler, counters, executions, fake: instances[0] as FakeStatefulInstance };
}

function outputOf(result: ScheduledResult | undefined): number[] {
  if (result === undefined || 'error' in result.result) throw new Error(`no outputs: ${JSON.stringify(result)}`);
  expect(result.result.outputs.map((o) => o.name)).toEqual(['OUTPUT']); // the state output stays hidden
  return floats(result.result.outputs[0]);
}

async function rejection(promise: Promise<unknown>): Promise<TesseraError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TesseraError)) throw new Error(`expected a TesseraError, got ${String(error)}`);
  return error;
}

describe('direct strategy', () => {
  it('gives new sequences the lowest free slot and keeps each in its batch row', async () => {
    const { scheduler, fake } = setup();
    const a = track(scheduler.enqueue(seqRequest(11, 1, { start: true })));
    await flushPromises();
    // Instance idle: A runs alone in slot 0.
    expect(fake.batches[0]?.map((r) => control(r, 'CORRID'))).toEqual([11n]);
    const b = track(scheduler.enqueue(seqRequest(22, 5, { start: true })));
    const a2 = track(scheduler.enqueue(seqRequest(11, 2)));
    fake.complete();
    await flushPromises();
    expect(outputOf(a.value)).toEqual([1]);
    // Next batch: slot 0 = A, slot 1 = B, whatever the arrival order.
    const batch = fake.batches[1] ?? [];
    expect(batch.map((r) => control(r, 'CORRID'))).toEqual([11n, 22n]);
    expect(batch.map((r) => control(r, 'START'))).toEqual([0, 1]);
    expect(batch.map((r) => control(r, 'READY'))).toEqual([1, 1]);
    expect(batch.map((r) => control(r, 'END'))).toEqual([0, 0]);
    fake.complete();
    await flushPromises();
    expect(outputOf(a2.value)).toEqual([3]); // 1 + 2: A's state carried
    expect(outputOf(b.value)).toEqual([5]);
  });

  it('pads an empty lower slot with a null request (READY false, CORRID 0, initial state)', async () => {
    const { scheduler, fake, executions } = setup();
    const a = track(scheduler.enqueue(seqRequest(1, 1, { start: true })));
    const b = track(scheduler.enqueue(seqRequest(2, 10, { start: true })));
    await flushPromises();
    fake.complete();
    await flushPromises();
    expect(a.status).toBe('resolved');
    expect(fake.batches[0]?.length).toBe(1); // A arrived alone at an idle instance
    fake.complete(); // B (slot 1) with a null row for slot 0
    await flushPromises();
    const padded = fake.batches[1] ?? [];
    expect(padded.map((r) => control(r, 'READY'))).toEqual([0, 1]);
    expect(padded.map((r) => control(r, 'CORRID'))).toEqual([0n, 2n]);
    expect(floats(input(padded[0] as never, 'STATE'))).toEqual([0]);
    expect(floats(input(padded[0] as never, 'INPUT'))).toEqual([0]);
    expect(outputOf(b.value)).toEqual([10]);
    // Statistics count real requests only: the null row is not an inference.
    expect(executions).toEqual([1, 1]);
  });

  it('spreads sequences over instances: slot 0 on every instance, then slot 1', async () => {
    const { scheduler, instances } = setup(accumulatorConfig(), 2);
    for (const id of [1, 2, 3]) void scheduler.enqueue(seqRequest(id, id, { start: true }));
    await flushPromises();
    const corrids = instances.map((inst) => inst.batches.map((batch) => batch.map((r) => control(r, 'CORRID'))));
    expect(corrids[0]).toEqual([[1n]]);
    expect(corrids[1]).toEqual([[2n]]);
    instances[0]?.complete();
    await flushPromises();
    expect(instances[0]?.batches[1]?.map((r) => control(r, 'CORRID'))).toEqual([0n, 3n]); // slot 1 of instance 0
  });

  it('resets the state on START and frees the slot when END is batched', async () => {
    const { scheduler, fake } = setup();
    const results = [
      scheduler.enqueue(seqRequest(7, 1, { start: true })),
      scheduler.enqueue(seqRequest(7, 2)),
      scheduler.enqueue(seqRequest(7, 3, { end: true })),
    ];
    for (let i = 0; i < 3; i++) {
      await flushPromises();
      fake.complete();
    }
    expect((await Promise.all(results)).map(outputOf)).toEqual([[1], [3], [6]]);
    expect(control(fake.batches[2]?.[0] as never, 'END')).toBe(1);
    // The ID is gone; a new sequence with it starts again from the initial state, in slot 0.
    const again = scheduler.enqueue(seqRequest(7, 4, { start: true }));
    await flushPromises();
    fake.complete();
    expect(outputOf(await again)).toEqual([4]);
  });

  it('waits for minimum_slot_utilization until max_queue_delay passes', async () => {
    const config = accumulatorConfig({ strategy: 'direct { max_queue_delay_microseconds: 100 minimum_slot_utilization: 0.5 }' });
    const { scheduler, fake, clock } = setup(config);
    void scheduler.enqueue(seqRequest(1, 1, { start: true }));
    await flushPromises();
    expect(fake.batches.length).toBe(0); // 1 of 4 slots ready < 0.5
    await clock.advance(99);
    expect(fake.batches.length).toBe(0);
    await clock.advance(1);
    expect(fake.batches.length).toBe(1);
    fake.complete();
    // Two ready slots of four meet the utilization at once.
    void scheduler.enqueue(seqRequest(2, 1, { start: true }));
    void scheduler.enqueue(seqRequest(3, 1, { start: true }));
    await flushPromises();
    expect(fake.batches[1]?.map((r) => control(r, 'CORRID'))).toEqual([0n, 2n, 3n]);
  });
});

describe('backlog and idle reaper', () => {
  it('queues a new sequence in a backlog until a slot frees, FIFO', async () => {
    const { scheduler, fake } = setup(accumulatorConfig({ maxBatchSize: 1 }));
    const a = track(scheduler.enqueue(seqRequest(1, 1, { start: true })));
    const b = track(scheduler.enqueue(seqRequest(2, 10, { start: true })));
    const c = track(scheduler.enqueue(seqRequest(3, 100, { start: true, end: true })));
    const b2 = track(scheduler.enqueue(seqRequest(2, 20, { end: true })));
    await flushPromises();
    expect(scheduler.queued()).toBe(3);
    fake.complete();
    await flushPromises();
    expect(outputOf(a.value)).toEqual([1]);
    expect(fake.batches.length).toBe(1); // A holds the only slot, B and C wait
    const a2 = track(scheduler.enqueue(seqRequest(1, 2, { end: true })));
    await flushPromises();
    fake.complete();
    await flushPromises();
    expect(outputOf(a2.value)).toEqual([3]);
    // A's END freed the slot: B (the oldest backlog) gets it with both its requests, then C.
    for (let i = 0; i < 3; i++) {
      fake.complete();
      await flushPromises();
    }
    expect(outputOf(b.value)).toEqual([10]);
    expect(outputOf(b2.value)).toEqual([30]);
    expect(outputOf(c.value)).toEqual([100]);
    expect(fake.batches.map((batch) => batch.map((r) => control(r, 'CORRID')))).toEqual([[1n], [1n], [2n], [2n], [3n]]);
  });

  it('frees the slot of a sequence idle for max_sequence_idle_microseconds; its next request needs START', async () => {
    const { scheduler, fake, clock } = setup(accumulatorConfig({ maxBatchSize: 1, idleUs: 1000 }));
    const a = scheduler.enqueue(seqRequest(1, 1, { start: true }));
    await flushPromises();
    fake.complete();
    expect(outputOf(await a)).toEqual([1]);
    const b = track(scheduler.enqueue(seqRequest(2, 5, { start: true })));
    await clock.advance(999);
    expect(b.status).toBe('pending'); // backlogged: A still holds the slot
    await clock.advance(1);
    fake.complete();
    await flushPromises();
    expect(outputOf(b.value)).toEqual([5]);
    const late = await rejection(scheduler.enqueue(seqRequest(1, 2)));
    expect(late.code).toBe('INVALID_ARG');
    expect(late.message).toContain("inference request for sequence 1 to model 'acc' must specify the START flag");
  });

  it('does not reap a sequence that keeps sending', async () => {
    const { scheduler, fake, clock } = setup(accumulatorConfig({ maxBatchSize: 1, idleUs: 1000 }));
    const results: Promise<ScheduledResult>[] = [scheduler.enqueue(seqRequest(1, 1, { start: true }))];
    for (let i = 0; i < 5; i++) {
      await clock.advance(600);
      fake.complete();
      results.push(scheduler.enqueue(seqRequest(1, 1)));
    }
    await flushPromises();
    fake.complete();
    expect((await Promise.all(results)).map(outputOf)).toEqual([[1], [2], [3], [4], [5], [6]]);
  });
});

describe('oldest strategy', () => {
  it('batches the oldest sequences, at most one request of a sequence per batch, no null rows', async () => {
    const config = accumulatorConfig({ maxBatchSize: 2, strategy: 'oldest { max_candidate_sequences: 4 }' });
    const { scheduler, fake } = setup(config);
    const first = scheduler.enqueue(seqRequest(9, 100, { start: true }));
    await flushPromises();
    const results = [
      scheduler.enqueue(seqRequest(1, 1, { start: true })),
      scheduler.enqueue(seqRequest(1, 2)),
      scheduler.enqueue(seqRequest(1, 3)),
      scheduler.enqueue(seqRequest(2, 10, { start: true })),
      scheduler.enqueue(seqRequest(3, 20, { start: true })),
    ];
    for (let i = 0; i < 4; i++) {
      fake.complete();
      await flushPromises();
    }
    expect(fake.batches.map((batch) => batch.map((r) => control(r, 'CORRID')))).toEqual([
      [9n],
      [1n, 2n], // the two oldest fronts; A's second request waits for its first
      [1n, 3n],
      [1n],
    ]);
    expect(fake.batches.flat().every((r) => control(r, 'READY') === 1)).toBe(true);
    expect(outputOf(await first)).toEqual([100]);
    expect((await Promise.all(results)).map(outputOf)).toEqual([[1], [3], [6], [10], [20]]);
  });
});

describe("Triton's errors", () => {
  it('refuses bad requests without disturbing other sequences', async () => {
    const { scheduler, fake } = setup();
    const a1 = scheduler.enqueue(seqRequest(1, 1, { start: true }));
    const errors = await Promise.all([
      rejection(scheduler.enqueue(seqRequest(5, 1))),
      rejection(scheduler.enqueue(seqRequest(0, 1, { start: true }))),
      rejection(scheduler.enqueue(seqRequest('', 1, { start: true }))),
      rejection(scheduler.enqueue(seqRequest(6, 1, { start: true, batchSize: 2 }))),
    ]);
    expect(errors.map((e) => e.code)).toEqual(['INVALID_ARG', 'INVALID_ARG', 'INVALID_ARG', 'INVALID_ARG']);
    expect(errors[0]?.message).toBe(
      "[request id: 5:1] inference request for sequence 5 to model 'acc' must specify the START flag on the first request of the sequence",
    );
    expect(errors[1]?.message).toContain("inference request to model 'acc' must specify a non-zero or non-empty correlation ID");
    expect(errors[2]?.message).toContain('must specify a non-zero or non-empty correlation ID');
    expect(errors[3]?.message).toContain("inference request to model 'acc' must specify batch-size 1 due to requirements of sequence batcher");
    await flushPromises();
    fake.complete();
    const a2 = scheduler.enqueue(seqRequest(1, 2, { end: true }));
    await flushPromises();
    fake.complete();
    expect([outputOf(await a1), outputOf(await a2)]).toEqual([[1], [3]]);
    // END went out: the sequence is gone, and so is its right to continue without START.
    const gone = await rejection(scheduler.enqueue(seqRequest(1, 3, { end: true })));
    expect(gone.message).toContain("inference request for sequence 1 to model 'acc' must specify the START flag");
    expect(scheduler.queued()).toBe(0);
  });

  it('refuses a correlation ID whose type does not fit the CORRID control', async () => {
    const numeric = setup();
    expect((await rejection(numeric.scheduler.enqueue(seqRequest('abc', 1, { start: true })))).message).toContain(
      "has a string correlation ID, but its CORRID control 'CORRID' needs an integer ID",
    );
    const strings = setup(accumulatorConfig({ corridType: 'TYPE_STRING' }));
    const ok = strings.scheduler.enqueue(seqRequest('abc', 1, { start: true }));
    await flushPromises();
    const corrid = input(strings.fake.batches[0]?.[0] as never, 'CORRID');
    expect(corrid?.datatype).toBe('BYTES');
    expect(new TextDecoder().decode(corrid?.data.subarray(4))).toBe('abc');
    strings.fake.complete();
    expect(outputOf(await ok)).toEqual([1]);
  });

  it('fails the request whose state output has the wrong shape, keeping the previous state', async () => {
    const { scheduler, fake } = setup();
    const r1 = scheduler.enqueue(seqRequest(1, 1, { start: true }));
    await flushPromises();
    fake.complete();
    const r2 = scheduler.enqueue(seqRequest(1, 2));
    await flushPromises();
    fake.complete(() => ({ outputs: [fp32('OUTPUT', [0]), fp32('STATE_OUT', [1, 2], [1, 2])] }));
    const r3 = scheduler.enqueue(seqRequest(1, 4));
    await flushPromises();
    fake.complete();
    expect(outputOf(await r1)).toEqual([1]);
    const bad = (await r2).result;
    expect('error' in bad && bad.error.message).toBe(
      "state output 'STATE_OUT' of model 'acc' for sequence 1 has datatype FP32 and shape [1,2], but state 'STATE' is declared as FP32 [1,1]",
    );
    expect(outputOf(await r3)).toEqual([5]); // 1 + 4: the bad state was not fed back
  });

  it('refuses at load an initial_state that does not fit the state', () => {
    const config = accumulatorConfig({ initialState: 'data_type: TYPE_FP32 dims: [ 2 ] zero_data: true name: "z"' });
    expect(() => setup(config)).toThrow("state 'STATE' of model 'acc': initial_state dims [2] do not match the state dims [1]");
  });
});

describe('cancellation, stop and initial data', () => {
  it('cancelling a queued request cancels its sequence and frees the slot for the backlog', async () => {
    const { scheduler, fake, counters } = setup(accumulatorConfig({ maxBatchSize: 1 }));
    const controller = new AbortController();
    const a1 = scheduler.enqueue(seqRequest(1, 1, { start: true }));
    await flushPromises();
    const a2 = track(scheduler.enqueue(seqRequest(1, 2, { signal: controller.signal })));
    const a3 = track(scheduler.enqueue(seqRequest(1, 3)));
    const b = track(scheduler.enqueue(seqRequest(2, 10, { start: true })));
    controller.abort();
    await flushPromises();
    expect([a2.status, a3.status]).toEqual(['rejected', 'rejected']);
    expect((a2.error as TesseraError).code).toBe('CANCELLED');
    expect(counters.cancelled).toBe(2);
    fake.complete();
    await flushPromises();
    expect(outputOf(await a1)).toEqual([1]);
    fake.complete();
    await flushPromises();
    expect(outputOf(b.value)).toEqual([10]);
  });

  it('stop refuses new requests and resolves once accepted ones have run', async () => {
    const { scheduler, fake } = setup();
    const a = scheduler.enqueue(seqRequest(1, 1, { start: true }));
    await flushPromises();
    const stopped = track(scheduler.stop());
    const refused = await rejection(scheduler.enqueue(seqRequest(2, 1, { start: true })));
    expect(refused.code).toBe('UNAVAILABLE');
    await flushPromises();
    expect(stopped.status).toBe('pending');
    fake.complete();
    expect(outputOf(await a)).toEqual([1]);
    await flushPromises();
    expect(stopped.status).toBe('resolved');
  });

  it('reads initial_state data_file from <model>/initial_state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-seq-'));
    try {
      await mkdir(join(dir, 'initial_state'));
      await writeFile(join(dir, 'initial_state', 'start.bin'), new Uint8Array(Float32Array.of(100).buffer));
      const config = accumulatorConfig({ initialState: 'data_type: TYPE_FP32 dims: [ 1 ] data_file: "start.bin" name: "h"' });
      const fake = new FakeStatefulInstance();
      const scheduler = new SequenceBatchScheduler(config, [fake], undefined, { clock: new FakeClock(), modelDir: dir });
      const r = scheduler.enqueue(seqRequest(1, 1, { start: true }));
      await flushPromises();
      fake.complete();
      expect(outputOf(await r)).toEqual([101]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
