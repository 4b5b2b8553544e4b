// Upstream for the read experiment: 64 streams, an event every 20 ms each, over HTTP/1.1 chunked or h2c.
import { createServer } from 'node:http';
import { createServer as createH2 } from 'node:http2';
const event = 'data: {"id":"x","object":"text_completion","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n';
const streams = new Set();
createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.flushHeaders(); streams.add(res); res.on('close', () => streams.delete(res)); }).listen(47110, '127.0.0.1');
createH2().on('stream', (s) => { s.respond({ ':status': 200, 'content-type': 'text/event-stream' }); streams.add(s); s.on('close', () => streams.delete(s)); }).listen(47111, '127.0.0.1');
// Each stream its own phase, as the engine double's per-stream timers.
let i = 0;
const spread = process.argv[2] === "spread";
if (!spread) setInterval(() => { for (const s of streams) s.write(event); }, 20);
else { const orig = streams.add.bind(streams); streams.add = (s) => { const t = setInterval(() => s.write(event), 20); s.on("close", () => clearInterval(t)); return orig(s); }; }
