/**
 * The bench's command line, shared by every scenario: `bench.ts <scenario> [--warmup S] [--duration S]
 * [--concurrency 1,8,...] [--quick] [--out DIR]`. Parsing is pure so it is unit-tested.
 */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  readonly scenario: string;
  /** Seconds of warm-up before each measurement window. */
  readonly warmupS: number;
  /** Seconds of each measurement window. */
  readonly durationS: number;
  /** Closed-loop concurrencies; undefined leaves the scenario's own list. */
  readonly concurrencies?: readonly number[];
  /** Smoke run: short windows, fewer points, no tuning. */
  readonly quick: boolean;
  /** Results root; undefined is loadtests/results. */
  readonly outRoot?: string;
  /** `gateway --per-core`: the process under test alone on core 0, the rest on core 1. */
  readonly perCore?: boolean;
}

export type BenchArgs = { kind: 'options'; options: BenchOptions } | { kind: 'error'; message: string } | { kind: 'help' };

export const DEFAULTS = { warmupS: 2, durationS: 8 } as const;
export const QUICK = { warmupS: 0.5, durationS: 1.5 } as const;

function positive(text: string | undefined, flag: string): number | string {
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) && value > 0 ? value : `${flag} must be a positive number, got '${text}'`;
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        warmup: { type: 'string' },
        duration: { type: 'string' },
        concurrency: { type: 'string' },
        quick: { type: 'boolean', default: false },
        out: { type: 'string' },
        'per-core': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (positionals.length !== 1) return { kind: 'error', message: 'expected exactly one scenario name' };
  const quick = values.quick === true;
  const base = quick ? QUICK : DEFAULTS;
  const warmupS = values.warmup === undefined ? base.warmupS : positive(values.warmup, '--warmup');
  const durationS = values.duration === undefined ? base.durationS : positive(values.duration, '--duration');
  if (typeof warmupS === 'string') return { kind: 'error', message: warmupS };
  if (typeof durationS === 'string') return { kind: 'error', message: durationS };
  let concurrencies: number[] | undefined;
  if (values.concurrency !== undefined) {
    concurrencies = values.concurrency.split(',').map((t) => Number(t.trim()));
    if (concurrencies.some((c) => !Number.isSafeInteger(c) || c < 1)) {
      return { kind: 'error', message: `--concurrency must be positive integers, e.g. 1,8,64; got '${values.concurrency}'` };
    }
  }
  return {
    kind: 'options',
    options: {
      scenario: positionals[0] as string,
      warmupS,
      durationS,
      quick,
      ...(concurrencies !== undefined ? { concurrencies } : {}),
      ...(values.out !== undefined ? { outRoot: values.out } : {}),
      ...(values['per-core'] === true ? { perCore: true } : {}),
    },
  };
}
