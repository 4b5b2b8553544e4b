/**
 * Reads samples out of Prometheus text exposition (a server's /metrics), for the few figures a bench
 * takes from a server's own counters: `name{label="v",...} value` lines, comments skipped. Label values
 * with escaped quotes are not needed by any metric read here and are not handled.
 */

export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g;

export function parsePromText(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1] as string] = label[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Samples named `name` whose labels include every one of `labels`. */
export function selectSamples(samples: readonly PromSample[], name: string, labels: Readonly<Record<string, string>> = {}): PromSample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** GET `url` and parse it. */
export async function scrapeMetrics(url: string, headers: Readonly<Record<string, string>> = {}): Promise<PromSample[]> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return parsePromText(text);
}
