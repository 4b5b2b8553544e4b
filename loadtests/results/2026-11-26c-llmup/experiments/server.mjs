// Experiment: CPU per SSE event written to 64 clients, res.write (chunked) vs one socket.write of a pre-framed chunk.
import { createServer } from 'node:http';
const mode = process.argv[2];
const port = Number(process.argv[3]);
const event = Buffer.from('data: {"id":"x","object":"text_completion","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n');
const framed = Buffer.concat([Buffer.from(event.length.toString(16) + '\r\n'), event, Buffer.from('\r\n')]);
const streams = new Set();
let writes = 0;
createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  streams.add(res);
  res.on('close', () => streams.delete(res));
}).listen(port, '127.0.0.1');
setInterval(() => {
  for (const res of streams) {
    if (mode === 'res') res.write(event);
    else if (mode === 'raw') res.socket.write(framed);
    else { const b = Buffer.allocUnsafe(framed.length); framed.copy(b); res.socket.write(b); }
    writes++;
  }
}, 20);
let last = process.cpuUsage(); let lastW = 0;
setInterval(() => {
  const now = process.cpuUsage(last); last = process.cpuUsage();
  const w = writes - lastW; lastW = writes;
  if (w > 0) console.log(mode, 'µs/event', ((now.user + now.system) / w).toFixed(2), 'events', w);
}, 2000);
