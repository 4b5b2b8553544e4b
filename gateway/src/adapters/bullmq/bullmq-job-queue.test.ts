import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { jobView } from '../../core/jobs/job-view.js';
import { recordOf } from './bullmq-job-queue.js';
import type { InferJobData } from './bullmq-job-queue.js';
import type { JobResult } from '../../core/ports/index.js';

/** The fields of a BullMQ job that recordOf reads. */
function job(fields: Partial<Job<InferJobData, JobResult>>): Job<InferJobData, JobResult> {
  const spec = { tenantId: 't', tier: { name: 'standard' }, model: 'simple', submittedAt: 1_000 };
  return { id: 'j1', data: { spec, nonce: 'n' }, attemptsStarted: 1, attemptsMade: 0, ...fields } as unknown as Job<InferJobData, JobResult>;
}

describe('recordOf', () => {
  it('shows no start time for a queued job, even when the job read already has processedOn', () => {
    // The state was read as "waiting", then a worker took the job before it was read.
    const view = jobView(recordOf(job({ processedOn: 2_000 }), 'queued'));
    expect(view).toMatchObject({ status: 'queued' });
    expect(view).not.toHaveProperty('started_at');
  });

  it('shows the start time of a running or finished job', () => {
    expect(jobView(recordOf(job({ processedOn: 2_000 }), 'running'))).toMatchObject({ status: 'running', started_at: new Date(2_000).toISOString() });
    expect(jobView(recordOf(job({ processedOn: 2_000, finishedOn: 3_000, failedReason: 'INTERNAL: x' }), 'failed'))).toMatchObject({
      status: 'failed',
      started_at: new Date(2_000).toISOString(),
      finished_at: new Date(3_000).toISOString(),
    });
  });
});
