import { describe, expect, it } from 'vitest';
import { DEFAULT_EXEC_TIME_EMA_ALPHA, ExecTimeEma } from './exec-time-ema.js';

describe('ExecTimeEma', () => {
  it('is null before the first batch and takes the first sample as is', () => {
    const ema = new ExecTimeEma();
    expect(ema.alpha).toBe(DEFAULT_EXEC_TIME_EMA_ALPHA);
    expect(ema.valueMs).toBeNull();
    ema.observe(10);
    expect(ema.valueMs).toBe(10);
    expect(ema.count).toBe(1);
  });

  it('moves by alpha times the difference per sample', () => {
    const ema = new ExecTimeEma(0.5);
    ema.observe(10);
    ema.observe(20);
    expect(ema.valueMs).toBe(15);
    ema.observe(15);
    expect(ema.valueMs).toBe(15);
  });

  it('converges to a new steady level', () => {
    const ema = new ExecTimeEma();
    ema.observe(100);
    for (let i = 0; i < 50; i++) ema.observe(4);
    expect(ema.valueMs).toBeCloseTo(4, 2);
  });

  it('ignores negative and non-finite samples, and resets', () => {
    const ema = new ExecTimeEma();
    ema.observe(8);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) ema.observe(bad);
    expect(ema.valueMs).toBe(8);
    expect(ema.count).toBe(1);
    ema.reset();
    expect(ema.valueMs).toBeNull();
    expect(ema.count).toBe(0);
  });

  it('refuses an alpha outside (0, 1]', () => {
    for (const alpha of [0, -0.1, 1.5, Number.NaN]) expect(() => new ExecTimeEma(alpha)).toThrow(/alpha/);
    expect(new ExecTimeEma(1).alpha).toBe(1);
  });
});
