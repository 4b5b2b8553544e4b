/** Triton's statistics extension, one entry per model version (field names as in the HTTP JSON). */
export interface DurationStat {
  readonly count: number;
  readonly ns: number;
}

export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  readonly last_inference: number;
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: {
    readonly success: DurationStat;
    readonly fail: DurationStat;
    readonly queue: DurationStat;
    readonly compute_input: DurationStat;
    readonly compute_infer: DurationStat;
    readonly compute_output: DurationStat;
    readonly cache_hit: DurationStat;
    readonly cache_miss: DurationStat;
  };
  readonly batch_stats: readonly {
    readonly batch_size: number;
    readonly compute_input: DurationStat;
    readonly compute_infer: DurationStat;
    readonly compute_output: DurationStat;
  }[];
}
