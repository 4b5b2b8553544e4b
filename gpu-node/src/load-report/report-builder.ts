/**
 * Builds the node's load reports (shared/src/fleet `LoadReport`), one per tick, for every sink that
 * sends them: the Redis reporter (load-reporter.ts) and the HTTP pusher to an edge
 * (http-report-pusher.ts). Each sink owns one builder, so each receiver sees its own gap-free,
 * strictly increasing `seq` for the node's `(nodeId, startedAt)`.
 */
import type { Logger } from '../../../shared/src/logging/index.js';
import { LOAD_REPORT_VERSION, validateLoadReport } from '../../../shared/src/fleet/index.js';
import type { LoadReport, ModelLoad } from '../../../shared/src/fleet/index.js';
import { modelNameProblem } from '../../../shared/src/names/index.js';

export interface ReportBuilderOptions {
  readonly nodeId: string;
  readonly httpAddress: string | null;
  readonly grpcAddress: string | null;
  /** The LLM routes' HTTP/2 address; absent when that listener is off. */
  readonly llmH2Address?: string;
  /** The process's start time carried by every report. */
  readonly startedAt: number;
  /** The report's staleness limit. */
  readonly ttlMs: number;
  /** The models READY now with their load; called once per report. */
  readonly source: () => readonly ModelLoad[];
  readonly now: () => number;
  /** Where a bad snapshot is reported (once until a report gets through). */
  readonly logger: Logger;
}

export class LoadReportBuilder {
  /** The report's draining flag. */
  draining = false;
  private lastSeq = 0;
  private snapshotErrorLogged = false;
  /** Model names left out of reports for being invalid, each logged once. */
  private readonly droppedNames = new Set<string>();

  constructor(private readonly options: ReportBuilderOptions) {}

  /** The seq of the last report built; 0 before the first. */
  get seq(): number {
    return this.lastSeq;
  }

  /** The next report, validated as a gateway would; undefined (logged once until `delivered()`) when the snapshot is bad. */
  build(): LoadReport | undefined {
    try {
      const models = this.options
        .source()
        .filter((model) => model.versions.length > 0 && this.reportable(model.name))
        .map((model) => ({ ...model, capacity: Math.max(1, model.capacity) }));
      return validateLoadReport({
        version: LOAD_REPORT_VERSION,
        nodeId: this.options.nodeId,
        httpAddress: this.options.httpAddress,
        grpcAddress: this.options.grpcAddress,
        ...(this.options.llmH2Address === undefined ? {} : { llmH2Address: this.options.llmH2Address }),
        startedAt: this.options.startedAt,
        sentAt: this.options.now(),
        seq: ++this.lastSeq,
        ttlMs: this.options.ttlMs,
        models,
        draining: this.draining,
      });
    } catch (error) {
      if (!this.snapshotErrorLogged) {
        this.snapshotErrorLogged = true;
        this.options.logger.error('could not build a load report; skipping it', { error: error instanceof Error ? error.message : String(error) });
      }
      return undefined;
    }
  }

  /**
   * Whether a model name may appear in a report. No invalid name can be loaded (shared/src/names is
   * checked wherever a name enters the node), but one bad name would make the gateway reject the whole
   * report and drop the node, so the report checks again: such a model is left out (logged once), the
   * rest of the node stays routable.
   */
  private reportable(name: string): boolean {
    const problem = modelNameProblem(name);
    if (problem === undefined) return true;
    if (!this.droppedNames.has(name)) {
      this.droppedNames.add(name);
      this.options.logger.error('leaving a model with an invalid name out of load reports', { model: name, problem });
    }
    return false;
  }

  /** A report got through: the next bad snapshot is logged again. */
  delivered(): void {
    this.snapshotErrorLogged = false;
  }
}
