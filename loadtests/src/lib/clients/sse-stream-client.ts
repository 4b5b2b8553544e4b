/**
 * A closed-loop load of streamed completions: `concurrency` clients, each sending `POST <path>` with
 * `stream: true` and reading the Server-Sent Events to the end before sending the next, for a window.
 * Per stream it records the time to the first event (TTFT) and the gaps between events as they reach
 * the socket (inter-token latency; events that arrive in one read count a 0 gap, which is what a
 * client sees). One token per event is assumed (the bench's engine double sends one per chunk);
 * `data: [DONE]` is not a token.
 *
 * `staggerMs`: client i starts its first stream i/concurrency of that later. Streams of equal length
 * otherwise all start together, and keep doing so as each client restarts when its stream ends: a
 * closed loop's TTFT is then the TTFT of a burst of simultaneous starts.
 */
import { Agent, request } from 'node:http';

export interface StreamLoadOptions {
  readonly port: number;
  readonly path: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly concurrency: number;
  readonly durationMs: number;
  /** Spread the clients' first starts evenly over this long; default 0 (all at once). */
  readonly staggerMs?: number;
  /** Each client stops after this many streams even inside the window; default no limit. */
  readonly streamsPerClient?: number;
}

export interface StreamLoadResult {
  readonly streams: number;
  readonly failedStreams: number;
  /** The first few failures' messages (status or socket error), to say why streams failed. */
  readonly failures: readonly string[];
  readonly tokens: number;
  readonly ttftUs: number[];
  /** TTFT of each client's first stream: the starts right after the idle spell before the window. */
  readonly firstTtftUs: number[];
  readonly itlUs: number[];
  readonly elapsedMs: number;
  /** Reads of answer bytes (one per `data` event), over all streams: about the writes the server made. */
  readonly reads: number;
}

const DONE = 'data: [DONE]';

function streamOnce(agent: Agent, options: StreamLoadOptions, result: { ttftUs: number[]; itlUs: number[]; firstTtftUs: number[]; reads: number }, first: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let last = 0n;
    let tokens = 0;
    let tail = '';
    const req = request(
      { host: '127.0.0.1', port: options.port, method: 'POST', path: options.path, agent, headers: { 'content-type': 'application/json', ...options.headers } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`HTTP ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const now = process.hrtime.bigint();
          result.reads += 1;
          const events = (tail + text).split('\n\n');
          tail = events.pop() ?? '';
          for (const event of events) {
            if (event === '' || event.startsWith(DONE)) continue;
            if (tokens === 0) {
              result.ttftUs.push(Number(now - start) / 1000);
              if (first) result.firstTtftUs.push(Number(now - start) / 1000);
            }
            else result.itlUs.push(Number(now - last) / 1000);
            last = now;
            tokens += 1;
          }
        });
        res.on('end', () => resolve(tokens));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export async function runStreamLoad(options: StreamLoadOptions): Promise<StreamLoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const samples = { ttftUs: [] as number[], itlUs: [] as number[], firstTtftUs: [] as number[], reads: 0 };
  let streams = 0;
  let failedStreams = 0;
  const failures: string[] = [];
  let tokens = 0;
  const started = performance.now();
  const end = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, client) => {
      const delayMs = ((options.staggerMs ?? 0) * client) / options.concurrency;
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      let first = true;
      let sent = 0;
      while (performance.now() < end && sent++ < (options.streamsPerClient ?? Infinity)) {
        try {
          // Read after the await: `tokens += await ...` would add to a total read before it, losing updates.
          const streamed = await streamOnce(agent, options, samples, first);
          first = false;
          tokens += streamed;
          streams += 1;
        } catch (error) {
          failedStreams += 1;
          if (failures.length < 5) failures.push(error instanceof Error ? error.message : String(error));
        }
      }
    }),
  );
  agent.destroy();
  return { streams, failedStreams, failures, tokens, ...samples, elapsedMs: performance.now() - started };
}
