import { describe, expect, it } from 'vitest';
import type { NodeDirectory, NodeView } from '../ports/index.js';
import { createVersionChooser } from './version-chooser.js';

function directory(nodes: Record<string, string[]>): NodeDirectory {
  const views: NodeView[] = Object.entries(nodes).map(([id, versions]) => ({
    id,
    httpAddress: null,
    grpcAddress: null,
    draining: false,
    localInflight: 0,
    models: new Map([['m', { queued: 0, inflight: 0, capacity: 1, execTimeEmaMs: null, versions }]]),
  }));
  return {
    candidates: (model, version) => views.filter((n) => n.models.get(model)?.versions.some((v) => version === undefined || v === version)),
    all: () => views,
    observe: () => {},
    track: () => () => {},
    close: async () => {},
  };
}

const split = { models: { m: { splits: [{ version: '1', weight: 1 }, { version: '2', weight: 1 }], stickyHeader: 'X-Session' } } };

describe('version chooser', () => {
  it("keeps the request's own version, whatever the split or the breakers say", () => {
    const chooser = createVersionChooser({ directory: directory({ a: ['1'] }), routing: split, breakers: { isOpen: () => true } });
    expect(chooser.choose('m', '7')).toBe('7');
  });

  it('leaves versions behind open breakers out of the split and out of "latest"', () => {
    const open = new Set(['b']);
    const breakers = { isOpen: (id: string) => open.has(id) };
    const fleet = directory({ a: ['1'], b: ['2'] });
    expect(createVersionChooser({ directory: fleet, routing: split, breakers, random: () => 0.9 }).choose('m', undefined)).toBe('1');
    expect(createVersionChooser({ directory: fleet, routing: {}, breakers }).choose('m', '')).toBe('1');
    open.clear();
    expect(createVersionChooser({ directory: fleet, routing: split, breakers, random: () => 0.9 }).choose('m', undefined)).toBe('2');
    expect(createVersionChooser({ directory: fleet, routing: {}, breakers }).choose('m', undefined)).toBe('2');
  });

  it('chooses as if no breaker were open when all are, so the choice does not move', () => {
    const breakers = { isOpen: () => true };
    const fleet = directory({ a: ['1'], b: ['2'] });
    expect(createVersionChooser({ directory: fleet, routing: split, breakers, random: () => 0.9 }).choose('m', undefined)).toBe('2');
    expect(createVersionChooser({ directory: fleet, routing: {}, breakers }).choose('m', undefined)).toBe('2');
    expect(createVersionChooser({ directory: fleet, routing: {}, breakers }).eligible('m', undefined)).toEqual([]);
  });

  it('takes the highest version as a number, and the sticky header case-insensitively', () => {
    const fleet = directory({ a: ['9', '10', 'x'], b: ['010'] });
    expect(createVersionChooser({ directory: fleet, routing: {} }).choose('m', undefined)).toBe('10');
    const chooser = createVersionChooser({ directory: directory({ a: ['1', '2'] }), routing: split, random: () => 0 });
    const headers = (value: string) => ({ get: (name: string) => (name === 'x-session' ? value : null) });
    const first = chooser.choose('m', undefined, headers('s-1'));
    for (let i = 0; i < 5; i++) expect(chooser.choose('m', undefined, headers('s-1'))).toBe(first);
    expect(createVersionChooser({ directory: directory({}), routing: split }).choose('m', undefined)).toBeUndefined();
  });
});
