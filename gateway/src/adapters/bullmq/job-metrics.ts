/**
 * Job metrics (prom-client), in the registry of the process that sees the events: the gateway
 * (submissions, cancellations) and whichever process runs workers (starts, outcomes, times).
 *
 * - `<p>jobs_total{state, tier, model}`      jobs entering a state: queued, succeeded, failed, cancelled
 * - `<p>jobs_spilled_total{tier, model}`     infer requests refused at admission that became jobs
 * - `<p>jobs{state}`                         jobs in the queue now, per BullMQ state (read at scrape)
 * - `<p>job_wait_seconds{tier, model}`       submission → a worker starts it
 * - `<p>job_run_seconds{tier, model, state}` one run, until succeeded or failed
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { JobObserver } from '../../core/ports/index.js';

const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export interface JobMetricsOptions {
  readonly registry: Registry;
  /** Default "tessera_gateway_". */
  readonly prefix?: string;
  /** Jobs per BullMQ state now; omitted: no `jobs` gauge. */
  readonly counts?: () => Promise<Record<string, number>>;
}

export function createJobMetrics(options: JobMetricsOptions): JobObserver {
  const p = options.prefix ?? 'tessera_gateway_';
  const registers = [options.registry];
  const total = new Counter({ name: `${p}jobs_total`, help: 'Async jobs entering a state, by tier and model', labelNames: ['state', 'tier', 'model'], registers });
  const spilled = new Counter({ name: `${p}jobs_spilled_total`, help: 'Infer requests refused at admission that became async jobs', labelNames: ['tier', 'model'], registers });
  const wait = new Histogram({ name: `${p}job_wait_seconds`, help: 'Async job time from submission to a worker start', labelNames: ['tier', 'model'], buckets: JOB_BUCKETS, registers });
  const run = new Histogram({ name: `${p}job_run_seconds`, help: 'Async job run time', labelNames: ['tier', 'model', 'state'], buckets: JOB_BUCKETS, registers });
  const counts = options.counts;
  if (counts !== undefined) {
    new Gauge({
      name: `${p}jobs`,
      help: 'Async jobs in the queue now, by state',
      labelNames: ['state'],
      registers,
      async collect() {
        try {
          for (const [state, n] of Object.entries(await counts())) this.set({ state }, n);
        } catch {
          // Redis away: keep the last values rather than fail the whole scrape
        }
      },
    });
  }
  return {
    submitted(tier, model, wasSpilled) {
      total.inc({ state: 'queued', tier, model });
      if (wasSpilled) spilled.inc({ tier, model });
    },
    started(tier, model, waitSeconds) {
      wait.observe({ tier, model }, waitSeconds);
    },
    finished(state, tier, model, runSeconds) {
      total.inc({ state, tier, model });
      if (runSeconds !== undefined) run.observe({ tier, model, state }, runSeconds);
    },
  };
}
