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

  // The gateway's wiring (entry-node.ts): the access line is made before its answer is queued, and is
  // written right after it, in the same turn, in one write; none is lost at exit.
  it('the gateway logger writes a turn\'s lines after its answers, before the next turn, and at exit', () => {
    const script = `
      import { writeSync } from 'node:fs';
      import { createLogger } from ${JSON.stringify(fileURLToPath(new URL('../../../../shared/src/logging/index.ts', import.meta.url)))};
      import { EndOfTurnWriter } from ${JSON.stringify(fileURLToPath(new URL('./end-of-turn-writer.ts', import.meta.url)))};
      import { processTurnEnd } from ${JSON.stringify(fileURLToPath(new URL('./turn-end.ts', import.meta.url)))};
      const logger = createLogger({ flushWith: (flush) => processTurnEnd.afterAnswer(flush) });
      const answers = new EndOfTurnWriter((i) => writeSync(2, 'answer ' + i + '\\n'));
      for (let i = 0; i < 3; i++) {
        logger.info('request', { i });
        answers.push(i);
      }
      setTimeout(() => {
        writeSync(2, 'next turn\\n');
        logger.info('request', { i: 3 });
        process.exit(0);
      }, 1);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stderr.trim().split('\n').map((line) => (line.startsWith('{') ? `line ${(JSON.parse(line) as { i: number }).i}` : line));
    expect(lines).toEqual(['answer 0', 'answer 1', 'answer 2', 'line 0', 'line 1', 'line 2', 'next turn', 'line 3']);
  });
});
