/**
 * Property: over random arrival sequences (sizes, shapes, priorities, timeouts, cancellations, gaps) and
 * random execution times, the batcher never exceeds max_batch_size, never mixes shapes, runs each request
 * at most once, never runs a rejected or queue-cancelled request, and answers every request exactly once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batcherOptions } from './batcher-options.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import { FakeClock, flushPromises } from './fake-clock.js';
import { FakeInstance, req } from '../../../test/support/batcher-test-support.js';

const arrival = fc.record({
  gapUs: fc.integer({ min: 0, max: 300 }),
  batchSize: fc.integer({ min: 1, max: 4 }),
  dim: fc.constantFrom(4, 5),
  priority: fc.integer({ min: 0, max: 3 }),
  timeoutUs: fc.integer({ min: 0, max: 400 }),
  cancelAfterUs: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
});

const scenario = fc.record({
  maxBatchSize: fc.integer({ min: 4, max: 8 }),
  preferred: fc.subarray([2, 3, 4]),
  maxQueueDelayUs: fc.constantFrom(0, 50, 200),
  priorityLevels: fc.constantFrom(0, 2),
  delay: fc.boolean(),
  timeoutUs: fc.constantFrom(0, 250),
  instances: fc.integer({ min: 1, max: 3 }),
  execUs: fc.integer({ min: 1, max: 400 }),
  arrivals: fc.array(arrival, { minLength: 1, maxLength: 40 }),
});

describe('DynamicBatcher properties', () => {
  it('keeps batches within max_batch_size and shapes, and answers every request once', async () => {
    let multiRequestBatches = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const clock = new FakeClock();
        const instances = Array.from({ length: s.instances }, () => new FakeInstance());
        const batcher = new DynamicBatcher({
          options: batcherOptions({
            maxBatchSize: s.maxBatchSize,
            preferredBatchSizes: s.preferred,
            maxQueueDelayUs: s.maxQueueDelayUs,
            priorityLevels: s.priorityLevels,
            defaultPriorityLevel: s.priorityLevels === 0 ? 0 : 1,
            defaultQueuePolicy: {
              timeoutAction: s.delay ? 'DELAY' : 'REJECT',
              defaultTimeoutUs: s.timeoutUs,
              allowTimeoutOverride: true,
            },
          }),
          instances,
          clock,
        });
        const info = new Map<string, { size: number; dim: number }>();
        const outcomes = new Map<string, string[]>();
        const answer = (id: string, what: string) => outcomes.set(id, [...(outcomes.get(id) ?? []), what]);
        // Every execution takes execUs of fake time: each newly started batch gets a completion timer.
        let startedBatches = 0;
        const scheduleCompletions = () => {
          instances.forEach((inst) => {
            const started = inst.batches.length;
            if (started > startedBatchesOf(inst)) {
              seen.set(inst, started);
              startedBatches += 1;
              clock.setTimer(() => inst.complete(), s.execUs);
            }
          });
        };
        const seen = new Map<FakeInstance, number>();
        const startedBatchesOf = (inst: FakeInstance) => seen.get(inst) ?? 0;

        for (const [i, a] of s.arrivals.entries()) {
          await clock.advance(a.gapUs);
          scheduleCompletions();
          const id = `r${i}`;
          const ac = new AbortController();
          info.set(id, { size: a.batchSize, dim: a.dim });
          batcher
            .enqueue(req(id, { batchSize: a.batchSize, dims: [a.dim], priority: a.priority, timeoutUs: a.timeoutUs, signal: ac.signal }))
            .then(
              () => answer(id, 'ok'),
              (e: { code: string }) => answer(id, e.code),
            );
          if (a.cancelAfterUs !== undefined) clock.setTimer(() => ac.abort(), a.cancelAfterUs);
          await flushPromises();
          scheduleCompletions();
        }
        // Run until everything is answered and idle (each step lets due completions and delays fire).
        const busy = () => outcomes.size < s.arrivals.length || batcher.queued() + batcher.inflight() > 0;
        for (let step = 0; step < 500 && busy(); step++) {
          await clock.advance(50);
          scheduleCompletions();
        }

        const executed = instances.flatMap((inst) => inst.batches);
        const runs = new Map<string, number>();
        for (const batch of executed) {
          const sizes = batch.map((id) => info.get(id)!);
          expect(sizes.reduce((sum, r) => sum + r.size, 0)).toBeLessThanOrEqual(s.maxBatchSize);
          expect(new Set(sizes.map((r) => r.dim)).size).toBe(1);
          for (const id of batch) runs.set(id, (runs.get(id) ?? 0) + 1);
          if (batch.length > 1) multiRequestBatches += 1;
        }
        expect(startedBatches).toBe(executed.length);
        for (const id of info.keys()) {
          const answers = outcomes.get(id) ?? [];
          expect(answers).toHaveLength(1);
          expect(runs.get(id) ?? 0).toBeLessThanOrEqual(1);
          if (answers[0] === 'ok') expect(runs.get(id)).toBe(1);
          if (answers[0] === 'UNAVAILABLE') expect(runs.get(id)).toBeUndefined();
        }
        if (s.timeoutUs === 0 || s.delay) {
          // Nothing can time out: every request not cancelled ran.
          for (const [i, a] of s.arrivals.entries()) {
            if (a.cancelAfterUs === undefined) expect(outcomes.get(`r${i}`)).toEqual(['ok']);
          }
        }
        expect(batcher.queued() + batcher.inflight()).toBe(0);
      }),
      { numRuns: 150 },
    );
    // The scenarios really exercise batching, not just one request at a time.
    expect(multiRequestBatches).toBeGreaterThan(0);
  });
});
