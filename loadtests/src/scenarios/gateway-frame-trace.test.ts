import { describe, expect, it } from 'vitest';
import { accountLegs, FrameCounter, joinedLines, parseLine, type LegPorts } from './gateway-frame-trace.js';

const hex = (bytes: Buffer): string => [...bytes].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
const frame = (type: number, flags: number, payload: Buffer): Buffer => {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  return Buffer.concat([head, payload]);
};
const ports: LegPorts = { grpcFront: 44001, httpFront: 44002, nodeGrpc: 45000, nodeHttp: 45001, redis: 44090 };

describe('gateway-frame-trace', () => {
  it('cuts one direction into frames across reads, skipping the preface, by type and flag', () => {
    const counter = new FrameCounter();
    const bytes = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, Buffer.alloc(6)), frame(1, 4, Buffer.alloc(3)), frame(0, 1, Buffer.alloc(20)), frame(6, 1, Buffer.alloc(8))]);
    counter.feed(bytes.subarray(0, 40));
    counter.feed(bytes.subarray(40));
    expect(Object.fromEntries(counter.counts)).toEqual({ SETTINGS: 1, HEADERS: 1, 'DATA+END_STREAM': 1, 'PING+ACK': 1 });
    expect(counter.broken).toBe(false);
  });

  it('reads a socket call and its bytes from strace -yy -xx, with split lines joined', () => {
    const data = frame(8, 0, Buffer.alloc(4));
    const lines = joinedLines(`7 read(21<TCP:[127.0.0.1:44001->127.0.0.1:5000]>,  <unfinished ...>\n7 <... read resumed>"${hex(data)}", 65536) = 13\n`);
    const event = parseLine(lines[0]!);
    expect(event).toMatchObject({ tid: 7, call: 'read', local: 44001, remote: 5000, result: 13 });
    expect(event!.bytes).toEqual(data);
  });

  it('names legs by port and counts only the main thread calls', () => {
    const text = [
      `1 writev(22<TCP:[127.0.0.1:5001->127.0.0.1:45000]>, [{iov_base="${hex(frame(1, 4, Buffer.alloc(2)))}", iov_len=11}], 1) = 11`,
      `1 read(21<TCP:[127.0.0.1:44001->127.0.0.1:5000]>, 0x1, 65536) = -1 EAGAIN (Resource temporarily unavailable)`,
      '2 futex(0x1, FUTEX_WAIT, 0) = 0',
    ].join('\n');
    const { legs, calls } = accountLegs(text, ports, 1);
    expect(Object.fromEntries(calls)).toEqual({ writev: 1, 'read (EAGAIN)': 1 });
    expect(Object.fromEntries(legs.get('gateway↔node gRPC')!.framesOut!.counts)).toEqual({ HEADERS: 1 });
    expect(legs.get('client↔gateway gRPC')!.calls.get('read (EAGAIN)')).toBe(1);
  });
});
