/**
 * A POST on a fresh loopback connection (Connection: close), read to its end, for tests that check how an
 * answer was written: its head and the body's HTTP/1.1 chunks as sent, one chunk per write of the server.
 */
import { connect } from 'node:net';

export interface ChunkedAnswer {
  readonly head: string;
  /** Each chunk's bytes as UTF-8 text, in order; the closing zero-size chunk left out. */
  readonly chunks: string[];
}

export function chunkedPost(port: number, path: string, body: string, headers: readonly string[] = []): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(parts);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      if (!/^HTTP\/1\.1 200/.test(head) || !/\r\ntransfer-encoding: chunked/i.test(head)) return reject(new Error(`unexpected answer to ${path}: ${all.toString()}`));
      const chunks: string[] = [];
      let offset = split + 4;
      for (;;) {
        const line = all.indexOf('\r\n', offset);
        const size = parseInt(all.subarray(offset, line).toString('latin1'), 16);
        if (!(size > 0)) break;
        chunks.push(all.subarray(line + 2, line + 2 + size).toString('utf8'));
        offset = line + 2 + size + 2;
      }
      resolve({ head, chunks });
    });
    const bytes = Buffer.from(body);
    const lines = [`POST ${path} HTTP/1.1`, 'Host: x', 'Content-Type: application/json', ...headers, `Content-Length: ${bytes.length}`, 'Connection: close', '', ''];
    socket.write(lines.join('\r\n'));
    socket.write(bytes);
  });
}
