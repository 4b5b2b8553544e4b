import { Metadata } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GrpcStatus, TesseraError } from '../../../../shared/src/errors/index.js';
import { countsAgainstNode, upstreamErrorFromGrpc } from './grpc-errors.js';
import { createNodeBreakers } from './node-breakers.js';
import type { BreakerState } from './node-breakers.js';

function serviceError(code: number, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() });
}

describe('upstream error mapping', () => {
  it('marks only connect-phase UNAVAILABLE without response headers as not accepted', () => {
    const refused = serviceError(GrpcStatus.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:9');
    expect(upstreamErrorFromGrpc(refused, 'n', false, undefined)).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
    expect(upstreamErrorFromGrpc(refused, 'n', true, undefined).notAccepted).toBe(false);
    const dropped = serviceError(GrpcStatus.UNAVAILABLE, 'Connection dropped');
    expect(upstreamErrorFromGrpc(dropped, 'n', false, undefined).notAccepted).toBe(false);
    expect(upstreamErrorFromGrpc(serviceError(GrpcStatus.INVALID_ARGUMENT, 'bad shape'), 'n', false, undefined)).toMatchObject({
      code: 'INVALID_ARG',
      message: 'bad shape',
      notAccepted: false,
    });
  });

  it("counts transport failures against the node, never the caller's mistakes or the node's own answers", () => {
    const load = { queued: 1, inflight: 1 };
    expect(countsAgainstNode(upstreamErrorFromGrpc(serviceError(GrpcStatus.UNAVAILABLE, 'Connection dropped'), 'n', false, undefined))).toBe(true);
    expect(countsAgainstNode(upstreamErrorFromGrpc(serviceError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'), 'n', false, undefined))).toBe(true);
    expect(countsAgainstNode(upstreamErrorFromGrpc(serviceError(GrpcStatus.UNAVAILABLE, 'Exceeds maximum queue size'), 'n', true, load))).toBe(false);
    expect(countsAgainstNode(upstreamErrorFromGrpc(serviceError(GrpcStatus.NOT_FOUND, 'unknown model'), 'n', true, undefined))).toBe(false);
    expect(countsAgainstNode(upstreamErrorFromGrpc(serviceError(GrpcStatus.CANCELLED, 'Cancelled on client'), 'n', false, undefined))).toBe(false);
  });
});

describe('node breakers', () => {
  it('open after counted failures, refuse as not accepted, let one trial through half-open, then close', async () => {
    const breakers = createNodeBreakers({ volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 20 });
    const states: BreakerState[] = [];
    breakers.onStateChange((_id, state) => states.push(state));
    const broken = () => Promise.reject(TesseraError.internal('connection reset'));
    const callerMistake = () => Promise.reject(TesseraError.invalidArg('bad input'));
    try {
      // The caller's mistakes reach the caller but count as the node working (opossum's errorFilter).
      for (let i = 0; i < 3; i++) await expect(breakers.run('m', callerMistake)).rejects.toMatchObject({ code: 'INVALID_ARG' });
      expect(breakers.isOpen('m')).toBe(false);
      await expect(breakers.run('n', broken)).rejects.toThrow(/connection reset/);
      await expect(breakers.run('n', broken)).rejects.toThrow(/connection reset/);
      expect(breakers.isOpen('n')).toBe(true);
      expect(breakers.state('n')).toBe('open');
      await expect(breakers.run('n', () => Promise.resolve(1))).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        notAccepted: true,
        message: "the circuit breaker of node 'n' is open",
      });
      const halfOpen = new Promise<void>((resolve) => breakers.onStateChange((_id, s) => s === 'halfOpen' && resolve()));
      await halfOpen;
      expect(breakers.isOpen('n')).toBe(false);
      await expect(breakers.run('n', () => Promise.resolve('ok'))).resolves.toBe('ok');
      expect(states).toEqual(['open', 'halfOpen', 'closed']);
      expect(breakers.isOpen('other')).toBe(false);
    } finally {
      breakers.close();
    }
  });

  it('half-open with its trial in flight: a second call is refused as not accepted, the trial passes through untouched', async () => {
    // run() hands a closed breaker's promise back as it is; every other state keeps the refusal's mapping.
    const breakers = createNodeBreakers({ consecutiveFailures: 1, resetTimeoutMs: 20 });
    const failure = TesseraError.internal('connection reset');
    try {
      const caught = await breakers.run('n', () => Promise.reject(failure)).catch((error: unknown) => error);
      expect(caught).toBe(failure);
      await new Promise<void>((resolve) => breakers.onStateChange((_id, s) => s === 'halfOpen' && resolve()));
      let finishTrial: (value: string) => void = () => undefined;
      const trial = breakers.run('n', () => new Promise<string>((resolve) => (finishTrial = resolve)));
      await expect(breakers.run('n', () => Promise.resolve('second'))).rejects.toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      finishTrial('first');
      await expect(trial).resolves.toBe('first');
      expect(breakers.state('n')).toBe('closed');
    } finally {
      breakers.close();
    }
  });

  it('open after consecutive failures even when earlier successes keep the percentage low', async () => {
    const breakers = createNodeBreakers({ consecutiveFailures: 3, resetTimeoutMs: 60_000 });
    const ok = () => Promise.resolve('ok');
    const dead = () => Promise.reject(Object.assign(TesseraError.unavailable('Connection dropped'), { notAccepted: false }));
    try {
      for (let i = 0; i < 20; i++) await breakers.run('n', ok);
      // Two failures, an answer, two failures: never three in a row, and 4/25 is far under 50 %.
      for (const call of [dead, dead, ok, dead, dead]) await breakers.run('n', call).catch(() => undefined);
      expect(breakers.state('n')).toBe('closed');
      await expect(breakers.run('n', dead)).rejects.toThrow(/Connection dropped/);
      expect(breakers.state('n')).toBe('open');
      expect(breakers.isOpen('n')).toBe(true);
    } finally {
      breakers.close();
    }
  });
});
