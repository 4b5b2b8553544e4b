/**
 * The node's stream interval (config `stream_interval`, held-events.ts) on a real node: the client gets
 * the same bytes at interval 4 as at interval 1, only in fewer writes (HTTP/1.1 chunks, one per write),
 * on the native path and on the Hono path; the first event is not held; the hold time writes a group
 * that does not fill; a client leaving mid-group cancels the model. The models are one decoupled
 * script that streams the tokens its prompt lists and, before token i, waits for a file to exist, so
 * each test orders the model's steps against what the client has seen instead of against time.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkedPost } from '../../../shared/test/support/index.js';
import { createHttpServer } from '../../src/server/http/http-server.js';
import { removeDir, startTestNode, type TestNode } from '../support.js';
import { eventually, llmRepository, writeDecoupledScriptModel, type LlmRepository } from './support.js';

let node: TestNode;
let repo: LlmRepository;
let honoServer: Server;
let honoPort: number;

const MODELS: Record<string, readonly string[]> = {
  relay_i1: ['parameters { key: "stream_interval" value: { string_value: "1" } }'],
  relay_i4: ['parameters { key: "stream_interval" value: { string_value: "4" } }', 'parameters { key: "stream_interval_ms" value: { string_value: "10000" } }'],
  relay_slow: ['parameters { key: "stream_interval" value: { string_value: "8" } }', 'parameters { key: "stream_interval_ms" value: { string_value: "30" } }'],
};

async function writeRelay(dir: string, name: string, parameters: readonly string[]): Promise<void> {
  const input = (n: string, type: string, optional: boolean) => `  { name: "${n}" data_type: ${type} dims: [ 1 ]${optional ? ' optional: true' : ''} }`;
  await writeDecoupledScriptModel(dir, name, {
    io: [
      'input [',
      [input('text_input', 'TYPE_STRING', false), input('stream', 'TYPE_BOOL', true), input('sampling_parameters', 'TYPE_STRING', true), input('exclude_input_in_output', 'TYPE_BOOL', true)].join(',\n'),
      ']',
      'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]',
      'parameters { key: "tokenizer" value: { string_value: "gpt-tokenizer:cl100k_base" } }',
      ...parameters,
    ],
    model: [
      "import { appendFileSync, existsSync } from 'node:fs';",
      'export async function execute(requests) {',
      '  for (const { sender, inputs, signal } of requests) {',
      '    const prompt = new TextDecoder().decode(inputs.text_input.data[0]);',
      // A chat prompt has the template around the JSON.
      "    const spec = JSON.parse(prompt.slice(prompt.indexOf('{'), prompt.lastIndexOf('}') + 1));",
      '    for (let i = 0; i < spec.tokens.length && !signal.aborted; i++) {',
      '      const file = spec.waitBefore?.[i];',
      '      while (file !== undefined && !existsSync(file) && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 5));',
      '      if (signal.aborted) break;',
      "      sender.send({ outputs: { text_output: { datatype: 'BYTES', shape: [1], data: [new TextEncoder().encode(spec.tokens[i])] } } });",
      '      await new Promise((resolve) => setImmediate(resolve));',
      '    }',
      "    if (signal.aborted && spec.cancelLog) appendFileSync(spec.cancelLog, 'cancelled\\n');",
      '    sender.close();',
      '  }',
      '}',
    ],
  });
}

beforeAll(async () => {
  repo = await llmRepository();
  for (const [name, parameters] of Object.entries(MODELS)) await writeRelay(repo.dir, name, parameters);
  node = await startTestNode(repo.dir);
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

/** One request on a fresh connection, read to its end: the body's HTTP/1.1 chunks, one per write of the node. */
const chunksOf = async (port: number, path: string, body: string): Promise<string[]> => (await chunkedPost(port, path, body)).chunks;

const eventCount = (text: string): number => text.split('\n\n').length - 1;
/** Ids, timestamps and the model's name differ between the two requests: the same placeholder on both sides. */
const normalized = (text: string): string =>
  text.replace(/"(cmpl|chatcmpl)-[0-9a-f-]{36}"/g, '"$1-ID"').replace(/"created":\d+/g, '"created":0').replace(/relay_i[14]/g, 'MODEL');

const TOKENS = ['Hello', ' "wor\\ld"', ' é', ' 日本', ' 😀', '\n', ' a', ' b', ' c', ' d'];

function routes(model: string, spec: unknown): [string, string][] {
  const prompt = JSON.stringify(spec);
  return [
    [`/v2/models/${model}/generate_stream`, JSON.stringify({ text_input: prompt })],
    ['/v1/completions', JSON.stringify({ model, prompt, stream: true, stream_options: { include_usage: true } })],
    ['/v1/chat/completions', JSON.stringify({ model, messages: [{ role: 'user', content: prompt }], stream: true })],
  ];
}

