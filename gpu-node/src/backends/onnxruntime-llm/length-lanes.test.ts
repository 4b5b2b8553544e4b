import { describe, expect, it } from 'vitest';
import { laneCount, laneTargets, nextLaneMove, type LaneMove } from './length-lanes.js';

/** Applies the planned moves to lanes of lengths until the plan is done; the moves made. */
function settle(lanes: number[][], decodeRunRows: number): LaneMove[] {
  const moves: LaneMove[] = [];
  for (let move = nextLaneMove(lanes, decodeRunRows); move !== undefined; move = nextLaneMove(lanes, decodeRunRows)) {
    if (moves.length > 100) throw new Error('the plan does not end');
    const from = lanes[move.from] as number[];
    (lanes[move.to] as number[]).push(from[move.row] as number);
    from.splice(move.row, 1);
    moves.push(move);
  }
  return moves;
}

describe('length lanes', () => {
  it('keeps one lane per run of a full step, only with one bucket and cut runs', () => {
    expect(laneCount([], 16, 32)).toBe(2);
    expect(laneCount([], 16, 33)).toBe(3);
    expect(laneCount([], 0, 32)).toBe(1);
    expect(laneCount([64, 128], 16, 32)).toBe(1);
  });

  it('gives each lane its run\'s share of the rows, the lanes beyond the step\'s runs none', () => {
    expect(laneTargets(31, 16, 2)).toEqual([15, 16]);
    expect(laneTargets(10, 16, 2)).toEqual([10, 0]);
    expect(laneTargets(0, 16, 2)).toEqual([0, 0]);
  });

  it('sorts newcomers into the short lane and the short lane\'s longest into the next', () => {
    // A full step of 32: 16 newcomers seated in lane 0 beside 2 rows already there; lane 1 holds 14 long ones.
    const lanes = [[120, 150, ...Array.from({ length: 16 }, (_, i) => 20 + i)], Array.from({ length: 14 }, (_, i) => 200 + i)];
    const moves = settle(lanes, 16);
    expect(moves).toHaveLength(2);
    expect(lanes[0]).toHaveLength(16);
    expect(Math.max(...(lanes[0] as number[]))).toBeLessThan(Math.min(...(lanes[1] as number[])));
  });

  it('swaps a pair out of order when the lanes are at their shares', () => {
    const lanes = [[10, 300], [50, 60]];
    expect(settle(lanes, 2)).toEqual([{ from: 0, row: 1, to: 1 }, { from: 1, row: 0, to: 0 }]);
    expect(lanes).toEqual([[10, 50], [60, 300]]);
  });

  it('gathers every row into the first lane once a step fits one run, from whichever lanes hold them', () => {
    const lanes = [[], [40], [], [90, 70]];
    settle(lanes, 4);
    expect(lanes.map((lane) => lane.length)).toEqual([3, 0, 0, 0]);
  });

  it('moves nothing when the lanes are in order at their shares (ties stay)', () => {
    expect(nextLaneMove([[5, 9, 9], [9, 9, 30]], 3)).toBeUndefined();
    expect(nextLaneMove([[], []], 16)).toBeUndefined();
  });

  it('takes the later row of equal lengths (no hole to fill behind it)', () => {
    expect(nextLaneMove([[7, 7, 7], []], 2)).toEqual({ from: 0, row: 2, to: 1 });
  });
});
