import { describe, expect, it } from 'vitest';
import { parseH2load } from './h2load-loop.js';

// h2load 1.52's summary, as it printed it here (a 2 s run against a node:http2 server).
const SUMMARY = `finished in 2.00s, 3522.00 req/s, 120.48KB/s
requests: 7044 total, 7048 started, 7044 done, 7044 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 7048 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 240.96KB (246743) total, 20.73KB (21225) headers (space savings 95.76%), 34.41KB (35240) data
                     min         max         mean         sd        +/- sd
time for request:      282us     64.85ms      1.12ms      2.33ms    91.14%
time for connect:       85us        85us        85us         0us   100.00%
`;

describe('parseH2load', () => {
  it('reads the calls done, the failures and the mean time per request in its unit', () => {
    expect(parseH2load(SUMMARY)).toEqual({ requests: 7044, failed: 0, meanUs: 1120 });
  });

  it('adds failed, errored and timed-out calls', () => {
    const text = SUMMARY.replace('0 failed, 0 errored, 0 timeout', '3 failed, 2 errored, 1 timeout').replace('1.12ms', '850us');
    expect(parseH2load(text)).toEqual({ requests: 7044, failed: 6, meanUs: 850 });
  });

  it('counts 4xx and 5xx answers as failures', () => {
    const text = SUMMARY.replace('7048 2xx, 0 3xx, 0 4xx, 0 5xx', '7000 2xx, 0 3xx, 40 4xx, 8 5xx');
    expect(parseH2load(text).failed).toBe(48);
  });

  it('refuses output without a summary (h2load could not connect)', () => {
    expect(() => parseH2load('connect to 127.0.0.1:1 failed')).toThrow(/no summary/);
  });
});
