/**
 * A prom-client Counter fed from plain running totals ("cells"), one per series, that the hot path
 * adds to directly; prom-client hears of them only when it is scraped.
 *
 * Why: `counter.inc(labels, n)` builds a label hash and validates the labels on every call (a
 * `labels()` child does too), and a cache hit made five such calls. A cell is looked up once per
 * series and then costs one addition. What a scrape shows is the same: at each collect, each cell
 * hands prom-client what it gained since the last one, so the exposed series, values and label sets
 * are those direct increments would have made.
 */
import { Counter, type Registry } from 'prom-client';

/** The running total of one series. Add to `value`; never subtract (it is a counter). */
export interface CounterCell {
  value: number;
}

interface Series<L extends string> {
  readonly labels: Readonly<Record<L, string>>;
  readonly cell: CounterCell;
  reported: number;
}

export interface CounterCellsConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly registry: Registry;
}

export class CounterCells<L extends string> {
  private readonly series = new Map<string, Series<L>>();

  constructor(config: CounterCellsConfig<L>) {
    const series = this.series;
    new Counter<L>({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      registers: [config.registry],
      collect() {
        for (const s of series.values()) {
          // Also for a gain of 0: a series appears once it has been touched, as with inc().
          this.inc(s.labels, s.cell.value - s.reported);
          s.reported = s.cell.value;
        }
      },
    });
  }

  /** The cell of the series with these label values (made on first use; the labels must be bounded). */
  cell(labels: Readonly<Record<L, string>>): CounterCell {
    const key = seriesKey(labels);
    let found = this.series.get(key);
    if (found === undefined) {
      found = { labels: { ...labels }, cell: { value: 0 }, reported: 0 };
      this.series.set(key, found);
    }
    return found.cell;
  }
}

/** Label values joined with a separator no label value contains (NUL). */
function seriesKey(labels: Readonly<Record<string, string>>): string {
  let key = '';
  for (const name of Object.keys(labels).sort()) key += `${name}\u0000${labels[name]}\u0000`;
  return key;
}
