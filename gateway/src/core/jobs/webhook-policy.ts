/**
 * Which webhook URLs a job may name (SSRF guard). A webhook is a request the gateway's network makes
 * on a tenant's behalf, so the URL must not reach what only that network can reach: the node's
 * routes, Redis, the cloud's metadata service, anything on loopback or a private network.
 *
 * - Scheme: https; http only with `webhooks.allowHttp`. No credentials in the URL.
 * - The host is read by WHATWG URL, which turns every IPv4 spelling into dotted decimal (`2130706433`,
 *   `0177.0.0.1`, `0x7f.1`, `127.1` are all 127.0.0.1) and IPv6 into its compressed form, so one
 *   check covers them all. An IP literal is checked as is; a name is resolved and EVERY address it
 *   resolves to must be allowed (one bad address refuses the URL).
 * - Refused addresses (`refusedRange`): unspecified, loopback, RFC 1918 private, CGNAT (100.64/10),
 *   link-local (169.254/16: cloud metadata; fe80::/10), IETF/documentation/benchmark ranges,
 *   multicast, reserved and broadcast (240/4), unique-local fc00::/7, site-local fec0::/10,
 *   IPv4-mapped and IPv4-compatible IPv6, 6to4 and NAT64 (64:ff9b::/96 and 64:ff9b:1::/48) carrying
 *   a refused IPv4, Teredo, discard-only 100::/64.
 * - `webhooks.allow`: host names (exact, case-insensitive) or CIDRs (`10.1.0.0/16`, `fd00::/8`) of
 *   internal receivers that are let through anyway.
 *
 * Checked twice: at submission (400 naming the problem) and at delivery, right before connecting,
 * on the addresses the connection will use (adapters/bullmq/webhook-http.ts), so a name that
 * resolved to a public address at submission and to 127.0.0.1 later (DNS rebinding) is refused.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export interface WebhookPolicy {
  /** Accept http:// URLs (default false: https only). */
  readonly allowHttp: boolean;
  /** Host names or CIDRs let through whatever their addresses (internal receivers). */
  readonly allow: readonly string[];
}

export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = Object.freeze({ allowHttp: false, allow: Object.freeze([]) as readonly string[] });

/** Resolves a host name to all its addresses (textual IPv4/IPv6). */
export type HostResolver = (hostname: string) => Promise<readonly string[]>;

export const MAX_WEBHOOK_URL = 2048;
export const WEBHOOK_URL_HEADER = 'x-tessera-webhook-url';