/** Streams until `until` holds for the text received so far, then runs `then`; resolves with all the text at the end. */
function streamWhile(path: string, body: string, until: (text: string) => boolean, then: () => Promise<void> | void): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let acted = false;
    const req = request({ host: '127.0.0.1', port: node.httpPort, method: 'POST', path, headers: { 'content-type': 'application/json' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (part: string) => {
        text += part;
        if (!acted && until(text)) {
          acted = true;
          void Promise.resolve(then()).catch(reject);
        }
      });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('stream interval on a real node', () => {
  it('interval 4 sends the bytes of interval 1 in fewer writes: the first event alone, then groups of 4, the rest at the end', async () => {
    for (const port of [node.httpPort as number, honoPort]) {
      const one = routes('relay_i1', { tokens: TOKENS });
      const four = routes('relay_i4', { tokens: TOKENS });
      for (let r = 0; r < one.length; r++) {
        const [path1, body1] = one[r] as [string, string];
        const [path4, body4] = four[r] as [string, string];
        const each = await chunksOf(port, path1, body1);
        const grouped = await chunksOf(port, path4, body4);
        expect(normalized(grouped.join(''))).toBe(normalized(each.join('')));
        // Interval 1: one event per write, as before.
        expect(each.every((c) => eventCount(c) === 1)).toBe(true);
        const total = eventCount(each.join(''));
        // Interval 4: the first token's events alone (a chat's role chunk and first piece: two writes),
        // then full groups of 4 events while the model streams; the last write carries what waited
        // when the stream ended, ends included.
        const leading = path1.includes('chat') ? 2 : 1;
        for (const c of grouped.slice(0, leading)) expect(eventCount(c)).toBe(1);
        for (const c of grouped.slice(leading, -1)) expect(eventCount(c)).toBe(4);
        expect(eventCount(grouped.at(-1) as string)).toBeLessThanOrEqual(4 + 3);
        expect(grouped.length).toBeLessThan(each.length / 2);
        expect(grouped.reduce((n, c) => n + eventCount(c), 0)).toBe(total);
      }
    }
  }, 60_000);

  it("the first token's events are written before the model makes the second token (a chat's role chunk and first piece both)", async () => {
    const [generate, completion, chat] = routes('relay_i4', { tokens: ['one', 'two', 'three'], waitBefore: { 1: join(repo.dir, 'first-go') } }) as [[string, string], [string, string], [string, string]];
    // The client lets the model go on only once it has the first token: held, each stream would wait for the
    // 10 s hold time, so the three take 30 s and the 15 s bound below fails the test (the chunk test above and
    // held-events.test.ts check the first writes themselves).
    for (const [[path, body], firstEvents, go] of [
      [generate, 1, 'go-generate'],
      [completion, 1, 'go-completion'],
      [chat, 2, 'go-chat'],
    ] as const) {
      const file = join(repo.dir, go);
      const text = await streamWhile(path, body.replace('first-go', go), (t) => eventCount(t) >= firstEvents, () => writeFile(file, ''));
      expect(text).toContain('one');
      expect(text).toContain('three');
    }
  }, 15_000);

  it('the hold time writes a group that does not fill before the model goes on', async () => {
    const go = join(repo.dir, 'slow-go');
    const [path, body] = routes('relay_slow', { tokens: ['t1', 't2', 't3', 't4'], waitBefore: { 3: go } })[0] as [string, string];
    // Interval 8: t2 and t3 are held; only the 30 ms hold sends them while the model waits for the file.
    const text = await streamWhile(path, body, (t) => eventCount(t) >= 3, () => writeFile(go, ''));
    expect(eventCount(text)).toBe(4);
  }, 30_000);

  it('a client that leaves while events are held cancels the model; the node goes on serving', async () => {
    const cancelLog = join(repo.dir, 'interval-cancel.log');
    const never = join(repo.dir, 'never-created');
    const [path, body] = routes('relay_i4', { tokens: ['a', 'b', 'c', 'd'], waitBefore: { 3: never }, cancelLog })[0] as [string, string];
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: node.httpPort, method: 'POST', path, headers: { 'content-type': 'application/json' } }, (res) => {
        res.on('data', () => {
          // The first event came; b and c wait in the group: leave now.
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.on('close', () => resolve());
      req.end(body);
      setTimeout(() => reject(new Error('no first event')), 20_000).unref();
    });
    expect(await eventually(async () => existsSync(cancelLog))).toBe(true);
    const [again, againBody] = routes('relay_i4', { tokens: ['x', 'y'] })[0] as [string, string];
    expect(eventCount((await chunksOf(node.httpPort as number, again, againBody)).join(''))).toBe(2);
  }, 30_000);
});
