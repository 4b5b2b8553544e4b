/**
 * Reads a request body up to a byte limit, decompressing gzip/deflate with the Web-standard
 * DecompressionStream (Node 20 and Workers both have it). The limit applies to the decompressed bytes,
 * so a small compressed bomb cannot grow past it.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { BodyOverLimitError } from './payload-too-large.js';

export async function readBodyLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) {
    throw new BodyOverLimitError(maxBytes, declared);
  }
  if (request.body === null) return new Uint8Array(0);
  const coding = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  let stream: ReadableStream<Uint8Array> = request.body;
  if (coding === 'gzip' || coding === 'deflate') {
    stream = stream.pipeThrough(new DecompressionStream(coding));
  } else if (coding !== 'identity' && coding !== '') {
    throw TesseraError.unsupported(`Unsupported compression type '${coding}' (gzip and deflate are)`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new BodyOverLimitError(maxBytes);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof TesseraError) throw error;
    throw TesseraError.invalidArg(`could not read the request body: ${(error as Error).message}`);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.length;
  }
  return body;
}
