import { describe, expect, it } from 'vitest';
import { parseStraceTimeline } from './strace-timeline.js';

// Lines as `strace -f -ttt -yy -s 0` writes them: the gateway listens on 8000, the node on 9000, Redis on 6379.
const client = '26<TCP:[127.0.0.1:8000->127.0.0.1:50000]>';
const upstream = '25<TCP:[127.0.0.1:41000->127.0.0.1:9000]>';
const redis = '17<TCP:[127.0.0.1:42000->127.0.0.1:6379]>';
const epoll = '13<anon_inode:[eventpoll]>';

function request(t0: number, withRedis: boolean): string[] {
  const at = (us: number): string => ((t0 + us) / 1e6).toFixed(6);
  return [
    `100  ${at(0)} read(${client}, ""..., 65536) = 226`,
    ...(withRedis ? [`100  ${at(50)} write(${redis}, ""..., 202) = 202`, `100  ${at(90)} read(${redis}, ""..., 65536) = 26`] : []),
    `100  ${at(300)} writev(${upstream}, [...], 3) = 709`,
    `101  ${at(310)} epoll_pwait(${epoll},  <unfinished ...>`,
    `100  ${at(400)} epoll_pwait(${epoll}, [...], 1024, -1, NULL, 8) = 1`,
    `100  ${at(500)} read(${upstream}, ""..., 65536) = 613`,
    `101  ${at(520)} <... epoll_pwait resumed>[], 1024, 0, NULL, 8) = 0`,
    `100  ${at(700)} writev(${client}, [...], 3) = 281`,
  ];
}

describe('parseStraceTimeline', () => {
  it('places each call of a request after its read, by socket and thread, and averages over requests', () => {
    const text = [`100  1.000000 epoll_pwait(${epoll}, [], 1024, 5, NULL, 8) = 0`, ...request(2_000_000, true), ...request(3_000_000, false)].join('\n');
    const t = parseStraceTimeline(text, { gatewayPort: 8000, upstreamPort: 9000, mainTid: 100 });
    expect(t.requests).toBe(2);
    expect(t.meanInsideUs).toBeCloseTo(700, 3);
    expect(t.meanOutsideUs).toBeCloseTo(1_000_000 - 700, 3);
    const step = (name: string) => t.steps.find((s) => s.step === name);
    expect(step('writev upstream')).toMatchObject({ share: 1 });
    expect(step('writev upstream')!.meanUs).toBeCloseTo(300, 3);
    expect(step('read upstream')!.meanUs).toBeCloseTo(500, 3);
    expect(step('write tcp :6379-42000')).toMatchObject({ share: 0.5 });
    expect(step('epoll_pwait -> events (main)')!.meanUs).toBeCloseTo(400, 3);
    // The other thread's wait is placed where it returned, not where it began.
    expect(step('epoll_pwait -> 0 (thread)')!.meanUs).toBeCloseTo(520, 3);
    expect(t.callsPerRequest['read client']).toBe(1);
    expect(t.steps.map((s) => s.step).slice(0, 1)).toEqual(['read client']);
  });

  it('counts nothing when no client socket returned bytes', () => {
    const text = `100  1.000000 read(${upstream}, ""..., 65536) = 613\n100  1.000100 read(${client}, ""..., 65536) = -11`;
    expect(parseStraceTimeline(text, { gatewayPort: 8000, upstreamPort: 9000 }).requests).toBe(0);
  });
});
