/**
 * The request's `Cache-Control` header, reduced to what the gateway honours:
 * - `no-store` → 'no-store': produce, neither read nor write the cache (x-cache: BYPASS);
 * - `no-cache`, or `max-age=0` (RFC 9111 §5.2.1.1: the client will not accept a stored response
 *   older than 0 s) → 'no-cache': produce and refresh the stored entry;
 * - anything else (including unknown or malformed directives) → 'default'.
 * `no-store` wins over `no-cache` when both are present. Like RFC 9111 §5.4, `Pragma: no-cache` counts
 * only when the request has no `Cache-Control` header at all (HTTP/1.0 clients).
 */
import type { CacheDirective } from './cache-types.js';

export function parseCacheControl(cacheControl: string | null | undefined, pragma?: string | null): CacheDirective {
  if (cacheControl === null || cacheControl === undefined) {
    return pragma !== null && pragma !== undefined && directives(pragma).has('no-cache') ? 'no-cache' : 'default';
  }
  const found = directives(cacheControl);
  if (found.has('no-store')) return 'no-store';
  if (found.has('no-cache')) return 'no-cache';
  const maxAge = found.get('max-age');
  if (maxAge !== undefined && /^"?0+"?$/.test(maxAge)) return 'no-cache';
  return 'default';
}

/** Directive name (lower case) → argument ('' when none). */
function directives(header: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of header.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    const eq = text.indexOf('=');
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    if (!found.has(name)) found.set(name, eq < 0 ? '' : text.slice(eq + 1).trim());
  }
  return found;
}
