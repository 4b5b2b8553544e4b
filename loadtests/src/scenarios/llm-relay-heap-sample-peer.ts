/**
 * llm-relay-heap-sample.ts's peers in a worker thread (their own isolate, out of the sampled profile):
 * a node's LLM route over cleartext HTTP/2 that streams `tokens` OpenAI completion events of the engine
 * double's shape, one every `itlMs`, then `data: [DONE]`; and the clients, `concurrency` keep-alive
 * HTTP/1.1 connections to the relay, each reading a stream to its chunked end before asking for the next.
 * Messages: `{ h2Port }` once listening; then each number received is a count of streams to run, answered
 * with `{ done: tokens }` (0 ends the worker).
 */
import { createServer as createH2Server } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

interface PeerData {
  readonly relayPort: number;
  readonly concurrency: number;
  readonly tokens: number;
  readonly itlMs: number;
}

const { relayPort, concurrency, tokens, itlMs } = workerData as PeerData;
const EVENT = Buffer.from('data: {"id":"cmpl-x","object":"text_completion","created":1764200000,"model":"llm_engine","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}\n\n');
const DONE = Buffer.from('data: [DONE]\n\n');
const END = Buffer.from('0\r\n\r\n');

const h2 = createH2Server();
h2.on('stream', (stream) => {
  stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
  let sent = 0;
  const timer = setInterval(() => {
    if (sent >= tokens) {
      clearInterval(timer);
      stream.end(DONE);
      return;
    }
    stream.write(EVENT);
    sent += 1;
  }, itlMs);
  stream.on('close', () => clearInterval(timer));
});
await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
parentPort!.postMessage({ h2Port: (h2.address() as { port: number }).port });

const REQUEST = Buffer.from(
  `POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`,
);

/** One keep-alive connection running streams one after the other while `take()` grants one. */
async function connection(take: () => boolean): Promise<void> {
  const socket: Socket = connect({ host: '127.0.0.1', port: relayPort, noDelay: true });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let tail = Buffer.alloc(0);
  let onEnd: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    // Only the chunked body's last 5 bytes matter: a stream ends with `0\r\n\r\n`.
    tail = Buffer.concat([tail, chunk]).subarray(-END.length);
    if (tail.equals(END)) onEnd?.();
  });
  while (take()) {
    await new Promise<void>((resolve) => {
      onEnd = resolve;
      socket.write(REQUEST);
    });
  }
  socket.destroy();
}

parentPort!.on('message', (streams: number) => {
  if (streams === 0) {
    h2.close();
    parentPort!.close();
    return;
  }
  let left = streams;
  const take = (): boolean => left-- > 0;
  void Promise.all(Array.from({ length: concurrency }, () => connection(take))).then(() => parentPort!.postMessage({ done: streams * tokens }));
});