/** An address as 4 or 16 bytes, or undefined when the text is not an IP address. */
export function parseIp(text: string): Uint8Array | undefined {
  const host = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return host.includes(':') ? parseIpv6(host) : parseIpv4(host);
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    out[i] = Number(part);
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | undefined {
  const zone = text.indexOf('%');
  let rest = (zone >= 0 ? text.slice(0, zone) : text).toLowerCase();
  const out = new Uint8Array(16);
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two groups.
  const lastColon = rest.lastIndexOf(':');
  const tail = rest.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (v4 === undefined) return undefined;
    rest = `${rest.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const back = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - back.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...back];
  for (let i = 0; i < 8; i++) {
    const g = all[i]!;
    if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined;
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  return out;
}

/** Whether `ip` lies in `net`/`bits` (both of the same length). */
function inPrefix(ip: Uint8Array, net: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((ip[byte]! & mask) !== ((net[byte] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_REFUSED: readonly (readonly [readonly number[], number, string])[] = [
  [[0, 0, 0, 0], 8, 'an unspecified ("this network") address'],
  [[10, 0, 0, 0], 8, 'a private (RFC 1918) address'],
  [[100, 64, 0, 0], 10, 'a carrier-grade NAT (100.64.0.0/10) address'],
  [[127, 0, 0, 0], 8, 'a loopback address'],
  [[169, 254, 0, 0], 16, 'a link-local address (169.254.0.0/16, cloud metadata)'],
  [[172, 16, 0, 0], 12, 'a private (RFC 1918) address'],
  [[192, 0, 0, 0], 24, 'an IETF protocol address (192.0.0.0/24)'],
  [[192, 0, 2, 0], 24, 'a documentation address'],
  [[192, 88, 99, 0], 24, 'a 6to4 relay address'],
  [[192, 168, 0, 0], 16, 'a private (RFC 1918) address'],
  [[198, 18, 0, 0], 15, 'a benchmarking address'],
  [[198, 51, 100, 0], 24, 'a documentation address'],
  [[203, 0, 113, 0], 24, 'a documentation address'],
  [[224, 0, 0, 0], 4, 'a multicast address'],
  [[255, 255, 255, 255], 32, 'the broadcast address'],
  [[240, 0, 0, 0], 4, 'a reserved address (240.0.0.0/4)'],
];

const V6_REFUSED: readonly (readonly [readonly number[], number, string])[] = [
  [[], 128, 'the unspecified address (::)'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 128, 'a loopback address (::1)'],
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 'an IPv4-mapped IPv6 address'],
  [[], 96, 'an IPv4-compatible IPv6 address'],
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'a local-use NAT64 address (64:ff9b:1::/48)'],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'a discard-only address (100::/64)'],
  [[0x20, 0x01, 0, 0], 32, 'a Teredo address'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'a documentation address'],
  [[0xfc], 7, 'a unique-local (fc00::/7) address'],
  [[0xfe, 0x80], 10, 'a link-local (fe80::/10) address'],
  [[0xfe, 0xc0], 10, 'a site-local (fec0::/10) address'],
  [[0xff], 8, 'a multicast address'],
];

/** Why the address is refused (a phrase: "a loopback address"), or undefined when it is public. */
export function refusedRange(ip: Uint8Array): string | undefined {
  if (ip.length === 4) return V4_REFUSED.find(([net, bits]) => inPrefix(ip, net, bits))?.[2];
  const found = V6_REFUSED.find(([net, bits]) => inPrefix(ip, net, bits))?.[2];
  if (found !== undefined) return found;
  // Well-known NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address: judge that one.
  if (inPrefix(ip, [0, 0x64, 0xff, 0x9b], 96)) {
    const inner = refusedRange(ip.slice(12, 16));
    return inner === undefined ? undefined : `a NAT64 address of ${inner}`;
  }
  if (inPrefix(ip, [0x20, 0x02], 16)) {
    const inner = refusedRange(ip.slice(2, 6));
    return inner === undefined ? undefined : `a 6to4 address of ${inner}`;
  }
  return undefined;
}

/** A parsed `allow` entry. */
type AllowEntry = { readonly host: string } | { readonly net: Uint8Array; readonly bits: number };

/** The problem with an `allow` entry (for the config loader), or undefined when it is valid. */
export function allowEntryProblem(entry: string): string | undefined {
  return parseAllowEntry(entry) === undefined ? `must be a host name or a CIDR (10.0.0.0/8, fd00::/8), got ${JSON.stringify(entry)}` : undefined;
}

function parseAllowEntry(entry: string): AllowEntry | undefined {
  const slash = entry.indexOf('/');
  if (slash >= 0) {
    const net = parseIp(entry.slice(0, slash));
    const bitsText = entry.slice(slash + 1);
    if (net === undefined || !/^\d{1,3}$/.test(bitsText) || Number(bitsText) > net.length * 8) return undefined;
    return { net, bits: Number(bitsText) };
  }
  const ip = parseIp(entry);
  if (ip !== undefined) return { net: ip, bits: ip.length * 8 };
  return /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*$/i.test(entry) ? { host: entry.toLowerCase() } : undefined;
}

/** The compiled policy: what the checks below use. */
export class WebhookGuard {
  private readonly hosts: ReadonlySet<string>;
  private readonly nets: readonly { readonly net: Uint8Array; readonly bits: number }[];

  constructor(readonly policy: WebhookPolicy = DEFAULT_WEBHOOK_POLICY) {
    const entries = policy.allow.map((e) => parseAllowEntry(e)).filter((e): e is AllowEntry => e !== undefined);
    this.hosts = new Set(entries.flatMap((e) => ('host' in e ? [e.host] : [])));
    this.nets = entries.flatMap((e) => ('net' in e ? [e] : []));
  }

  /** The URL if its form is acceptable (scheme, length, no credentials); INVALID_ARG otherwise. */
  parse(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw.trim());
    } catch {
      throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER} must be an absolute https URL`);
    }
    const schemes = this.policy.allowHttp ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) {
      throw TesseraError.invalidArg(
        `${WEBHOOK_URL_HEADER} must be an ${this.policy.allowHttp ? 'http(s)' : 'https'} URL, got scheme '${url.protocol.replace(/:$/, '')}'` +
          (url.protocol === 'http:' ? ' (http webhooks are off: webhooks.allowHttp in the gateway config)' : ''),
      );
    }
    if (url.href.length > MAX_WEBHOOK_URL || url.username !== '' || url.password !== '') {
      throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER} must be at most ${MAX_WEBHOOK_URL} characters, without credentials`);
    }
    return url;
  }

  /** Whether the host name is on the allowlist. */
  hostAllowed(hostname: string): boolean {
    return this.hosts.has(hostname.toLowerCase().replace(/\.$/, ''));
  }

  /** Why connecting to `address` for `hostname` is refused ("127.0.0.1, a loopback address"), or undefined when it is allowed. */
  addressProblem(hostname: string, address: string): string | undefined {
    if (this.hostAllowed(hostname)) return undefined;
    const ip = parseIp(address);
    if (ip === undefined) return `'${address}' is not an IP address`;
    if (this.nets.some(({ net, bits }) => net.length === ip.length && inPrefix(ip, [...net], bits))) return undefined;
    const range = refusedRange(ip);
    return range === undefined ? undefined : `${address}, ${range}`;
  }

  /**
   * The full check of a URL: its form, then its host (an IP literal as written, a name through
   * `resolve`). Without a resolver (runtimes with no DNS API) names are checked at delivery only.
   * Returns the URL; INVALID_ARG naming the problem otherwise.
   */
  async check(raw: string, resolve?: HostResolver): Promise<URL> {
    const url = this.parse(raw);
    const host = url.hostname;
    if (this.hostAllowed(host)) return url;
    let addresses: readonly string[];
    if (parseIp(host) !== undefined) {
      addresses = [host.replace(/^\[|\]$/g, '')];
    } else {
      if (resolve === undefined) return url;
      try {
        addresses = await resolve(host);
      } catch (error) {
        throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER}: the host '${host}' does not resolve (${(error as Error).message})`);
      }
      if (addresses.length === 0) throw TesseraError.invalidArg(`${WEBHOOK_URL_HEADER}: the host '${host}' has no address`);
    }
    const literal = parseIp(host) !== undefined;
    for (const address of addresses) {
      const problem = this.addressProblem(host, address);
      if (problem !== undefined) {
        const where = literal ? `its host is ${problem}` : `its host '${host}' resolves to ${problem}`;
        throw TesseraError.invalidArg(
          `${WEBHOOK_URL_HEADER} is refused: ${where}; webhooks may only reach public addresses (internal receivers: webhooks.allow in the gateway config)`,
        );
      }
    }
    return url;
  }
}

const guards = new WeakMap<WebhookPolicy, WebhookGuard>();

/** The compiled guard of a (frozen) policy, made once per policy object. */
export function webhookGuardFor(policy: WebhookPolicy): WebhookGuard {
  let guard = guards.get(policy);
  if (guard === undefined) {
    guard = new WebhookGuard(policy);
    guards.set(policy, guard);
  }
  return guard;
}
