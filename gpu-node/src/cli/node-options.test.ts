import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { NODE_USAGE, parseNodeArgs } from './node-options.js';

describe('tessera-node command line', () => {
  it('applies tritonserver defaults', () => {
    const result = parseNodeArgs(['--model-repository', '/models']);
    expect(result.kind).toBe('options');
    if (result.kind !== 'options') return;
    expect(result.options).toMatchObject({
      modelRepository: '/models',
      modelControlMode: 'none',
      httpPort: 8000,
      grpcPort: 8001,
      metricsPort: 8002,
      strictModelConfig: false,
      exitTimeoutSecs: 30,
      repositoryPollSecs: 15,
      httpMaxInputSize: 67_108_864,
      grpcMaxConcurrentStreams: 1000,
      id: 'triton',
      rateLimit: 'off',
      modelLoadThreadCount: 4,
      backendThreadPoolSize: availableParallelism(),
      backendThreadIdleMs: 2000,
      heapGrowingPercent: 300,
      httpRawReader: true,
    });
  });

  it('reads infer requests with the raw HTTP/1.1 reader unless --http-raw-reader=false', () => {
    const off = parseNodeArgs(['--model-repository=/m', '--http-raw-reader=false']);
    expect(off.kind === 'options' && off.options.httpRawReader).toBe(false);
    const bad = parseNodeArgs(['--model-repository=/m', '--http-raw-reader=sometimes']);
    expect(bad.kind === 'error' && bad.problems).toEqual(["--http-raw-reader must be true or false, got 'sometimes'"]);
  });

  it('serves gRPC on the raw HTTP/2 front by default, on grpc-js alone with --grpc-raw-h2=false', () => {
    const plain = parseNodeArgs(['--model-repository=/m']);
    expect(plain.kind === 'options' && plain.options.grpcRawH2).toBe(true);
    const off = parseNodeArgs(['--model-repository=/m', '--grpc-raw-h2=false']);
    expect(off.kind === 'options' && off.options.grpcRawH2).toBe(false);
    const bad = parseNodeArgs(['--model-repository=/m', '--grpc-raw-h2=yes']);
    expect(bad.kind === 'error' && bad.problems).toEqual(["--grpc-raw-h2 must be true or false, got 'yes'"]);
  });

  it('takes the heap growing percent, 0 for V8 its own, refusing what is not a percent in range', () => {
    const good = parseNodeArgs(['--model-repository=/m', '--heap-growing-percent=0']);
    expect(good.kind === 'options' && good.options.heapGrowingPercent).toBe(0);
    const bad = parseNodeArgs(['--model-repository=/m', '--heap-growing-percent=-5']);
    expect(bad.kind === 'error' && bad.problems).toEqual(["--heap-growing-percent must be an integer in [0, 10000], got '-5'"]);
  });

  it('sizes model loading and the backend thread pool, refusing counts below 1', () => {
    const good = parseNodeArgs(['--model-repository=/m', '--model-load-thread-count=8', '--backend-thread-pool-size', '3', '--backend-thread-idle-ms=0']);
    expect(good.kind === 'options' && [good.options.modelLoadThreadCount, good.options.backendThreadPoolSize, good.options.backendThreadIdleMs]).toEqual([8, 3, 0]);
    const bad = parseNodeArgs(['--model-repository=/m', '--model-load-thread-count=0', '--backend-thread-pool-size=x', '--backend-thread-idle-ms=-1']);
    expect(bad.kind === 'error' && bad.problems).toEqual([
      "--model-load-thread-count must be an integer in [1, 1024], got '0'",
      "--backend-thread-pool-size must be an integer in [1, 1024], got 'x'",
      "--backend-thread-idle-ms must be an integer in [0, 600000], got '-1'",
    ]);
  });

  it('accepts tritonserver spellings, including --flag=value and --model-store', () => {
    const result = parseNodeArgs([
      '--model-store=/m',
      '--model-control-mode=explicit',
      '--load-model',
      'simple',
      '--load-model=mlp_small',
      '--http-port=0',
      '--strict-model-config=true',
      '--log-verbose=1',
    ]);
    expect(result.kind).toBe('options');
    if (result.kind !== 'options') return;
    expect(result.options.loadModels).toEqual(['simple', 'mlp_small']);
    expect(result.options.httpPort).toBe(0);
    expect(result.options.strictModelConfig).toBe(true);
    expect(result.options.logVerbose).toBe(1);
  });

  it('reports every problem at once', () => {
    const result = parseNodeArgs(['--http-port', '70000', '--model-control-mode', 'sometimes', '--strict-model-config', 'maybe']);
    expect(result.kind).toBe('error');
    if (result.kind !== 'error') return;
    expect(result.problems).toEqual(
      expect.arrayContaining([
        '--model-repository is required',
        "--http-port must be an integer in [0, 65535], got '70000'",
        "--model-control-mode must be one of none, poll, explicit, got 'sometimes'",
        "--strict-model-config must be true or false, got 'maybe'",
      ]),
    );
  });

  it('rejects unknown flags and --load-model outside explicit mode', () => {
    const unknown = parseNodeArgs(['--model-repository', '/m', '--no-such-flag']);
    expect(unknown.kind).toBe('error');
    const misplaced = parseNodeArgs(['--model-repository', '/m', '--load-model', 'a']);
    expect(misplaced).toEqual({ kind: 'error', problems: ['--load-model is only allowed with --model-control-mode=explicit'] });
  });

  it('reads REDIS_URL from the environment when the flag is absent', () => {
    const result = parseNodeArgs(['--model-repository', '/m'], { REDIS_URL: 'redis://127.0.0.1:6390' });
    expect(result.kind === 'options' && result.options.redisUrl).toBe('redis://127.0.0.1:6390');
    expect(parseNodeArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it('parses --report-url with --report-token or TESSERA_REPORT_TOKEN, and refuses it without a token', () => {
    const flags = parseNodeArgs(['--model-repository', '/m', '--report-url', 'https://edge.example/admin/fleet/report', '--report-token', 't0k']);
    expect(flags.kind === 'options' && flags.options).toMatchObject({ reportUrl: 'https://edge.example/admin/fleet/report', reportToken: 't0k' });
    const env = parseNodeArgs(['--model-repository', '/m', '--report-url=http://127.0.0.1:8787'], { TESSERA_REPORT_TOKEN: 'from-env' });
    expect(env.kind === 'options' && env.options).toMatchObject({ reportUrl: 'http://127.0.0.1:8787', reportToken: 'from-env' });
    const off = parseNodeArgs(['--model-repository', '/m'], { TESSERA_REPORT_TOKEN: 'from-env' });
    expect(off.kind === 'options' && off.options).toMatchObject({ reportUrl: undefined, reportToken: undefined });
    expect(parseNodeArgs(['--model-repository', '/m', '--report-url', 'https://edge.example'])).toEqual({
      kind: 'error',
      problems: ['--report-url needs --report-token (or env TESSERA_REPORT_TOKEN)'],
    });
    const bad = parseNodeArgs(['--model-repository', '/m', '--report-url', 'redis://edge', '--report-token', 't']);
    expect(bad.kind === 'error' && bad.problems[0]).toMatch(/^--report-url: .*http\(s\) URL/);
    expect(parseNodeArgs(['--model-repository', '/m', '--report-token', 't'])).toEqual({ kind: 'error', problems: ['--report-token is only used with --report-url'] });
    expect(NODE_USAGE).toMatch(/--report-url URL[\s\S]*--report-token TOKEN[\s\S]*TESSERA_REPORT_TOKEN/);
  });

  it('parses --grpc-max-concurrent-streams and refuses 0 (it would refuse every call) or a value over HTTP/2’s 32 bits', () => {
    const set = parseNodeArgs(['--model-repository', '/m', '--grpc-max-concurrent-streams', '4']);
    expect(set.kind === 'options' && set.options.grpcMaxConcurrentStreams).toBe(4);
    expect(parseNodeArgs(['--model-repository', '/m', '--grpc-max-concurrent-streams=0'])).toEqual({
      kind: 'error',
      problems: ["--grpc-max-concurrent-streams must be an integer in [1, 4294967295], got '0'"],
    });
    expect(parseNodeArgs(['--model-repository', '/m', '--grpc-max-concurrent-streams', '4294967296']).kind).toBe('error');
    expect(NODE_USAGE).toMatch(/--grpc-max-concurrent-streams N[\s\S]*default 1000/);
  });

  it('parses repeatable --http-restricted-api and --grpc-restricted-protocol, listed in --help', () => {
    const result = parseNodeArgs([
      '--model-repository', '/m',
      '--http-restricted-api=model-repository,logging:admin-key=secret',
      '--http-restricted-api', 'inference:infer-key=v',
      '--grpc-restricted-protocol=model-repository:admin-key=secret',
    ]);
    if (result.kind !== 'options') throw new Error(JSON.stringify(result));
    expect(Object.fromEntries(result.options.httpRestrictedApis)).toEqual({
      'model-repository': { header: 'admin-key', value: 'secret' },
      logging: { header: 'admin-key', value: 'secret' },
      inference: { header: 'infer-key', value: 'v' },
    });
    expect(Object.fromEntries(result.options.grpcRestrictedProtocols)).toEqual({
      'model-repository': { header: 'triton-grpc-protocol-admin-key', value: 'secret' },
    });
    const defaults = parseNodeArgs(['--model-repository', '/m']);
    if (defaults.kind !== 'options') throw new Error('expected options');
    expect(defaults.options.httpRestrictedApis.size + defaults.options.grpcRestrictedProtocols.size).toBe(0);
    const bad = parseNodeArgs(['--model-repository', '/m', '--http-restricted-api=repo:k=v', '--grpc-restricted-protocol=logging']);
    expect(bad.kind === 'error' && bad.problems).toEqual([
      expect.stringMatching(/unknown category 'repo'/),
      expect.stringMatching(/--grpc-restricted-protocol must be/),
    ]);
    for (const flag of ['--http-restricted-api', '--grpc-restricted-protocol', 'model-repository']) expect(NODE_USAGE).toContain(flag);
  });

  it('refuses --load-model names that are not valid model names', () => {
    const result = parseNodeArgs(['--model-repository', '/m', '--model-control-mode', 'explicit', '--load-model', '../x', '--load-model', '*']);
    expect(result.kind === 'error' && result.problems).toEqual([expect.stringMatching(/--load-model "..\/x": a model name must not contain/)]);
  });
});
