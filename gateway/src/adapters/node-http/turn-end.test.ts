import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TurnEnd } from './turn-end.js';

describe('TurnEnd', () => {
  it('runs a turn\'s answers before what waits for them, whatever the order they came in, once per turn', () => {
    const ran: string[] = [];
    const turns: (() => void)[] = [];
    const turn = new TurnEnd((run) => turns.push(run));
    turn.afterAnswer(() => ran.push('log 1'));
    turn.answer(() => ran.push('answer 1'));
    turn.afterAnswer(() => ran.push('log 2'));
    turn.answer(() => ran.push('answer 2'));
    expect(turns).toHaveLength(1);
    expect(ran).toEqual([]);
    turns.shift()!();
    expect(ran).toEqual(['answer 1', 'answer 2', 'log 1', 'log 2']);
    turn.answer(() => ran.push('next turn'));
    expect(turns).toHaveLength(1);
  });

  it('still runs what waits when an answer throws', () => {
    const ran: string[] = [];
    const turns: (() => void)[] = [];
    const turn = new TurnEnd((run) => turns.push(run));
    turn.answer(() => {
      throw new Error('socket gone');
    });
    turn.afterAnswer(() => ran.push('log'));
    expect(() => turns.shift()!()).toThrow('socket gone');
    expect(ran).toEqual(['log']);
  });

  // The gateway's wiring (entry-node.ts): an access line is made before its answer is queued. A batch
  // that a request's own line makes due (8 KiB) is written right after that turn's answers, never ahead
  // of them; a smaller one waits (at most batchMs) and none is lost at exit.
  it('the gateway logger writes a due batch after the answers of its turn, and what waits at exit', () => {
    const script = `
      import { writeSync } from 'node:fs';
      import { createLogger } from ${JSON.stringify(fileURLToPath(new URL('../../../../shared/src/logging/index.ts', import.meta.url)))};
      import { EndOfTurnWriter } from ${JSON.stringify(fileURLToPath(new URL('./end-of-turn-writer.ts', import.meta.url)))};
      import { processTurnEnd } from ${JSON.stringify(fileURLToPath(new URL('./turn-end.ts', import.meta.url)))};
      const logger = createLogger({ batchMs: 60_000, flushWith: (flush) => processTurnEnd.afterAnswer(flush) });
      const answers = new EndOfTurnWriter((i) => writeSync(2, 'answer ' + i + '\\n'));
      const pad = 'x'.repeat(300);
      // 40 lines of ~400 characters: the batch is due (8 KiB) within this turn.
      for (let i = 0; i < 40; i++) {
        logger.info('request', { i, pad });
        answers.push(i);
      }
      setTimeout(() => {
        writeSync(2, 'next turn\\n');
        logger.info('request', { i: 40 });
        process.exit(0);
      }, 1);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stderr.trim().split('\n').map((line) => (line.startsWith('{') ? `line ${(JSON.parse(line) as { i: number }).i}` : line));
    const range = (from: number, to: number, what: string): string[] => Array.from({ length: to - from }, (_, i) => `${what} ${from + i}`);
    expect(lines).toEqual([...range(0, 40, 'answer'), ...range(0, 40, 'line'), 'next turn', 'line 40']);
  });
});
