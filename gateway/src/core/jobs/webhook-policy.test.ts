import { describe, expect, it } from 'vitest';
import { parseIp, refusedRange, WebhookGuard } from './webhook-policy.js';

const refused = async (guard: WebhookGuard, url: string, resolve?: (h: string) => Promise<readonly string[]>): Promise<string> => {
  try {
    await guard.check(url, resolve);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${url} was accepted`);
};

describe('webhook policy', () => {
  const open = new WebhookGuard({ allowHttp: true, allow: [] });

  it('parses IPv4 and IPv6 (compressed, embedded IPv4, zone) and refuses what is not an address', () => {
    expect([...parseIp('127.0.0.1')!]).toEqual([127, 0, 0, 1]);
    expect([...parseIp('[::ffff:7f00:1]')!]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1]);
    expect([...parseIp('::ffff:127.0.0.1')!]).toEqual([...parseIp('::ffff:7f00:1')!]);
    expect(parseIp('fe80::1%eth0')?.[0]).toBe(0xfe);
    for (const bad of ['256.0.0.1', '1.2.3', 'a::b::c', '1:2:3:4:5:6:7:8:9', 'example.com', '']) expect(parseIp(bad), bad).toBeUndefined();
  });

  it('names the range of every internal address and passes public ones', () => {
    expect(refusedRange(parseIp('10.1.2.3')!)).toMatch(/private/);
    expect(refusedRange(parseIp('169.254.169.254')!)).toMatch(/link-local/);
    expect(refusedRange(parseIp('64:ff9b::7f00:1')!)).toMatch(/NAT64 address of a loopback/);
    expect(refusedRange(parseIp('2002:0a00:0001::1')!)).toMatch(/6to4 address of a private/);
    for (const ok of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '64:ff9b::808:808']) expect(refusedRange(parseIp(ok)!), ok).toBeUndefined();
  });

  it('refuses http by default, credentials, and every spelling of loopback; WHATWG URL normalizes them', async () => {
    const strict = new WebhookGuard();
    expect(await refused(strict, 'http://example.com/')).toMatch(/must be an https URL, got scheme 'http'/);
    expect(await refused(open, 'https://user:pw@example.com/')).toMatch(/without credentials/);
    expect(await refused(open, 'ftp://example.com/')).toMatch(/got scheme 'ftp'/);
    for (const url of ['http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://127.1/', 'http://0x7f000001/']) {
      expect(await refused(open, url), url).toMatch(/its host is 127\.0\.0\.1, a loopback address/);
    }
  });

  it('refuses a name when any of its addresses is internal, and lets allowlisted hosts and CIDRs through', async () => {
    const resolve = async (host: string) => (host === 'mixed.example' ? ['93.184.216.34', '192.168.0.10'] : ['10.20.1.5']);
    expect(await refused(open, 'https://mixed.example/', resolve)).toMatch(/'mixed\.example' resolves to 192\.168\.0\.10, a private/);
    const allowing = new WebhookGuard({ allowHttp: false, allow: ['hooks.internal', '10.20.0.0/16'] });
    await expect(allowing.check('https://hooks.internal/x', async () => ['127.0.0.1'])).resolves.toBeInstanceOf(URL);
    await expect(allowing.check('https://receiver.example/x', resolve)).resolves.toBeInstanceOf(URL);
    expect(await refused(allowing, 'https://10.21.0.1/')).toMatch(/private/);
    expect(allowing.addressProblem('other.example', '10.20.9.9')).toBeUndefined();
    expect(allowing.addressProblem('other.example', '127.0.0.1')).toMatch(/loopback/);
  });
});
