/**
 * The LLM streams' native path (native-llm.ts, native-sse.ts) against the Hono routes it stands in for,
 * byte for byte: the same node core answers through its own HTTP server (native) and through a second
 * node:http server running the Hono app alone (@hono/node-server, the path before), each read off a raw
 * socket. Status line, headers (but Date) and the de-chunked body must be identical, over random tokens
 * holding quotes, backslashes, control characters, non-ASCII text, emoji and UTF-8 split mid-character,
 * for generate_stream, /v1/completions and /v1/chat/completions, streamed or not, and for errors.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/example-models/prng.js';
import { createHttpServer } from '../../src/server/http/http-server.js';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { llmRepository, writeDecoupledScriptModel, type LlmRepository } from './support.js';

let node: TestNode;
let repo: LlmRepository;
let honoServer: Server;
let honoPort: number;

/** A decoupled model with the vLLM-style I/O that streams back, one response each, the base64 byte strings its prompt lists. */
async function writeEchoBytes(dir: string): Promise<void> {
  const input = (name: string, type: string, optional: boolean) => `  { name: "${name}" data_type: ${type} dims: [ 1 ]${optional ? ' optional: true' : ''} }`;
  await writeDecoupledScriptModel(dir, 'echo_bytes', {
    io: [
      'input [',
      [input('text_input', 'TYPE_STRING', false), input('stream', 'TYPE_BOOL', true), input('sampling_parameters', 'TYPE_STRING', true), input('exclude_input_in_output', 'TYPE_BOOL', true)].join(',\n'),
      ']',
      'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]',
      'parameters { key: "tokenizer" value: { string_value: "gpt-tokenizer:cl100k_base" } }',
    ],
    model: [
      'export async function execute(requests) {',
      '  for (const { sender, inputs } of requests) {',
      '    const pieces = JSON.parse(new TextDecoder().decode(inputs.text_input.data[0]));',
      '    for (const piece of pieces) {',
      "      sender.send({ outputs: { text_output: { datatype: 'BYTES', shape: [1], data: [new Uint8Array(Buffer.from(piece, 'base64'))] } } });",
      '      await new Promise((resolve) => setImmediate(resolve));',
      '    }',
      '    sender.close();',
      '  }',
      '}',
    ],
  });
}

beforeAll(async () => {
  repo = await llmRepository();
  await writeEchoBytes(repo.dir);
  node = await startTestNode(repo.dir);
  // The path before: the same core behind the Hono app alone, served by @hono/node-server.
  const { app } = createHttpServer(node.core);
  honoServer = createServer(getRequestListener(app.fetch));
  await new Promise<void>((resolve) => honoServer.listen(0, '127.0.0.1', resolve));
  honoPort = (honoServer.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => honoServer?.close(resolve));
  await node?.stop();
  await removeDir(repo?.dir);
});

interface RawAnswer {
  readonly head: string;
  readonly body: Buffer;
}

