/** Where one instance of a READY version runs, as the metrics exporter labels it. */
export interface InstanceSnapshot {
  readonly model: string;
  readonly version: string;
  readonly instance: string;
  readonly kind: 'cpu' | 'gpu';
  /** GPU ordinal, or -1 on the CPU. */
  readonly device: number;
  readonly provider: string;
}
