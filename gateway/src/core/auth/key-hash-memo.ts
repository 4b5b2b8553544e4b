/**
 * The SHA-256 of recently verified API keys, so a tenant's steady stream of requests does not hash the
 * same key again each time (a few percent of a cache hit's CPU). It memoizes the hash only: the store
 * lookup, the revoked flag and the constant-time compare still run on every request, so a revoked or
 * deleted key stops working exactly as before. Only keys the store accepted enter (a stranger's guesses
 * never do), and it holds at most `maxEntries`, dropping the oldest first.
 */
import { sha256HexSync } from './sha256.js';

export class KeyHashMemo {
  private readonly hashes = new Map<string, string>();

  constructor(private readonly maxEntries = 1024) {}

  /** The key's hash: remembered when the key was verified before, else computed. */
  hashOf(key: string): string {
    return this.hashes.get(key) ?? sha256HexSync(key);
  }

  /** Called once the store found `key` under `hash`, not revoked. */
  remember(key: string, hash: string): void {
    if (this.hashes.has(key)) return;
    if (this.hashes.size >= this.maxEntries) {
      const oldest = this.hashes.keys().next().value as string;
      this.hashes.delete(oldest);
    }
    this.hashes.set(key, hash);
  }

  get size(): number {
    return this.hashes.size;
  }
}

/** The gateway's memo: a key's hash is the same for every gateway app in the process. */
export const verifiedKeyHashes = new KeyHashMemo();
