import { describe, expect, it } from 'vitest';
import { FLEET_EVENT_VERSION, parseFleetEvent } from './fleet-event.js';
import { LOAD_REPORT_VERSION } from './load-report.js';

const report = {
  version: LOAD_REPORT_VERSION,
  nodeId: 'gpu-1',
  httpAddress: 'gpu-1:8000',
  grpcAddress: null,
  startedAt: 100,
  sentAt: 200,
  seq: 1,
  ttlMs: 3000,
  models: [],
  draining: false,
};
const base = { version: FLEET_EVENT_VERSION, nodeId: 'gpu-1', startedAt: 100, sentAt: 200 };

describe('parseFleetEvent', () => {
  it('parses a join with its report and a leave', () => {
    expect(parseFleetEvent(JSON.stringify({ ...base, type: 'join', report }))).toEqual({ ...base, type: 'join', report });
    expect(parseFleetEvent(JSON.stringify({ ...base, type: 'leave', deregistered: true }))).toEqual({
      ...base,
      type: 'leave',
      deregistered: true,
    });
  });

  it.each([
    ['an unknown type', { ...base, type: 'wave' }, /type must be one of "join", "leave" \(got "wave"\)/],
    ['a leave without deregistered', { ...base, type: 'leave' }, /deregistered must be a boolean/],
    ['a join without report', { ...base, type: 'join' }, /malformed load report: the report must be an object/],
    ['a join for another node', { ...base, type: 'join', report: { ...report, nodeId: 'gpu-2' } }, /report\.nodeId must be equal/],
    ['a join of another process', { ...base, type: 'join', report: { ...report, startedAt: 1 } }, /report\.startedAt must be equal/],
    ['an unknown version', { ...base, version: 9, type: 'leave', deregistered: false }, /version must be one of 1/],
  ])('rejects %s', (_, doc, expected) => {
    expect(() => parseFleetEvent(JSON.stringify(doc))).toThrow(expected);
  });
});
