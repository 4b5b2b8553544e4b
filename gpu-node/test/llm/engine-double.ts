/**
 * A small OpenAI-compatible engine for the `openai` backend's tests: `POST /v1/completions` answers the
 * prompt upper-cased (at once), or with `stream: true` one SSE chunk per word of the prompt, 5 ms apart,
 * then `data: [DONE]`. A prompt `fail` gets a 503 with an OpenAI error body. It records every request
 * body and Authorization header, and counts streams whose client closed the connection before the end.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EngineDouble {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  readonly requests: { body: Record<string, unknown>; authorization: string | undefined }[];
  /** Streams cut by the client before they ended. */
  closedEarly: number;
  close(): Promise<void>;
}

export async function startEngineDouble(): Promise<EngineDouble> {
  const engine = {
    requests: [] as EngineDouble['requests'],
    closedEarly: 0,
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(raw) as Record<string, unknown>;
      engine.requests.push({ body, authorization: req.headers.authorization });
      const prompt = String(body['prompt']);
      if (prompt === 'fail') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'engine overloaded', type: 'server_error' } }));
        return;
      }
      if (body['stream'] !== true) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', object: 'text_completion', choices: [{ index: 0, text: prompt.toUpperCase(), finish_reason: 'stop' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const words = prompt.match(/\s*\S+/g) ?? [];
      const limit = typeof body['max_tokens'] === 'number' ? body['max_tokens'] : words.length;
      let i = 0;
      let finished = false;
      res.on('close', () => {
        if (!finished) engine.closedEarly += 1;
        clearInterval(timer);
      });
      const timer = setInterval(() => {
        if (i >= Math.min(limit, words.length)) {
          finished = true;
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
          return;
        }
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, text: words[i], finish_reason: null }] })}\n\n`);
        i += 1;
      }, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(engine, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
