/**
 * The suite's own flags, taken out of the command line before bench-options.ts parses the rest (so
 * the shared parser, and every scenario's tests of it, stay as they are):
 *
 *   --budget-minutes M   total wall-clock budget of `npm run bench` (the suite); default 15, or 3 with --quick
 *   --soak-minutes M     length of the soak; default: what is left of the budget when the soak starts
 *                        (see suite.ts), or 1 when the soak runs alone (`npm run bench -- soak`)
 *
 * With no scenario name at all, `npm run bench [-- --quick]` runs the suite: `suite` is appended.
 * Pure, so it is unit-tested.
 */
import { parseArgs } from 'node:util';

export interface SuiteExtras {
  /** Total budget of the suite in minutes; undefined = the suite's default. */
  readonly budgetMinutes?: number;
  /** Soak length in minutes; undefined = scaled to the budget (suite) or the soak's default. */
  readonly soakMinutes?: number;
}

export type SuiteArgs = { kind: 'ok'; argv: string[]; extras: SuiteExtras } | { kind: 'error'; message: string };

/** Every flag of bench-options.ts with a value, so their values are not mistaken for scenario names. */
const BENCH_FLAGS = {
  warmup: { type: 'string' },
  duration: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  quick: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const SUITE_FLAGS = { 'budget-minutes': 'budgetMinutes', 'soak-minutes': 'soakMinutes' } as const;

export function extractSuiteArgs(argv: readonly string[], defaultScenario = 'suite'): SuiteArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      tokens: true,
      strict: false,
      options: { ...BENCH_FLAGS, 'budget-minutes': { type: 'string' }, 'soak-minutes': { type: 'string' } },
    });
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const drop = new Set<number>();
  const extras: { budgetMinutes?: number; soakMinutes?: number } = {};
  let positionals = 0;
  for (const token of parsed.tokens ?? []) {
    if (token.kind === 'positional') positionals += 1;
    if (token.kind !== 'option' || !(token.name in SUITE_FLAGS)) continue;
    const key = SUITE_FLAGS[token.name as keyof typeof SUITE_FLAGS];
    const value = Number(token.value);
    if (token.value === undefined || !Number.isFinite(value) || value <= 0) {
      return { kind: 'error', message: `--${token.name} must be a positive number of minutes, got '${token.value ?? ''}'` };
    }
    extras[key] = value;
    drop.add(token.index);
    // `--flag value` spans two arguments; `--flag=value` one.
    if (token.inlineValue === false) drop.add(token.index + 1);
  }
  const rest = argv.filter((_, i) => !drop.has(i));
  const wantsHelp = parsed.values.help === true;
  return { kind: 'ok', argv: positionals === 0 && !wantsHelp ? [defaultScenario, ...rest] : rest, extras };
}
