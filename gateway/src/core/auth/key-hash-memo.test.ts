import { describe, expect, it } from 'vitest';
import { KeyHashMemo } from './key-hash-memo.js';
import { sha256HexSync } from './sha256.js';

describe('KeyHashMemo', () => {
  it('answers the real hash whether or not it remembers the key', () => {
    const memo = new KeyHashMemo(4);
    expect(memo.hashOf('tsk_a')).toBe(sha256HexSync('tsk_a'));
    memo.remember('tsk_a', sha256HexSync('tsk_a'));
    expect(memo.hashOf('tsk_a')).toBe(sha256HexSync('tsk_a'));
    expect(memo.size).toBe(1);
  });

  it('holds at most maxEntries keys, dropping the oldest', () => {
    const memo = new KeyHashMemo(3);
    for (let i = 0; i < 10; i++) memo.remember(`k${i}`, `h${i}`);
    expect(memo.size).toBe(3);
    // The survivors are the last three; an evicted key is hashed again.
    expect(memo.hashOf('k9')).toBe('h9');
    expect(memo.hashOf('k7')).toBe('h7');
    expect(memo.hashOf('k0')).toBe(sha256HexSync('k0'));
  });
});
