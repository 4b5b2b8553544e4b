/**
 * The bytes of a raw HTTP/1.1 request (llm-raw-upstream.ts): the head rendered once per node, method,
 * path and header set and kept, each request then one buffer of head, Content-Length and body, so it
 * leaves in one `socket.write`. Paths and headers are checked once, when their head is rendered: a
 * request line or header that could split the request is refused, never written.
 */
import { HTTP_FIELD_VALUE, HTTP_TOKEN } from '../../../../shared/src/http/index.js';

/** Heads kept; the set is cleared when full (paths name models, so it stays small in practice). */
const MAX_HEADS = 256;
/** Visible ASCII only: no space, CR, LF or control byte can end the request line early. */
const SAFE_PATH = /^\/[\x21-\x7e]*$/;

export class UnsafeRequest extends Error {}

export class RawRequestBytes {
  private readonly heads = new Map<string, Buffer>();

  /** The whole request; throws UnsafeRequest for a path or header that HTTP/1.1 cannot carry as given. */
  render(method: string, address: string, path: string, headers: Readonly<Record<string, string>> | undefined, body: Uint8Array | undefined): Buffer {
    const head = this.head(method, address, path, headers);
    const length = body === undefined ? '' : `content-length: ${body.length}\r\n`;
    const out = Buffer.allocUnsafe(head.length + length.length + 2 + (body?.length ?? 0));
    head.copy(out, 0);
    let at = head.length + out.write(length, head.length, 'latin1');
    out[at++] = 0x0d;
    out[at++] = 0x0a;
    if (body !== undefined) out.set(body, at);
    return out;
  }

  /** The request line and headers (no blank line yet), rendered once and kept; throws UnsafeRequest as `render` does. */
  head(method: string, address: string, path: string, headers: Readonly<Record<string, string>> | undefined): Buffer {
    let key = `${method} ${address} ${path}`;
    if (headers !== undefined) for (const name in headers) key += `\n${name}:${headers[name]}`;
    let head = this.heads.get(key);
    if (head === undefined) {
      head = renderHead(method, address, path, headers);
      if (this.heads.size >= MAX_HEADS) this.heads.clear();
      this.heads.set(key, head);
    }
    return head;
  }
}

function renderHead(method: string, address: string, path: string, headers: Readonly<Record<string, string>> | undefined): Buffer {
  if (!HTTP_TOKEN.test(method)) throw new UnsafeRequest(`method '${method}' is not a token`);
  if (!SAFE_PATH.test(path)) throw new UnsafeRequest('the path has bytes a request line cannot carry');
  let text = `${method} ${path} HTTP/1.1\r\nhost: ${address}\r\n`;
  if (headers !== undefined) {
    for (const name in headers) {
      const value = headers[name]!;
      const lower = name.toLowerCase();
      if (!HTTP_TOKEN.test(name) || !HTTP_FIELD_VALUE.test(value)) throw new UnsafeRequest(`header '${name.slice(0, 32)}' cannot be sent as given`);
      // Framing is this writer's: a caller's length, encoding or host would contradict it.
      if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'host' || lower === 'connection') continue;
      text += `${name}: ${value}\r\n`;
    }
  }
  return Buffer.from(text, 'latin1');
}
