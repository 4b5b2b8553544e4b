/**
 * One webhook POST on node:http(s), with the SSRF guard applied where it matters: on the addresses
 * the socket is about to connect to. The request's `lookup` resolves the host, refuses the delivery
 * when any address is refused by the policy (core/jobs/webhook-policy.ts), and hands the socket
 * exactly the checked addresses, so a name that resolves elsewhere between the check and the connect
 * (DNS rebinding) cannot slip through. An IP literal is checked before the request (Node does not
 * call `lookup` for one). Redirects are never followed (node:http does not follow them; a 3xx is
 * not a delivery). TLS still verifies the certificate against the host name.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { parseIp, type WebhookGuard } from '../../core/jobs/index.js';

/** A delivery the policy refuses: never retried. */
export class WebhookRefusedError extends Error {
  override readonly name = 'WebhookRefusedError';
}

/** Resolves a host to all its addresses; default node:dns lookup (the system resolver, /etc/hosts included). */
export type AddressResolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemResolver: AddressResolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export interface WebhookPost {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** The `lookup` of a guarded request: only checked addresses reach the socket. */
export function guardedLookup(guard: WebhookGuard, resolve: AddressResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = typeof options === 'object' && options !== null ? options.family : undefined;
        const usable = addresses.filter((a) => family === undefined || family === 0 || a.family === family);
        for (const a of usable) {
          const problem = guard.addressProblem(hostname, a.address);
          if (problem !== undefined) {
            callback(new WebhookRefusedError(`webhook host '${hostname}' now resolves to ${problem}: not delivered`), '', 4);
            return;
          }
        }
        if (usable.length === 0) {
          callback(Object.assign(new Error(`webhook host '${hostname}' has no address`), { code: 'ENOTFOUND' }), '', 4);
          return;
        }
        if (typeof options === 'object' && options !== null && options.all === true) {
          (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, [...usable]);
        } else {
          callback(null, usable[0]!.address, usable[0]!.family);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
}

/** POSTs the webhook; resolves with the status code, rejects on a refused target or a network error. */
export function postWebhook(post: WebhookPost, guard: WebhookGuard, resolve: AddressResolver = systemResolver): Promise<number> {
  let url: URL;
  try {
    url = guard.parse(post.url);
  } catch (error) {
    return Promise.reject(new WebhookRefusedError((error as Error).message));
  }
  const literal = parseIp(url.hostname);
  if (literal !== undefined) {
    const problem = guard.addressProblem(url.hostname, url.hostname.replace(/^\[|\]$/g, ''));
    if (problem !== undefined) return Promise.reject(new WebhookRefusedError(`webhook host is ${problem}: not delivered`));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<number>((done, fail) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...post.headers, 'Content-Length': String(Buffer.byteLength(post.body)) },
        lookup: guardedLookup(guard, resolve),
        timeout: post.timeoutMs,
        agent: false,
      },
      (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`webhook did not answer within ${post.timeoutMs} ms`)));
    req.on('error', fail);
    req.end(post.body);
  });
}
