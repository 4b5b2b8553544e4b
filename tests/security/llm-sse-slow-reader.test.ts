/**
 * A client that opens an LLM stream and never reads it must not make the node buffer without bound:
 * on the native SSE path (native-sse.ts), over HTTP/1.1 (the HTTP port) and HTTP/2 (the h2c LLM port),
 * once MAX_BUFFERED_EVENT_BYTES wait for the client the stream is cut and the model sees its request
 * cancelled long before it has produced everything it was asked for. Real node, real sockets; the model
 * is a decoupled TypeScript model streaming 64 KiB tokens as fast as it may. And a client that resets
 * its HTTP/2 stream mid-stream stops the model, as a closed HTTP/1.1 connection does.
 */
import { readFile } from 'node:fs/promises';
import { connect as h2connect, constants } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BUFFERED_EVENT_BYTES } from '../../gpu-node/src/server/http/sse.js';
import { eventually, llmRepository, longPrompt, writeDecoupledScriptModel, type LlmRepository } from '../../gpu-node/test/llm/support.js';
import { removeDir, startTestNode, type TestNode } from '../../gpu-node/test/support.js';

const TOKEN_BYTES = 64 * 1024;
/** Four times the bound: a stream that is not cut delivers them all. */
const TOKENS = (4 * MAX_BUFFERED_EVENT_BYTES) / TOKEN_BYTES;

let node: TestNode;
let repo: LlmRepository;
let log: string;

async function writeFlood(dir: string, cancelLog: string): Promise<void> {
  await writeDecoupledScriptModel(dir, 'flood', {
    io: [
      'input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]',
      'output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]',
    ],
    model: [
      "import { appendFileSync } from 'node:fs';",
      `const token = 'x'.repeat(${TOKEN_BYTES});`,
      'export async function execute(requests) {',
      '  for (const { sender, signal } of requests) {',
      '    let sent = 0;',
      `    while (sent < ${TOKENS} && !signal.aborted) {`,
      "      sender.send({ outputs: { text_output: { datatype: 'BYTES', shape: [1], data: [token] } } });",
      '      sent += 1;',
      '      await new Promise((resolve) => setTimeout(resolve, 1));',
      '    }',
      `    appendFileSync(${JSON.stringify(cancelLog)}, (signal.aborted ? 'cancelled ' : 'finished ') + sent + '\\n');`,
      '    sender.close();',
      '  }',
      '}',
    ],
  });
}

beforeAll(async () => {
  repo = await llmRepository();
  log = join(repo.dir, 'flood.log');
  await writeFlood(repo.dir, log);
  node = await startTestNode(repo.dir, ['--llm-h2c-port', '0']);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

async function outcomes(): Promise<string[]> {
  return (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
}

/** Waits for the model's next outcome line and returns it. */
async function nextOutcome(seen: number): Promise<string> {
  expect(await eventually(async () => (await outcomes()).length > seen, 60_000)).toBe(true);
  return (await outcomes())[seen] as string;
}

describe('a client that does not read an LLM stream', () => {
  it('over HTTP/1.1 is cut past the bound and the model sees the cancellation', async () => {
    const seen = (await outcomes()).length;
    const socket: Socket = connect(node.httpPort as number, '127.0.0.1');
    const body = JSON.stringify({ text_input: 'go' });
    socket.write(`POST /v2/models/flood/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const outcome = await nextOutcome(seen);
    expect(outcome).toMatch(/^cancelled \d+$/);
    // Cut well before the end: the bound plus what the kernel's socket buffers held.
    expect(Number(outcome.split(' ')[1])).toBeLessThan(TOKENS);
    socket.resume();
    await closed;
  });

  it('over HTTP/2 (h2c LLM port) likewise: the stream is reset, the session lives on', async () => {
    const seen = (await outcomes()).length;
    const session = h2connect(`http://127.0.0.1:${node.llmH2cPort as number}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/v2/models/flood/generate_stream', 'content-type': 'application/json' });
      stream.end(JSON.stringify({ text_input: 'go' }));
      stream.pause();
      const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
      stream.on('error', () => undefined);
      const outcome = await nextOutcome(seen);
      expect(outcome).toMatch(/^cancelled \d+$/);
      expect(Number(outcome.split(' ')[1])).toBeLessThan(TOKENS);
      stream.resume();
      await closed;
      // The same session still serves a request.
      const next = session.request({ ':method': 'POST', ':path': '/v1/completions', 'content-type': 'application/json' });
      next.end(JSON.stringify({ model: 'token_stream', prompt: 'a b', max_tokens: 2 }));
      const status = await new Promise<number>((resolve) => next.once('response', (h) => resolve(Number(h[':status']))));
      next.resume();
      expect(status).toBe(200);
    } finally {
      session.destroy();
    }
  });

  it('resetting its HTTP/2 stream mid-stream (what the gateway does for a client gone) cancels the model', async () => {
    const before = (await repo.cancellations()).length;
    const session = h2connect(`http://127.0.0.1:${node.llmH2cPort as number}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/v1/completions', 'content-type': 'application/json' });
      stream.end(JSON.stringify({ model: 'token_stream', prompt: longPrompt(1000), stream: true }));
      stream.on('error', () => undefined);
      let chunks = 0;
      stream.on('data', () => {
        chunks += 1;
        if (chunks === 3) stream.close(constants.NGHTTP2_CANCEL);
      });
      expect(await eventually(async () => (await repo.cancellations()).length > before)).toBe(true);
      expect(Number(/cancelled (\d+)/.exec((await repo.cancellations()).at(-1) as string)?.[1])).toBeLessThan(1000);
    } finally {
      session.destroy();
    }
  });
});
