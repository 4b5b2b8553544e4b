import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import { parseDeadlineHeader, requestDeadline as deadlineOf, webRequestDeadline as requestDeadline } from './request-deadline.js';

describe('the deadline header', () => {
  it('parses whole non-negative milliseconds, and nothing else', () => {
    expect(parseDeadlineHeader(null)).toBeUndefined();
    expect(parseDeadlineHeader('0')).toBe(0);
    expect(parseDeadlineHeader(' 250 ')).toBe(250);
    for (const bad of ['', '-1', '1.5', '1e3', '0x10', 'soon', '99999999999999999999']) {
      expect(() => parseDeadlineHeader(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringContaining(DEADLINE_HEADER) }));
    }
  });

  it('a deadline of 0 has already passed; none or a far one leaves the client signal alone', () => {
    const now = requestDeadline(new Request('http://node/infer', { headers: { [DEADLINE_HEADER]: '0' } }));
    expect(now.signal.aborted).toBe(true);
    expect(now.expired()).toBe(true);
    const request = new Request('http://node/infer');
    expect(requestDeadline(request).signal).toBe(request.signal);
    const far = new Request('http://node/infer', { headers: { [DEADLINE_HEADER]: String(2 ** 40) } });
    expect(requestDeadline(far).signal).toBe(far.signal);
    const later = requestDeadline(new Request('http://node/infer', { headers: { [DEADLINE_HEADER]: '60000' } }));
    expect(later.signal.aborted).toBe(false);
    later.dispose();
  });

  it('follows a long-lived client signal without leaving anything on it once disposed', () => {
    // The connection's signal outlives its requests (connection-signal.ts): nothing may pile up on it.
    const connection = new AbortController();
    for (let i = 0; i < 100; i++) {
      const deadline = deadlineOf('60000', connection.signal);
      deadline.dispose();
    }
    expect(getEventListeners(connection.signal, 'abort')).toHaveLength(0);
    const pending = deadlineOf('60000', connection.signal);
    connection.abort(new Error('closed'));
    expect(pending.signal.aborted).toBe(true);
    expect(pending.expired()).toBe(false);
    pending.dispose();
  });
});
