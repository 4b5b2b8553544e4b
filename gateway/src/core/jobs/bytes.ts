/** Base64 and hex with Web APIs only (btoa/atob, Web Crypto), so the job core runs on Node and Workers. */

const CHUNK = 0x8000;

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // In chunks: String.fromCharCode(...huge) overflows the call stack.
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function sha256HexOf(...parts: (string | Uint8Array)[]): Promise<string> {
  const utf8 = new TextEncoder();
  const chunks = parts.map((p) => (typeof p === 'string' ? utf8.encode(p) : p));
  const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length + 1, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length + 1; // a 0 byte between parts: ("ab","c") and ("a","bc") differ
  }
  return toHex(await crypto.subtle.digest('SHA-256', joined));
}
