/**
 * Response compression: like Triton, an inference response is gzip- or deflate-compressed when the
 * client's Accept-Encoding allows it. gzip wins a tie because it is what Triton's clients ask for first.
 */
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);

export type ResponseCoding = 'gzip' | 'deflate';

/** Picks a coding from an Accept-Encoding header, honouring `q=0` (explicitly not acceptable). */
export function negotiateResponseCoding(acceptEncoding: string | null): ResponseCoding | undefined {
  if (acceptEncoding === null) return undefined;
  const quality = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = (rawName ?? '').trim().toLowerCase();
    if (name === '') continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=');
      // A malformed q-value counts as "not acceptable": sending plain bytes is never wrong.
      if (key?.trim().toLowerCase() === 'q') q = /^\s*[0-9]+(\.[0-9]*)?\s*$/.test(value ?? '') ? Number(value) : 0;
    }
    quality.set(name, Number.isFinite(q) ? q : 0);
  }
  const wildcard = quality.get('*');
  const q = (name: string): number => quality.get(name) ?? wildcard ?? 0;
  const best = (['gzip', 'deflate'] as const).filter((name) => q(name) > 0).sort((a, b) => q(b) - q(a))[0];
  return best;
}

export async function compressBody(body: Uint8Array, coding: ResponseCoding): Promise<Uint8Array> {
  const out = coding === 'gzip' ? await gzipAsync(body) : await deflateAsync(body);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
