import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { LogFields, Logger } from '../../../../shared/src/logging/logger-interface.js';
import { AccessError } from './access-error.js';
import { errorAnswer } from './responses.js';

function recordingLogger(): { logger: Logger; errors: { message: string; fields?: LogFields }[] } {
  const errors: { message: string; fields?: LogFields }[] = [];
  const logger: Logger = {
    info: () => {},
    warn: () => {},
    verbose: () => {},
    error: (message, fields) => void errors.push({ message, ...(fields === undefined ? {} : { fields }) }),
    child: () => logger,
  };
  return { logger, errors };
}

describe('errorAnswer', () => {
  it('maps errors to Triton JSON with their status, Retry-After for rejections', () => {
    const { logger } = recordingLogger();
    const rejected = errorAnswer(new TesseraError('UNAVAILABLE', 'queue full', { retryAfterMs: 1500 }), logger);
    expect(rejected.status).toBe(503);
    expect(rejected.headers['Retry-After']).toBe('2');
    expect(JSON.parse(rejected.body as string)).toEqual({ error: 'queue full' });
    expect(errorAnswer(new AccessError(401, 'missing API key'), logger).headers['WWW-Authenticate']).toBe('Bearer');
  });

  it('logs only our bugs and INTERNAL errors, not caller mistakes nor expected 503/504s', () => {
    const { logger, errors } = recordingLogger();
    errorAnswer(TesseraError.invalidArg('bad shape'), logger);
    errorAnswer(TesseraError.unsupported('Unsupported compression type'), logger);
    errorAnswer(TesseraError.unavailable('the tier share of the queue is full'), logger);
    errorAnswer(TesseraError.deadlineExceeded('deadline passed'), logger);
    expect(errors).toEqual([]);

    expect(errorAnswer(TesseraError.internal('inconsistent output'), logger).status).toBe(500);
    expect(errorAnswer(new TypeError('x is undefined'), logger).status).toBe(500);
    expect(errors.map((e) => e.fields?.['code'])).toEqual(['INTERNAL', 'INTERNAL']);
    expect(errors[1]?.fields?.['stack']).toEqual(expect.stringContaining('TypeError'));
  });
});
