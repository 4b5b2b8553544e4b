/**
 * Length lanes: with one length bucket and decode steps cut into runs of at most `decode_run_rows` rows, a
 * run cut by row order pads every row to the longest sequence of the whole step (rows of a continuous
 * batch sit at lengths from a fresh prompt to nearly the context). Instead the rows live in lanes, one KV
 * cache each, lane i holding the i-th shortest run's worth of rows, so each run is padded only to its own
 * longest. On bench_decoder a run costs ~0.76 µs per row and cached position beside ~550 µs per row, and
 * the step's padding was a fifth of it (docs/benchmarks.md, issue 21, 2026-11-28a).
 *
 * Sequences all grow by one token a step, so lanes stay in order once sorted: a row moves only when a
 * newcomer (seated in lane 0), a departure or a change in the number of runs leaves a lane over or under
 * its share; each move copies one row (counted as a bucket move).
 */
import { subRunRanges } from './decode-split.js';

export interface LaneMove {
  readonly from: number;
  /** The row of lane `from` that moves. */
  readonly row: number;
  readonly to: number;
}

/** How many lanes an engine keeps: one per run of a full step (1 = no lanes: rows run in row order). */
export function laneCount(bucketBounds: readonly number[], decodeRunRows: number, maxNumSeqs: number): number {
  if (bucketBounds.length > 0 || decodeRunRows <= 0) return 1;
  return Math.max(1, Math.ceil(maxNumSeqs / decodeRunRows));
}

/** Each lane's share of `rows` rows: the sizes of the step's runs (subRunRanges), lanes beyond them empty. */
export function laneTargets(rows: number, decodeRunRows: number, lanes: number): number[] {
  const targets = new Array<number>(lanes).fill(0);
  const runs = subRunRanges(rows, decodeRunRows);
  // Rows never exceed maxNumSeqs, so runs never outnumber lanes; were they to, the last lane takes the rest.
  runs.forEach(([from, to], i) => (targets[Math.min(i, lanes - 1)] = (targets[Math.min(i, lanes - 1)] as number) + to - from));
  return targets;
}

/**
 * The next row to move so that lanes hold their shares, shortest rows first: a lane holding more than its
 * share (counted from lane 0) gives its longest row to the next; one holding less takes the shortest of the
 * next non-empty lane; lanes at their share but out of order (a longer row before a shorter) swap the pair,
 * one move each. undefined when the lanes are in order and at their shares.
 */
export function nextLaneMove(lanes: readonly (readonly number[])[], decodeRunRows: number): LaneMove | undefined {
  const rows = lanes.reduce((sum, lane) => sum + lane.length, 0);
  const targets = laneTargets(rows, decodeRunRows, lanes.length);
  let held = 0;
  let share = 0;
  for (let i = 0; i < lanes.length - 1; i++) {
    const here = lanes[i] as readonly number[];
    held += here.length;
    share += targets[i] as number;
    if (held > share) return { from: i, row: longest(here), to: i + 1 };
    if (held < share) {
      const j = lanes.findIndex((lane, k) => k > i && lane.length > 0);
      return { from: j, row: shortest(lanes[j] as readonly number[]), to: i };
    }
    const next = lanes[i + 1] as readonly number[];
    if (here.length > 0 && next.length > 0 && (here[longest(here)] as number) > (next[shortest(next)] as number)) return { from: i, row: longest(here), to: i + 1 };
  }
  return undefined;
}

// Ties go to the later row: taking a lane's last row leaves no hole to fill (KvCache.removeRow copies none).
function longest(lengths: readonly number[]): number {
  let best = 0;
  for (let r = 1; r < lengths.length; r++) if ((lengths[r] as number) >= (lengths[best] as number)) best = r;
  return best;
}

function shortest(lengths: readonly number[]): number {
  let best = 0;
  for (let r = 1; r < lengths.length; r++) if ((lengths[r] as number) <= (lengths[best] as number)) best = r;
  return best;
}
