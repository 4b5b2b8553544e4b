import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { silentLogger } from './logger-interface.js';
import { createLogger } from './logger.js';

function capture(verbosity = 0) {
  const lines: string[] = [];
  const logger = createLogger({ verbosity, fields: { component: 'test' }, write: (line) => lines.push(line) });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger (pino)', () => {
  it('writes one JSON line per call with level, ISO time, base and call fields, and msg', () => {
    const { logger, lines, parsed } = capture();
    logger.info('hello', { n: 1 });
    logger.warn('careful');
    logger.error('bad', { code: 'INTERNAL' });
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(parsed()).toEqual([
      { level: 'info', time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), component: 'test', n: 1, msg: 'hello' },
      { level: 'warn', time: expect.any(String), component: 'test', msg: 'careful' },
      { level: 'error', time: expect.any(String), component: 'test', code: 'INTERNAL', msg: 'bad' },
    ]);
  });

  it('prints verbose lines up to the configured verbosity only', () => {
    const { logger, parsed } = capture(1);
    logger.verbose(1, 'shown');
    logger.verbose(2, 'hidden');
    logger.child({ requestId: 'r' }).verbose(1, 'child shown');
    logger.child({ requestId: 'r' }).verbose(2, 'child hidden');
    expect(parsed().map((l) => [l.level, l.msg])).toEqual([
      ['verbose', 'shown'],
      ['verbose', 'child shown'],
    ]);
  });

  it('children carry their fields on every line', () => {
    const { logger, parsed } = capture();
    logger.child({ traceId: 't1', requestId: 'r1' }).child({ tenant: 'acme' }).info('x', { model: 'simple' });
    expect(parsed()[0]).toMatchObject({ component: 'test', traceId: 't1', requestId: 'r1', tenant: 'acme', model: 'simple', msg: 'x' });
  });

  it("writes each key once: a child's or a call's field replaces the parent's of the same name", () => {
    const { logger, lines } = capture();
    const part = logger.child({ component: 'node-directory' });
    part.info('flat');
    part.info('nested', { detail: { a: 1 } });
    part.child({ requestId: 'r' }).warn('grandchild');
    part.info('call field', { component: 'override', n: 1 });
    logger.child({ nested: { x: 1 } }).child({ component: 'deep' }).info('pino path');
    const counts = lines.map((l) => l.match(/"component":/g)?.length);
    expect(counts).toEqual([1, 1, 1, 1, 1]);
    expect(lines.map((l) => (JSON.parse(l) as { component: string }).component)).toEqual([
      'node-directory',
      'node-directory',
      'node-directory',
      'override',
      'deep',
    ]);
    expect(JSON.parse(lines[1] ?? '')).toMatchObject({ detail: { a: 1 }, msg: 'nested' });
    expect(JSON.parse(lines[4] ?? '')).toMatchObject({ nested: { x: 1 }, msg: 'pino path' });
  });

  it('never prints key fields, at the top level or one level down, in call or child fields', () => {
    const { logger, lines, parsed } = capture();
    const secret = 'tsk_SHOULD_NEVER_APPEAR_1234';
    logger.info('a', { authorization: `Bearer ${secret}`, 'x-api-key': secret, apiKey: secret, key: secret, ok: 'visible' });
    logger.info('b', { headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret, accept: 'json' }, request: { apiKey: secret } });
    logger.child({ apiKey: secret }).warn('c');
    expect(lines.join('')).not.toContain(secret);
    const [a, b, c] = parsed();
    expect(a).toMatchObject({ authorization: '[REDACTED]', 'x-api-key': '[REDACTED]', apiKey: '[REDACTED]', key: '[REDACTED]', ok: 'visible' });
    expect(b).toMatchObject({ headers: { authorization: '[REDACTED]', 'x-api-key': '[REDACTED]', accept: 'json' }, request: { apiKey: '[REDACTED]' } });
    expect(c).toMatchObject({ apiKey: '[REDACTED]' });
  });

  it('leaves the caller objects untouched', () => {
    const { logger } = capture();
    const fields = { headers: { authorization: 'Bearer x' } };
    logger.info('a', fields);
    expect(fields.headers.authorization).toBe('Bearer x');
  });

  it('silentLogger drops everything, children included', () => {
    expect(() => silentLogger.child({ a: 1 }).info('nothing')).not.toThrow();
  });

});

describe('flat lines (written without pino)', () => {
  /** pino configured as createLogger configures it, writing into `lines`. */
  function plainPino(lines: string[]) {
    return pino<'verbose'>(
      {
        level: 'verbose',
        customLevels: { verbose: 25 },
        base: null,
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      { write: (line: string) => void lines.push(line) },
    );
  }
  const withoutTime = (line: string): [string[], Record<string, unknown>] => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    delete parsed.time;
    return [Object.keys(parsed), parsed];
  };

  it('writes the same JSON, in the same key order, as pino for flat fields', () => {
    const ours: string[] = [];
    const theirs: string[] = [];
    const child = { requestId: 'r-1', tenant: 'acme "quoted" \\ back', n: 3 };
    const fields = { method: 'POST', path: '/v2/models/simple/infer', status: 200, durationMs: 1.234, ok: true, none: null, skipped: undefined, inf: Infinity, text: 'line\nbreak é 😀' };
    createLogger({ fields: { component: 'gateway' }, write: (l) => ours.push(l) }).child(child).info('request', fields);
    plainPino(theirs).child({ component: 'gateway' }).child(child).info(fields, 'request');
    expect(ours).toHaveLength(1);
    expect(ours[0]!.endsWith('}\n')).toBe(true);
    expect(withoutTime(ours[0]!)).toEqual(withoutTime(theirs[0]!));
    expect(JSON.parse(ours[0]!).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('leaves nested fields and secrets to pino, and keeps the lines in call order', () => {
    const lines: string[] = [];
    const logger = createLogger({ write: (l) => lines.push(l) });
    logger.info('one', { a: 1 });
    logger.info('two', { nested: { apiKey: 'tsk_secret' } });
    logger.info('three', { key: 'tsk_secret' });
    logger.child({ apiKey: 'tsk_secret' }).info('four', { a: 2 });
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['one', 'two', 'three', 'four']);
    expect(lines.join('')).not.toContain('tsk_secret');
  });
});
