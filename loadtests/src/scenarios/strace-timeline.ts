/**
 * Reads `strace -f -ttt -yy` output of a server answering one request at a time and averages where
 * each request's system calls fall, relative to the read of its request (gateway-c1-timeline.ts).
 * A request runs from a read of a client socket that returned bytes to the next write on a client
 * socket; every call between is named by what it did and which socket it touched (client, upstream,
 * another TCP peer by its port) and by its thread (main = the traced pid).
 */

export interface TimelineOptions {
  /** The server's listening port: sockets with it as their local port are clients. */
  readonly gatewayPort: number;
  /** The upstream's port: sockets to it are the upstream connection. */
  readonly upstreamPort: number;
  /** The main thread's id (the pid); other threads are marked. Default: the first tid seen. */
  readonly mainTid?: number;
}

export interface TimelineStep {
  /** What happened, e.g. `writev upstream`, `epoll_wait -> 1 (main)`; `#2` for its second time. */
  readonly step: string;
  /** Mean µs after the request's read, over the requests that had the step. */
  readonly meanUs: number;
  /** Share of requests that had it. */
  readonly share: number;
}

export interface Timeline {
  readonly requests: number;
  /** Mean µs from the request's read to its answer's write. */
  readonly meanInsideUs: number;
  /** Mean µs from the answer's write to the next request's read (the client's turn). */
  readonly meanOutsideUs: number;
  /** Mean system calls per request by kind (loop wake-ups included). */
  readonly callsPerRequest: Record<string, number>;
  readonly steps: TimelineStep[];
}

interface Call {
  readonly tid: number;
  readonly at: number;
  readonly name: string;
  readonly fd: string;
  readonly result: number;
}

const LINE = /^(\d+)\s+(\d+\.\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\((\d+<(?:->|[^>])*>)?)(.*)=\s*(-?\d+)/;
const TCP = /TCP:\[[\d.]+:(\d+)->[\d.]+:(\d+)\]/;

function parseCalls(text: string): Call[] {
  const calls: Call[] = [];
  const pendingFd = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (line.includes('<unfinished ...>')) {
      const m = /^(\d+)\s+\S+\s+\w+\((\d+<(?:->|[^>])*>)?/.exec(line);
      if (m !== null) pendingFd.set(Number(m[1]), m[2] ?? '');
      continue;
    }
    const m = LINE.exec(line);
    if (m === null) continue;
    const tid = Number(m[1]);
    const resumed = m[3] !== undefined;
    const fd = resumed ? (pendingFd.get(tid) ?? '') : (m[5] ?? '');
    calls.push({ tid, at: Number(m[2]) * 1e6, name: m[3] ?? m[4]!, fd, result: Number(m[7]) });
  }
  return calls;
}

function roleOf(fd: string, options: TimelineOptions): string {
  const tcp = TCP.exec(fd);
  if (tcp === null) return fd.includes('eventpoll') ? '' : 'other fd';
  // Either end: strace's order of the two addresses is not the same for accepted and dialled sockets.
  const ends = [Number(tcp[1]), Number(tcp[2])];
  if (ends.includes(options.gatewayPort)) return 'client';
  if (ends.includes(options.upstreamPort)) return 'upstream';
  return `tcp :${Math.min(...ends)}-${Math.max(...ends)}`;
}

export function parseStraceTimeline(text: string, options: TimelineOptions): Timeline {
  const calls = parseCalls(text);
  const mainTid = options.mainTid ?? calls[0]?.tid ?? 0;
  const sums = new Map<string, { total: number; count: number }>();
  const kinds = new Map<string, number>();
  let requests = 0;
  let inside = 0;
  let outside = 0;
  let outsideCount = 0;
  let start: number | undefined;
  let lastEnd: number | undefined;
  let seen = new Map<string, number>();
  for (const call of calls) {
    const role = roleOf(call.fd, options);
    const thread = call.tid === mainTid ? 'main' : 'thread';
    const isRequestRead = role === 'client' && (call.name === 'read' || call.name === 'readv' || call.name === 'recvfrom') && call.result > 0;
    if (start === undefined) {
      if (!isRequestRead) continue;
      start = call.at;
      seen = new Map();
      if (lastEnd !== undefined) {
        outside += start - lastEnd;
        outsideCount++;
      }
    }
    const what = call.name.startsWith('epoll') ? `${call.name} -> ${call.result > 0 ? 'events' : call.result} (${thread})` : `${call.name} ${role}${thread === 'main' ? '' : ' (thread)'}`;
    const nth = (seen.get(what) ?? 0) + 1;
    seen.set(what, nth);
    const step = nth === 1 ? what : `${what} #${nth}`;
    const sum = sums.get(step) ?? { total: 0, count: 0 };
    sum.total += call.at - start;
    sum.count++;
    sums.set(step, sum);
    kinds.set(what, (kinds.get(what) ?? 0) + 1);
    const isAnswer = role === 'client' && (call.name === 'write' || call.name === 'writev' || call.name === 'sendto');
    if (isAnswer) {
      requests++;
      inside += call.at - start;
      lastEnd = call.at;
      start = undefined;
    }
  }
  const per = requests === 0 ? 1 : requests;
  const steps = [...sums].map(([step, s]) => ({ step, meanUs: s.total / s.count, share: s.count / per })).filter((s) => s.share >= 0.05);
  steps.sort((a, b) => a.meanUs - b.meanUs);
  const callsPerRequest: Record<string, number> = {};
  for (const [kind, count] of kinds) callsPerRequest[kind] = count / per;
  return { requests, meanInsideUs: inside / per, meanOutsideUs: outsideCount === 0 ? 0 : outside / outsideCount, callsPerRequest, steps };
}

export function timelineTable(t: Timeline): string {
  const lines = [
    `${t.requests} requests; request read -> answer written: ${t.meanInsideUs.toFixed(0)} µs mean; answer -> next request: ${t.meanOutsideUs.toFixed(0)} µs`,
    '',
    '| step (after the request read) | mean µs | share of requests |',
    '| --- | --- | --- |',
  ];
  for (const s of t.steps) lines.push(`| ${s.step} | ${s.meanUs.toFixed(0)} | ${(s.share * 100).toFixed(0)}% |`);
  return lines.join('\n');
}
