/**
 * `tessera-perf`'s command line, modelled on perf_analyzer's flags so its users need not relearn them.
 * Parsing is pure (argv in, options or an error message out) so every rejection is unit-tested.
 *
 * Differences from perf_analyzer, on purpose:
 * - `--shape NAME:d1,d2` is the *full* shape, batch dimension included (the model metadata does not say
 *   whether the first -1 is a batch dimension, and a full shape is unambiguous).
 * - `--api-key [TIER=]KEY` may repeat: requests rotate over the keys, and results are split per tier
 *   label (the gateway's tiers; the label is only what you call it here).
 * - `--warmup-ms` instead of a warm-up request count: the load runs that long before the first window.
 */
import { parseArgs } from 'node:util';
import type { RequestDistribution } from '../lib/load/arrival-gaps.js';

export type Protocol = 'http' | 'grpc';

export type LoadSweep =
  | { readonly mode: 'concurrency'; readonly values: readonly number[] }
  | { readonly mode: 'rate'; readonly values: readonly number[]; readonly distribution: RequestDistribution };

export type InputData = { readonly kind: 'zero' } | { readonly kind: 'random' } | { readonly kind: 'file'; readonly path: string };

export interface ApiKey {
  readonly tier: string;
  readonly key: string;
}

export interface PerfOptions {
  readonly model: string;
  readonly modelVersion?: string;
  readonly host: string;
  readonly port: number;
  readonly protocol: Protocol;
  /** HTTP only: JSON tensors instead of the binary extension. */
  readonly json: boolean;
  readonly sweep: LoadSweep;
  readonly inputData: InputData;
  readonly shapes: Readonly<Record<string, readonly number[]>>;
  readonly warmupMs: number;
  readonly measurementIntervalMs: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  /** Open loop: the cap on outstanding requests. */
  readonly maxOutstanding: number;
  readonly seed: number;
  readonly apiKeys: readonly ApiKey[];
  readonly apiKeyHeader: 'authorization' | 'x-api-key';
  /** Where the statistics API is read; undefined: -u itself (HTTP), or its gRPC statistics. */
  readonly statsUrl?: string;
  /** Goodput counts successes within this latency; undefined counts every success. */
  readonly latencySloMs?: number;
  readonly csvPath?: string;
  readonly jsonPath?: string;
  readonly plotDir?: string;
}

export type PerfArgs = { kind: 'options'; options: PerfOptions } | { kind: 'error'; message: string } | { kind: 'help' };

export const PERF_DEFAULTS = {
  measurementIntervalMs: 5000,
  stabilityPercentage: 10,
  maxTrials: 10,
  warmupMs: 1000,
  maxOutstanding: 1024,
  seed: 1,
} as const;

const MAX_SWEEP_POINTS = 1000;

export const PERF_USAGE = `Usage: tessera-perf -m MODEL [options]

Target
  -m MODEL                        model name (required); -x VERSION for a version
  -u HOST:PORT                    server or gateway (default localhost:8000 for http, localhost:8001 for grpc)
  -i http|grpc                    protocol (default http)
  --binary | --json               HTTP tensors as the binary extension (default) or JSON
  --api-key [TIER=]KEY            API key for the gateway; repeat to rotate keys, results split per TIER
  --api-key-header authorization|x-api-key   how the key is sent (default authorization: Bearer KEY)
  --stats-url http://NODE:PORT    statistics API for the server breakdown (default: -u itself)

Load
  --concurrency-range S[:E[:STEP]]      closed loop: that many requests in flight (default 1)
  --request-rate-range S[:E[:STEP]]     open loop: requests per second, at intended send times
  --request-distribution constant|poisson   open-loop gaps (default constant)
  --max-outstanding N             open-loop cap on requests in flight; sends over it are dropped (default 1024)
  --seed N                        Poisson generator seed (default 1)
  --input-data zero|random|FILE.json    tensor contents (default random); FILE in perf_analyzer's format
  --shape NAME:D1,D2,...          full shape of an input with -1 dimensions (default: each -1 becomes 1)

Measurement
  --warmup-ms MS                  load before the first window (default 1000)
  --measurement-interval MS       window length (default 5000)
  --stability-percentage P        the last 3 windows agree within P% (default 10)
  --max-trials N                  windows per point before giving up on stability (default 10)
  --latency-slo MS                goodput counts successes within MS (default: all successes)

Output
  -f FILE.csv                     perf_analyzer-format CSV
  --json-out FILE.json            every figure, per window too
  --plot-dir DIR                  SVG (and PNG when rsvg-convert or convert exists) plots
`;

