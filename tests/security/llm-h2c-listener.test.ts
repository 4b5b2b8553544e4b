/**
 * The node's LLM routes over cleartext HTTP/2 (--llm-h2c-port, gpu-node/src/server/http/llm-h2c-server.ts)
 * are a second door to the same routes: it must refuse what the HTTP port refuses (restricted APIs,
 * malformed bodies, unknown models, unsupported parameters), serve nothing but the LLM routes, and bound
 * the streams one session may open, even for a client that ignores the advertised setting.
 */
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmRepository, type LlmRepository } from '../../gpu-node/test/llm/support.js';
import { removeDir } from '../../gpu-node/test/support.js';
import { startNodeProcess, type NodeProcess } from './support/node-process.js';

const MAX_STREAMS = 4;
const RESTRICTION = ['--http-restricted-api', 'inference:x-llm-key=open-sesame'];
const KEY = { 'x-llm-key': 'open-sesame' };

let node: NodeProcess;
let repo: LlmRepository;
let h2Port: number;
let session: ClientHttp2Session;

beforeAll(async () => {
  repo = await llmRepository({ contextLength: 64 });
  node = await startNodeProcess(repo.dir, ['--llm-h2c-port', '0', '--llm-h2c-max-streams', String(MAX_STREAMS), ...RESTRICTION]);
  h2Port = node.logs.find((line) => line.msg === 'tessera-node started')!.llmH2cPort as number;
  session = h2connect(`http://127.0.0.1:${h2Port}`);
}, 60_000);

afterAll(async () => {
  session?.destroy();
  await node?.stop();
  await removeDir(repo?.dir);
});

async function overH2(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const stream = session.request({ ':method': method, ':path': path, 'content-type': 'application/json', ...headers }, { endStream: body === undefined });
  if (body !== undefined) stream.end(body);
  const status = await new Promise<number>((resolve, reject) => {
    stream.once('response', (h) => resolve(Number(h[':status'])));
    stream.once('error', reject);
  });
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return { status, text };
}

async function overHttp1(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(`${node.http}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body }) });
  return { status: res.status, text: await res.text() };
}

const chat = (extra: Record<string, unknown>): string => JSON.stringify({ model: 'token_stream', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('the node\'s LLM HTTP/2 port refuses what its HTTP port refuses', () => {
  const cases: [string, string, string, string | undefined, Record<string, string>][] = [
    ['no restricted-API header', 'POST', '/v1/chat/completions', chat({}), {}],
    ['a wrong restricted-API value', 'POST', '/v1/completions', JSON.stringify({ model: 'token_stream', prompt: 'x' }), { 'x-llm-key': 'guess' }],
    ['malformed JSON', 'POST', '/v1/chat/completions', '{"model": "token_stream", "messages": [', KEY],
    ['n > 1', 'POST', '/v1/chat/completions', chat({ n: 2 }), KEY],
    ['negative max_tokens', 'POST', '/v1/chat/completions', chat({ max_tokens: -1 }), KEY],
    ['an unknown model', 'POST', '/v1/completions', JSON.stringify({ model: 'no_such_model', prompt: 'x' }), KEY],
    ['a prompt over the context length', 'POST', '/v1/completions', JSON.stringify({ model: 'token_stream', prompt: 'w '.repeat(500) }), KEY],
    ['generate on an unknown model', 'POST', '/v2/models/no_such_model/generate_stream', JSON.stringify({ text_input: 'x' }), KEY],
  ];
  for (const [what, method, path, body, headers] of cases) {
    it(`${what}: the same 4xx status and body over both`, async () => {
      const [h1, h2] = [await overHttp1(method, path, body, headers), await overH2(method, path, body, headers)];
      expect(h1.status).toBeGreaterThanOrEqual(400);
      expect(h1.status).toBeLessThan(500);
      expect(h2.status).toBe(h1.status);
      expect(h2.text.replace(/"(id|created)":[^,}]+/g, '')).toBe(h1.text.replace(/"(id|created)":[^,}]+/g, ''));
    });
  }

  it('serves the LLM routes themselves (a streamed completion ends with [DONE])', async () => {
    const { status, text } = await overH2('POST', '/v1/completions', JSON.stringify({ model: 'token_stream', prompt: 'a b c', stream: true }), KEY);
    expect(status).toBe(200);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  const others: [string, string][] = [['GET', '/v2/health/ready'], ['POST', '/v2/models/token_stream/infer'], ['POST', '/v2/repository/index'], ['GET', '/v2'], ['GET', '/v2/models/token_stream/stats']];
  for (const [method, path] of others) {
    it(`answers 404 for a non-LLM route (${method} ${path}), which the HTTP port serves`, async () => {
      const { status } = await overH2(method, path, method === 'POST' ? '{}' : undefined, KEY);
      expect(status).toBe(404);
    });
  }
});

/** HEADERS frames written by hand: a client that ignores SETTINGS_MAX_CONCURRENT_STREAMS. */
function headersFrame(streamId: number, port: number): Buffer {
  const literal = (index: number, value: string): Buffer => Buffer.concat([Buffer.from([index, value.length]), Buffer.from(value)]);
  // Static-table entries: :method POST (3), :scheme http (6); :path (4) and :authority (1) as literals.
  const block = Buffer.concat([Buffer.from([0x83, 0x86]), literal(0x04, '/v1/completions'), literal(0x01, `127.0.0.1:${port}`)]);
  const header = Buffer.alloc(9);
  header.writeUIntBE(block.length, 0, 3);
  header[3] = 0x1; // HEADERS
  header[4] = 0x4; // END_HEADERS, not END_STREAM: each stream stays open waiting for its body
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, block]);
}

describe('a flood of streams on one HTTP/2 session', () => {
  it(`is bounded by --llm-h2c-max-streams: streams past ${MAX_STREAMS} open at once are refused`, async () => {
    const socket = netConnect(h2Port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const streams = 3 * MAX_STREAMS;
    const settings = Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
    const frames: Buffer[] = [Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), settings];
    for (let i = 0; i < streams; i++) frames.push(headersFrame(1 + 2 * i, h2Port));
    socket.write(Buffer.concat(frames));

    // Read frames until every stream past the bound was reset (or the session was ended with GOAWAY).
    const refused = new Set<number>();
    let goaway = false;
    let buffered: Buffer = Buffer.alloc(0);
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 9) {
          const length = buffered.readUIntBE(0, 3);
          if (buffered.length < 9 + length) break;
          const type = buffered[3];
          const id = buffered.readUInt32BE(5) & 0x7fffffff;
          if (type === 0x3 && length === 4 && buffered.readUInt32BE(9) === 0x7) refused.add(id); // RST_STREAM REFUSED_STREAM
          if (type === 0x7) goaway = true;
          buffered = buffered.subarray(9 + length);
        }
        if (refused.size >= streams - MAX_STREAMS || goaway) resolve();
      });
    });
    socket.destroy();
    // Either each excess stream was refused on its own, or the session was ended for the violation;
    // never more than the bound served at once.
    if (!goaway) {
      // Exactly the streams past the bound (ids 2 * MAX_STREAMS + 1 and on) were refused.
      expect([...refused].sort((x, y) => x - y)).toEqual(Array.from({ length: streams - MAX_STREAMS }, (_, i) => 2 * MAX_STREAMS + 1 + 2 * i));
    }
    // The node still serves afterwards.
    const { status } = await overH2('POST', '/v1/completions', JSON.stringify({ model: 'token_stream', prompt: 'x' }), KEY);
    expect(status).toBe(200);
  });
});
