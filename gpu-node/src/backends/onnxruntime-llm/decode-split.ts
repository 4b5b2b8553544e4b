/**
 * A decode step cut into runs of fewer rows (config parameter `decode_run_rows`), so that a request arriving
 * during the step waits for one smaller run, not the whole step, before its prefill starts (the engine thread
 * runs a model synchronously: nothing is read while a run is under way). Each run reads every weight once, so
 * on a weight-bound model more runs cost throughput; docs/llm-decoder.md gives the measured trade.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

/**
 * Row ranges [from, to) covering `rows` rows in runs of at most `maxRows` (balanced: 33 rows at 16 give
 * 11 + 11 + 11, not 16 + 16 + 1); maxRows 0 = one run.
 */
export function subRunRanges(rows: number, maxRows: number): [number, number][] {
  const runs = maxRows <= 0 ? 1 : Math.ceil(rows / maxRows);
  const ranges: [number, number][] = [];
  for (let i = 0; i < runs; i++) ranges.push([Math.floor((i * rows) / runs), Math.floor(((i + 1) * rows) / runs)]);
  return ranges.filter(([from, to]) => to > from);
}

export function parseDecodeRunRows(model: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw TesseraError.invalidArg(`model '${model}': parameter 'decode_run_rows' must be an integer >= 0 (0 = a whole bucket per run), got '${text}'`);
  }
  return value;
}