/** One request on a fresh connection, read to its end: the head as sent (Date removed), the body de-chunked. */
function rawPost(port: number, path: string, body: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      const rest = all.subarray(split + 4);
      const headers = head.split('\r\n');
      const chunked = headers.some((h) => h.toLowerCase() === 'transfer-encoding: chunked');
      resolve({ head: headers.filter((h) => !h.toLowerCase().startsWith('date:')).join('\r\n'), body: chunked ? dechunk(rest) : rest });
    });
    const bytes = Buffer.from(body);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`);
    socket.write(bytes);
  });
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const line = data.indexOf('\r\n', offset);
    const size = parseInt(data.subarray(offset, line).toString('latin1'), 16);
    if (size === 0) break;
    parts.push(data.subarray(line + 2, line + 2 + size));
    offset = line + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** Ids and timestamps are per request: the same placeholder on both sides. */
function normalized(answer: RawAnswer): RawAnswer {
  const text = answer.body.toString('latin1').replace(/"(cmpl|chatcmpl)-[0-9a-f-]{36}"/g, '"$1-ID"').replace(/"created":\d+/g, '"created":0');
  const body = Buffer.from(text, 'latin1');
  return { head: answer.head.replace(/Content-Length: \d+/i, `Content-Length: ${body.length}`), body };
}

const PIECES = ['"', '\\', '\\"', '\u0000', '\u0001', '\u001f', '\n', '\r\n', '\t', '\u007f', '\u2028', '\u2029', 'é', 'ü', '日本', '😀', '</script>', 'a', ' word', '{"x":1}', '\ud800'];

/** Random tokens as byte strings: pieces joined, and some cut mid-character (split UTF-8). */
function randomTokens(seed: number, count: number): string[] {
  const random = mulberry32(seed);
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = '';
    const n = 1 + Math.floor(random() * 3);
    for (let j = 0; j < n; j++) text += PIECES[Math.floor(random() * PIECES.length)];
    let bytes = Buffer.from(text);
    if (random() < 0.25 && bytes.length > 1) bytes = bytes.subarray(0, 1 + Math.floor(random() * (bytes.length - 1)));
    tokens.push(bytes.toString('base64'));
  }
  return tokens;
}

async function expectSame(path: string, body: unknown): Promise<RawAnswer> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const native = normalized(await rawPost(node.httpPort as number, path, text));
  const hono = normalized(await rawPost(honoPort, path, text));
  expect(native.head).toBe(hono.head);
  expect(native.body.equals(hono.body)).toBe(true);
  return native;
}

describe('native SSE path: the same bytes as the Hono routes', () => {
  it('generate_stream over random tokens, split UTF-8 included (an invalid one ends the stream with an error event)', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const tokens = randomTokens(seed, 24);
      const answer = await expectSame('/v2/models/echo_bytes/generate_stream', { text_input: JSON.stringify(tokens) });
      expect(answer.head).toContain('text/event-stream');
      expect(answer.body.toString()).toContain('data: {"model_name":"echo_bytes","model_version":"1","text_output":');
    }
    // Only valid tokens: every event is a token's, none an error.
    const valid = Array.from({ length: 40 }, (_, i) => Buffer.from(PIECES[i % (PIECES.length - 1)] as string).toString('base64'));
    const whole = await expectSame('/v2/models/echo_bytes/versions/1/generate_stream', { text_input: JSON.stringify(valid) });
    const events = whole.body.toString().split('\n\n').filter((e) => e.startsWith('data: '));
    // Each event is the object JSON.stringify made before, carrying its token's text exactly.
    for (const [i, event] of events.entries()) {
      const json = event.slice('data: '.length);
      expect(JSON.stringify(JSON.parse(json))).toBe(json);
      expect(JSON.parse(json)).toEqual({ model_name: 'echo_bytes', model_version: '1', text_output: Buffer.from(valid[i] as string, 'base64').toString() });
    }
    expect(events.length).toBe(40);
  });

  it('/v1/completions and /v1/chat/completions, streamed (with usage) and not', async () => {
    for (let seed = 20; seed <= 25; seed++) {
      const prompt = JSON.stringify(randomTokens(seed, 16));
      const streamed = await expectSame('/v1/completions', { model: 'echo_bytes', prompt, stream: true, stream_options: { include_usage: true } });
      expect(streamed.body.toString().endsWith('data: [DONE]\n\n')).toBe(true);
      await expectSame('/v1/completions', { model: 'echo_bytes', prompt, max_tokens: 64 });
    }
    // A chat prompt goes through the template, so the echo model cannot parse it: the error, as an event or an answer.
    const chat = { model: 'echo_bytes', messages: [{ role: 'user', content: 'hi "there" \\ é' }] };
    await expectSame('/v1/chat/completions', { ...chat, stream: true });
    await expectSame('/v1/chat/completions', chat);
  });

  it('chat chunks over random tokens: the prompt is the template of one message holding the token list', async () => {
    // token_stream echoes the prompt's words, so its chat chunks carry the template text around them.
    const content = Buffer.from(randomTokens(31, 30).join(' '), 'base64').toString('latin1') + ' "q" \\ \u0001 é 😀';
    const answer = await expectSame('/v1/chat/completions', { model: 'token_stream', messages: [{ role: 'user', content }], stream: true });
    expect(answer.body.toString()).toContain('"delta":{"content":');
  });

  it('a stream without any event (a model that generates nothing): the same empty answer', async () => {
    const empty = await expectSame('/v2/models/token_stream/generate_stream', { text_input: 'a b', stream: true, sampling_parameters: JSON.stringify({ max_tokens: 0 }) });
    expect(empty.head).toMatch(/^HTTP\/1.1 200 OK/);
    expect(empty.body.length).toBe(0);
    await expectSame('/v2/models/echo_bytes/generate_stream', { text_input: '[]' });
  });

  it('errors before the stream: the same status, headers and body', async () => {
    await expectSame('/v2/models/echo_bytes/generate_stream', '{"text_input": ');
    await expectSame('/v2/models/echo_bytes/generate_stream', '["x"]');
    await expectSame('/v2/models/nope/generate_stream', { text_input: 'x' });
    await expectSame('/v2/models/echo_bytes/versions/7/generate_stream', { text_input: 'x' });
    await expectSame('/v1/completions', '{"model": ');
    await expectSame('/v1/completions', { model: 'nope', prompt: 'x', stream: true });
    await expectSame('/v1/chat/completions', { model: 'echo_bytes', messages: [], stream: true });
    await expectSame('/v1/completions', { model: 'echo_bytes', prompt: 'x', n: 2, stream: true });
  });
});
