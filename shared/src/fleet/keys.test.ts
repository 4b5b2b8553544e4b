import { describe, expect, it } from 'vitest';
import { DEFAULT_KEY_PREFIX, fleetKeys, isValidNodeId } from './keys.js';

describe('fleetKeys', () => {
  it('puts every fleet name under the prefix and the {fleet} hash tag', () => {
    const keys = fleetKeys();
    expect(keys.prefix).toBe(DEFAULT_KEY_PREFIX);
    expect(keys.nodeKey('gpu-a:8000')).toBe('tessera:{fleet}:node:gpu-a:8000');
    expect(keys.nodeKeyPattern).toBe('tessera:{fleet}:node:*');
    expect(keys.eventsChannel).toBe('tessera:{fleet}:events');
  });

  it('honours a custom prefix', () => {
    const keys = fleetKeys({ prefix: 'staging:tessera:' });
    expect(keys.nodeKey('n1')).toBe('staging:tessera:{fleet}:node:n1');
    expect(keys.eventsChannel).toBe('staging:tessera:{fleet}:events');
  });

  it('maps a node key back to its id, and ignores foreign keys', () => {
    const keys = fleetKeys();
    expect(keys.nodeIdFromKey(keys.nodeKey('pod-7.gpu'))).toBe('pod-7.gpu');
    expect(keys.nodeIdFromKey('tessera:{fleet}:events')).toBeUndefined();
    expect(keys.nodeIdFromKey('other:{fleet}:node:x')).toBeUndefined();
    expect(keys.nodeIdFromKey('tessera:{fleet}:node:bad*id')).toBeUndefined();
  });

  it('refuses prefixes that would move the hash tag or break SCAN MATCH', () => {
    for (const prefix of ['a{b}:', 'x*:', 'y?', 'z[1]:', 'has space:']) {
      expect(() => fleetKeys({ prefix }), prefix).toThrow(/invalid Redis key prefix/);
    }
  });

  it('refuses node ids with glob characters, braces, slashes or too many characters', () => {
    expect(isValidNodeId('host-1.example.com:8001')).toBe(true);
    for (const id of ['', 'a*', 'a{b}', 'a/b', 'a b', 'x'.repeat(129)]) {
      expect(isValidNodeId(id), id).toBe(false);
      expect(() => fleetKeys().nodeKey(id)).toThrow(/invalid node id/);
    }
  });
});
