// CPU of ServerResponse#writeHead with the SSE headers as an object vs a flat array (node 20), per call, warm.
import http from 'node:http';
import net from 'node:net';
const headers = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', 'Transfer-Encoding': 'chunked', 'x-request-id': 'abcdef0123456789', 'x-ratelimit-limit-tokens': '100000', 'x-ratelimit-remaining-tokens': '99000', 'x-ratelimit-reset-tokens': '1s' };
const flat = Object.entries(headers).flat();
const mode = process.argv[2];
let total = 0n, n = 0;
const server = http.createServer((req, res) => {
  const t0 = process.hrtime.bigint();
  if (mode === 'array') res.writeHead(200, flat); else res.writeHead(200, headers);
  res.write('data: x\n\n');
  total += process.hrtime.bigint() - t0; n++;
  res.end();
});
server.listen(0, async () => {
  const port = server.address().port;
  const sock = net.connect(port);
  await new Promise((r) => sock.once('connect', r));
  let buf = '';
  for (let i = 0; i < 3000; i++) {
    sock.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    await new Promise((r) => { const on = (d) => { buf += d; if (buf.includes('0\r\n\r\n')) { buf = ''; sock.off('data', on); r(); } }; sock.on('data', on); });
    if (i === 999) { total = 0n; n = 0; }
  }
  console.log(mode, 'writeHead+first write µs per call', Number(total / BigInt(n)) / 1000);
  sock.destroy(); server.close();
});
