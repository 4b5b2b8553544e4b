/**
 * The stream interval (config `stream_interval` / `stream_interval_ms`) is a new way a model's config
 * steers what the node holds: values outside their range are refused at load with a message naming the
 * parameter (the model stays UNAVAILABLE, the node serves the others), and the largest interval with
 * large tokens still never holds more than MAX_HELD_CHARS of events before writing them. Real node,
 * real sockets, decoupled TypeScript models.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HELD_CHARS } from '../../gpu-node/src/server/http/held-events.js';
import { llmRepository, writeDecoupledScriptModel, type LlmRepository } from '../../gpu-node/test/llm/support.js';
import { removeDir, startTestNode, type TestNode } from '../../gpu-node/test/support.js';

const TOKEN_CHARS = 16 * 1024;
const TOKENS = 40;

const BAD: Record<string, [string, string]> = {
  bad_zero: ['stream_interval', '0'],
  bad_negative: ['stream_interval', '-3'],
  bad_huge: ['stream_interval', '100000'],
  bad_fraction: ['stream_interval', '2.5'],
  bad_word: ['stream_interval', 'many'],
  bad_hold_zero: ['stream_interval_ms', '0'],
  bad_hold_huge: ['stream_interval_ms', '86400000'],
};

let node: TestNode;
let repo: LlmRepository;

function model(parameters: readonly string[]): { io: string[]; model: string[] } {
  return {
    io: ['input [ { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] } ]', 'output [ { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] } ]', ...parameters],
    model: [
      `const token = 'x'.repeat(${TOKEN_CHARS});`,
      'export async function execute(requests) {',
      '  for (const { sender, signal } of requests) {',
      `    for (let i = 0; i < ${TOKENS} && !signal.aborted; i++) {`,
      "      sender.send({ outputs: { text_output: { datatype: 'BYTES', shape: [1], data: [token] } } });",
      '      await new Promise((resolve) => setImmediate(resolve));',
      '    }',
      '    sender.close();',
      '  }',
      '}',
    ],
  };
}

const parameter = (key: string, value: string): string => `parameters { key: "${key}" value: { string_value: ${JSON.stringify(value)} } }`;

beforeAll(async () => {
  repo = await llmRepository();
  for (const [name, [key, value]] of Object.entries(BAD)) await writeDecoupledScriptModel(repo.dir, name, model([parameter(key, value)]));
  await writeDecoupledScriptModel(repo.dir, 'widest', model([parameter('stream_interval', '256'), parameter('stream_interval_ms', '10000')]));
  node = await startTestNode(repo.dir);
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await removeDir(repo?.dir);
});

/** generate_stream on a fresh connection: the body's HTTP/1.1 chunks (one per write of the node). */
function chunks(path: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(node.httpPort as number, '127.0.0.1');
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(parts);
      const out: string[] = [];
      let offset = all.indexOf('\r\n\r\n') + 4;
      for (;;) {
        const line = all.indexOf('\r\n', offset);
        const size = parseInt(all.subarray(offset, line).toString('latin1'), 16);
        if (!(size > 0)) {
          if (out.length === 0) reject(new Error(all.subarray(0, 600).toString()));
          break;
        }
        out.push(all.subarray(line + 2, line + 2 + size).toString('utf8'));
        offset = line + 2 + size + 2;
      }
      resolve(out);
    });
    const body = JSON.stringify({ text_input: 'go' });
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
  });
}

describe('stream interval parameters from a config', () => {
  it('out-of-range values are refused at load, naming the parameter and the value', async () => {
    const index = (await (await fetch(`${node.http}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as { name: string; state?: string; reason?: string }[];
    for (const [name, [key, value]] of Object.entries(BAD)) {
      const entry = index.find((e) => e.name === name);
      expect(entry?.state).toBe('UNAVAILABLE');
      expect(entry?.reason).toContain(`parameters.${key}: '${key}' must be an integer in [1, `);
      expect(entry?.reason).toContain(`got '${value}'`);
    }
    expect(index.find((e) => e.name === 'widest')?.state).toBe('READY');
  });

  it('the widest interval with large tokens writes before MAX_HELD_CHARS are held, and loses nothing', async () => {
    const written = await chunks('/v2/models/widest/generate_stream');
    const events = written.join('').split('\n\n').length - 1;
    expect(events).toBe(TOKENS);
    // Interval 256 over 40 tokens would hold 39 of them (about 640 K characters) without the bound.
    expect(written.length).toBeGreaterThan(2);
    for (const chunk of written) expect(chunk.length).toBeLessThan(MAX_HELD_CHARS + TOKEN_CHARS + 200);
  }, 30_000);
});
