/**
 * The two small servers of the LLM bench, written as scripts and started as child processes (each its
 * own event loop and CPU account):
 * - an engine double: an OpenAI-compatible `POST /v1/completions` that streams `max_tokens` (default
 *   64) one-token chunks (" tok"), `itlMs` apart, then `data: [DONE]`; the node's `openai` backend
 *   talks to it as to vLLM. Deterministic, no model.
 * - the anchor: a bare node:http relay that pipes a request to the node's HTTP port and the node's
 *   answer back, nothing else (no key, no limits, no metering): the floor a gateway's relay costs.
 * Both print `{"msg": "<name> started", "port": N}` when they listen.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { launchServer, type RunningServer } from './server-process.js';

const ENGINE_SOURCE = `import { createServer } from 'node:http';
const itlMs = Number(process.env.ENGINE_ITL_MS ?? '20');
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(raw); } catch {}
    const count = Number.isInteger(body.max_tokens) ? body.max_tokens : 64;
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'text_completion', choices: [{ index: 0, text: ' tok'.repeat(count), finish_reason: 'length' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= count) {
        clearInterval(timer);
        res.end('data: [DONE]\\n\\n');
        return;
      }
      res.write('data: {"id":"x","object":"text_completion","choices":[{"index":0,"text":" tok","finish_reason":null}]}\\n\\n');
      sent += 1;
    }, itlMs);
    res.on('close', () => clearInterval(timer));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'engine started', port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
`;

const ANCHOR_SOURCE = `import { Agent, createServer, request } from 'node:http';
const target = process.env.ANCHOR_TARGET_PORT;
const agent = new Agent({ keepAlive: true, maxSockets: 512 });
const server = createServer((req, res) => {
  const upstream = request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: { 'content-type': 'application/json' }, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'text/plain', 'cache-control': 'no-cache' });
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'anchor started', port: server.address().port })));
process.on('SIGTERM', () => process.exit(0));
`;

export async function launchEngineDouble(work: string, itlMs: number): Promise<RunningServer> {
  const script = join(work, 'llm-engine-double.mjs');
  await writeFile(script, ENGINE_SOURCE);
  return launchServer({ name: 'engine double', args: [script], startedMsg: 'engine started', env: { ENGINE_ITL_MS: String(itlMs) } });
}

export async function launchRelayAnchor(work: string, nodeHttpPort: number): Promise<RunningServer> {
  const script = join(work, 'llm-relay-anchor.mjs');
  await writeFile(script, ANCHOR_SOURCE);
  return launchServer({ name: 'bare relay', args: [script], startedMsg: 'anchor started', env: { ANCHOR_TARGET_PORT: String(nodeHttpPort) } });
}

/** The node-side model: `llm_engine`, backend "openai" over the engine double, one instance per stream. */
export function engineModelConfig(engineBaseUrl: string, instances: number, name = 'llm_engine', extraLines: readonly string[] = []): string {
  return [
    `name: ${JSON.stringify(name)}`,
    'backend: "openai"',
    'max_batch_size: 0',
    'model_transaction_policy { decoupled: true }',
    'input [',
    '  { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] },',
    '  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true },',
    '  { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true },',
    '  { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true }',
    ']',
    'output [ { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] } ]',
    `instance_group [ { count: ${instances} kind: KIND_CPU } ]`,
    `parameters { key: "base_url" value: { string_value: ${JSON.stringify(engineBaseUrl)} } }`,
    ...extraLines,
    '',
  ].join('\n');
}