/** `start[:end[:step]]` → the values, inclusive of end; integers when `integer`. */
export function parseRange(text: string, flag: string, integer: boolean): number[] | string {
  const parts = text.split(':');
  const nums = parts.map((p) => Number(p));
  const bad = `${flag} must be start[:end[:step]] with positive ${integer ? 'integers' : 'numbers'}, got '${text}'`;
  if (parts.length > 3 || parts.some((p) => p.trim() === '') || nums.some((n) => !Number.isFinite(n) || n <= 0)) return bad;
  if (integer && nums.some((n) => !Number.isSafeInteger(n))) return bad;
  const [start, end = start, step = 1] = nums as [number, number?, number?];
  if (end < start) return `${flag}: end ${end} is below start ${start}`;
  const count = Math.floor((end - start) / step + 1e-9) + 1;
  if (count > MAX_SWEEP_POINTS) return `${flag}: ${count} points is more than ${MAX_SWEEP_POINTS}`;
  return Array.from({ length: count }, (_, i) => Number((start + i * step).toPrecision(12)));
}

function parseHostPort(text: string, protocol: Protocol): { host: string; port: number } | string {
  let rest = text;
  if (/^https:\/\//i.test(rest)) return `-u: TLS is not supported ('${text}')`;
  rest = rest.replace(/^(http|grpc):\/\//i, '').replace(/\/+$/, '');
  const match = /^(\[[^\]]+\]|[^:/]+)(?::(\d+))?$/.exec(rest);
  if (match === null) return `-u must be HOST:PORT, got '${text}'`;
  const host = (match[1] as string).replace(/^\[|\]$/g, '');
  const port = match[2] === undefined ? (protocol === 'grpc' ? 8001 : 8000) : Number(match[2]);
  if (!(port > 0 && port < 65536)) return `-u: port out of range in '${text}'`;
  return { host, port };
}

function parseShape(text: string): [string, number[]] | string {
  const at = text.lastIndexOf(':');
  const bad = `--shape must be NAME:D1,D2,... with positive integer dimensions, got '${text}'`;
  if (at <= 0) return bad;
  const dims = text.slice(at + 1).split(',').map((d) => Number(d));
  if (dims.length === 0 || dims.some((d) => !Number.isSafeInteger(d) || d < 1)) return bad;
  return [text.slice(0, at), dims];
}

function parseApiKey(text: string, index: number): ApiKey | string {
  const eq = text.indexOf('=');
  // A key of our format (tsk_…base64url) has no '='; TIER=KEY labels it.
  const [tier, key] = eq > 0 ? [text.slice(0, eq), text.slice(eq + 1)] : [index === 0 ? 'default' : `key${index + 1}`, text];
  if (key === '' || /\s/.test(key)) return `--api-key: empty or blank key in '${tier}=…'`;
  return { tier, key };
}

function numberFlag(text: string | undefined, flag: string, fallback: number, check: (n: number) => boolean, what: string): number | string {
  if (text === undefined) return fallback;
  const n = Number(text);
  return text.trim() !== '' && check(n) ? n : `${flag} must be ${what}, got '${text}'`;
}

const positiveInt = (n: number): boolean => Number.isSafeInteger(n) && n >= 1;
const positive = (n: number): boolean => Number.isFinite(n) && n > 0;

export function parsePerfArgs(argv: readonly string[]): PerfArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        'model-name': { type: 'string', short: 'm' },
        'model-version': { type: 'string', short: 'x' },
        url: { type: 'string', short: 'u' },
        protocol: { type: 'string', short: 'i' },
        binary: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        'concurrency-range': { type: 'string' },
        'request-rate-range': { type: 'string' },
        'request-distribution': { type: 'string' },
        'max-outstanding': { type: 'string' },
        seed: { type: 'string' },
        'input-data': { type: 'string' },
        shape: { type: 'string', multiple: true },
        'warmup-ms': { type: 'string' },
        'measurement-interval': { type: 'string', short: 'p' },
        'stability-percentage': { type: 'string', short: 's' },
        'max-trials': { type: 'string', short: 'r' },
        'latency-slo': { type: 'string' },
        'api-key': { type: 'string', multiple: true },
        'api-key-header': { type: 'string' },
        'stats-url': { type: 'string' },
        'latency-report-file': { type: 'string', short: 'f' },
        'json-out': { type: 'string' },
        'plot-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const v = parsed.values;
  if (v.help) return { kind: 'help' };
  const fail = (message: string): PerfArgs => ({ kind: 'error', message });

  const model = v['model-name'];
  if (model === undefined || model === '') return fail('-m MODEL is required');
  const protocol = v.protocol ?? 'http';
  if (protocol !== 'http' && protocol !== 'grpc') return fail(`-i must be http or grpc, got '${protocol}'`);
  if (v.binary && v.json) return fail('--binary and --json exclude each other');
  if (v.json && protocol === 'grpc') return fail('--json applies to HTTP only (gRPC tensors are always raw)');
  const target = parseHostPort(v.url ?? 'localhost', protocol);
  if (typeof target === 'string') return fail(target);

  if (v['concurrency-range'] !== undefined && v['request-rate-range'] !== undefined) {
    return fail('--concurrency-range and --request-rate-range exclude each other');
  }
  const distribution = v['request-distribution'] ?? 'constant';
  if (distribution !== 'constant' && distribution !== 'poisson') {
    return fail(`--request-distribution must be constant or poisson, got '${distribution}'`);
  }
  if (v['request-distribution'] !== undefined && v['request-rate-range'] === undefined) {
    return fail('--request-distribution needs --request-rate-range');
  }
  let sweep: LoadSweep;
  if (v['request-rate-range'] !== undefined) {
    const values = parseRange(v['request-rate-range'], '--request-rate-range', false);
    if (typeof values === 'string') return fail(values);
    sweep = { mode: 'rate', values, distribution };
  } else {
    const values = parseRange(v['concurrency-range'] ?? '1', '--concurrency-range', true);
    if (typeof values === 'string') return fail(values);
    sweep = { mode: 'concurrency', values };
  }

  const dataText = v['input-data'] ?? 'random';
  const inputData: InputData = dataText === 'zero' || dataText === 'random' ? { kind: dataText } : { kind: 'file', path: dataText };
  if (inputData.kind === 'file' && !dataText.endsWith('.json')) {
    return fail(`--input-data must be zero, random or a .json file, got '${dataText}'`);
  }
  const shapes: Record<string, number[]> = {};
  for (const text of v.shape ?? []) {
    const shape = parseShape(text);
    if (typeof shape === 'string') return fail(shape);
    shapes[shape[0]] = shape[1];
  }

  const numbers = {
    warmupMs: numberFlag(v['warmup-ms'], '--warmup-ms', PERF_DEFAULTS.warmupMs, (n) => Number.isFinite(n) && n >= 0, 'a number of ms >= 0'),
    measurementIntervalMs: numberFlag(v['measurement-interval'], '--measurement-interval', PERF_DEFAULTS.measurementIntervalMs, positive, 'a positive number of ms'),
    stabilityPercentage: numberFlag(v['stability-percentage'], '--stability-percentage', PERF_DEFAULTS.stabilityPercentage, positive, 'a positive percentage'),
    maxTrials: numberFlag(v['max-trials'], '--max-trials', PERF_DEFAULTS.maxTrials, (n) => positiveInt(n) && n >= 3, 'an integer >= 3 (stability needs three windows)'),
    maxOutstanding: numberFlag(v['max-outstanding'], '--max-outstanding', PERF_DEFAULTS.maxOutstanding, positiveInt, 'a positive integer'),
    seed: numberFlag(v.seed, '--seed', PERF_DEFAULTS.seed, (n) => Number.isSafeInteger(n) && n >= 0, 'an integer >= 0'),
  };
  for (const value of Object.values(numbers)) if (typeof value === 'string') return fail(value);
  const slo = v['latency-slo'] === undefined ? undefined : numberFlag(v['latency-slo'], '--latency-slo', 0, positive, 'a positive number of ms');
  if (typeof slo === 'string') return fail(slo);

  const apiKeys: ApiKey[] = [];
  for (const [i, text] of (v['api-key'] ?? []).entries()) {
    const key = parseApiKey(text, i);
    if (typeof key === 'string') return fail(key);
    apiKeys.push(key);
  }
  if (new Set(apiKeys.map((k) => k.tier)).size !== apiKeys.length) return fail('--api-key: each key needs its own TIER= label');
  const header = v['api-key-header'] ?? 'authorization';
  if (header !== 'authorization' && header !== 'x-api-key') return fail(`--api-key-header must be authorization or x-api-key, got '${header}'`);
  const statsUrl = v['stats-url']?.replace(/\/+$/, '');
  if (statsUrl !== undefined && !/^https?:\/\/[^/]+$/.test(statsUrl)) return fail(`--stats-url must be http://HOST:PORT, got '${v['stats-url']}'`);

  return {
    kind: 'options',
    options: {
      model,
      ...(v['model-version'] !== undefined ? { modelVersion: v['model-version'] } : {}),
      host: target.host,
      port: target.port,
      protocol,
      json: v.json === true,
      sweep,
      inputData,
      shapes,
      ...(numbers as { [K in keyof typeof numbers]: number }),
      apiKeys,
      apiKeyHeader: header,
      ...(statsUrl !== undefined ? { statsUrl } : {}),
      ...(slo !== undefined ? { latencySloMs: slo } : {}),
      ...(v['latency-report-file'] !== undefined ? { csvPath: v['latency-report-file'] } : {}),
      ...(v['json-out'] !== undefined ? { jsonPath: v['json-out'] } : {}),
      ...(v['plot-dir'] !== undefined ? { plotDir: v['plot-dir'] } : {}),
    },
  };
}
