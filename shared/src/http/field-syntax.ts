/**
 * The syntax of HTTP field names and values (RFC 9110 §5.1, §5.5), for code that reads or writes heads itself
 * (the raw HTTP/1.1 reader and writers, restricted-API headers): one definition, so every side agrees on what may
 * split a head.
 */

/** A token (tchar+): what a header name, a method or a metadata key may be. */
export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A field value's bytes: HTAB, visible ASCII, space and obs-text; never CR, LF, NUL or another control byte. */
export const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** `host:port` (host possibly a bracketed IPv6 literal) split for `net.connect` / `http.request`. */
export function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(address.slice(colon + 1)) };
}
