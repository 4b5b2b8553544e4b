/**
 * A prom-client Histogram whose series the hot path observes through a cell found once per series,
 * instead of `histogram.observe(labels, v)`, which hashes and validates the labels on every call (a
 * `labels()` child does too): one per request for the request latency, two more per upstream call.
 *
 * A cell writes into the series' own entry in the histogram (made by the public `zero(labels)`), so
 * what a scrape shows is exactly what `observe` would have made. That entry's shape (`labels`,
 * `bucketValues` by upper bound, `sum`, `count`) is prom-client 15's; histogram-cells.test.ts compares
 * the exposition with plain `observe` so an upgrade that changes it fails there. A `reset()` of the
 * histogram (the registry's resetMetrics) drops every entry: cells notice and find their series again.
 */
import { Histogram, type Registry } from 'prom-client';

export interface HistogramCell {
  observe(value: number): void;
}

interface Entry {
  readonly labels: Readonly<Record<string, string>>;
  readonly bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

export interface HistogramCellsConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly buckets: readonly number[];
  readonly registry: Registry;
}

export class HistogramCells<L extends string> {
  private readonly histogram: Histogram<L>;
  private readonly name: string;
  private readonly bounds: readonly number[];
  private readonly cells = new Map<string, HistogramCell>();
  /** The histogram's entries when the cells were made: another object means it was reset. */
  private entries: Record<string, Entry>;

  constructor(config: HistogramCellsConfig<L>) {
    this.histogram = new Histogram<L>({ name: config.name, help: config.help, labelNames: config.labelNames, buckets: [...config.buckets], registers: [config.registry] });
    this.name = config.name;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.entries = this.hashMap();
  }

  /** The cell of the series with these label values (made on first use; the labels must be bounded). */
  cell(labels: Readonly<Record<L, string>>): HistogramCell {
    if (this.hashMap() !== this.entries) {
      this.cells.clear();
      this.entries = this.hashMap();
    }
    const key = seriesKey(labels);
    let found = this.cells.get(key);
    if (found === undefined) {
      found = this.makeCell(labels);
      this.cells.set(key, found);
    }
    return found;
  }

  private makeCell(labels: Readonly<Record<L, string>>): HistogramCell {
    const before = new Set(Object.values(this.hashMap()));
    this.histogram.zero({ ...labels } as Partial<Record<L, string>>);
    const entry = Object.values(this.hashMap()).find((e) => !before.has(e));
    if (entry === undefined) throw new Error(`histogram ${this.name}: zero() made no entry (prom-client changed?)`);
    const bounds = this.bounds;
    // The entry's buckets are keyed by String(bound): convert once, not per observation.
    const keys = bounds.map(String);
    const buckets = entry.bucketValues as unknown as Record<string, number>;
    const entries = this.entries;
    return {
      observe: (value: number): void => {
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        // After a reset the entry is no longer exposed: go through the new one.
        if (this.hashMap() !== entries) return this.cell(labels).observe(value);
        entry.sum += value;
        entry.count += 1;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            const key = keys[i]!;
            buckets[key] = (buckets[key] ?? 0) + 1;
            break;
          }
        }
      },
    };
  }

  private hashMap(): Record<string, Entry> {
    return (this.histogram as unknown as { hashMap: Record<string, Entry> }).hashMap;
  }
}

/** Label values joined with a separator no label value contains (NUL). */
function seriesKey(labels: Readonly<Record<string, string>>): string {
  let key = '';
  for (const name of Object.keys(labels).sort()) key += `${name}\u0000${labels[name]}\u0000`;
  return key;
}
