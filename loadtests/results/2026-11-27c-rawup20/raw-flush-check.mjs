// When does the node see an LLM request, by the client's way of sending it? Three ways, in turns, from the
// same cold-ish state (45 ms idle before each, as one stream sees): a pre-rendered HTTP/1.1 request written
// with one socket.write on a kept-alive net.Socket (raw), node:http2 session.request() + end(body) (h2),
// node:http request() + end(body) through a keep-alive agent (h1). The server runs in a child process and
// notes arrival on CLOCK_MONOTONIC (process.hrtime, shared). After the call the client busy-waits AFTER_US
// (the gateway's own bookkeeping that follows the request). Printed per way: arrival after the call's
// start (p50/p90), the call's own time (sync, wall ≈ CPU), and total client CPU per request of its block.
// usage: node raw-flush-check.mjs [rounds=60] [afterUs=500]   (port 47201/47202)
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { execFileSync, fork } from 'node:child_process';
const now = () => Number(process.hrtime.bigint()) / 1e3; // µs
const BODY = JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'hello there, how are you today?' }], stream: true, max_tokens: 16 });
const ANSWER = 'data: {"x":1}\n\n';
if (process.argv[2] === 'server') {
  const h1 = http.createServer((req, res) => { process.send(now()); req.resume(); req.on('end', () => res.end(ANSWER)); });
  const h2 = http2.createServer();
  h2.on('stream', (stream) => { process.send(now()); stream.resume(); stream.on('end', () => { stream.respond({ ':status': 200 }); stream.end(ANSWER); }); });
  h1.listen(47201, () => h2.listen(47202, () => process.send('ready')));
} else {
  const rounds = Number(process.argv[2] ?? 60);
  const afterUs = Number(process.argv[3] ?? 500);
  const child = fork(new URL(import.meta.url).pathname, ['server']);
  // The server on core 1, the client where it was started (taskset -c 0): no preemption between them.
  execFileSync('taskset', ['-pc', '1', String(child.pid)]);
  const arrivals = [];
  let arrivalWaiter;
  child.on('message', (m) => { if (m === 'ready') return; if (arrivalWaiter) { const w = arrivalWaiter; arrivalWaiter = undefined; w(m); } else arrivals.push(m); });
  await new Promise((r) => child.once('message', r));
  const nextArrival = () => new Promise((r) => { if (arrivals.length > 0) r(arrivals.shift()); else arrivalWaiter = r; });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const busy = (t0) => { while (now() - t0 < afterUs); };
  // raw: one socket, a pre-rendered head + body, the answer read until its Content-Length is in.
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:47201\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`;
  const rawBytes = Buffer.from(head + BODY);
  const sock = net.connect({ port: 47201, host: '127.0.0.1', noDelay: true });
  await new Promise((r) => sock.once('connect', r));
  let rawWaiter; let rawBuf = '';
  sock.on('data', (d) => { rawBuf += d.toString('latin1'); const end = rawBuf.indexOf('\r\n\r\n'); if (end >= 0) { const len = Number(/content-length: (\d+)/i.exec(rawBuf)[1]); if (rawBuf.length >= end + 4 + len) { rawBuf = rawBuf.slice(end + 4 + len); rawWaiter?.(); } } });
  const rawSend = () => new Promise((r) => { rawWaiter = r; sock.write(rawBytes); });
  const session = http2.connect('http://127.0.0.1:47202');
  await new Promise((r) => session.once('connect', r));
  const h2Send = () => new Promise((r) => { const s = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) }); s.on('data', () => {}); s.on('end', r); s.end(BODY); });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const h1Send = () => new Promise((r) => { const q = http.request({ host: '127.0.0.1', port: 47201, method: 'POST', path: '/v1/chat/completions', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) } }, (res) => { res.resume(); res.on('end', r); }); q.end(BODY); });
  const ways = { raw: rawSend, h2: h2Send, h1: h1Send };
  const out = { raw: { arr: [], call: [], cpu: [] }, h2: { arr: [], call: [], cpu: [] }, h1: { arr: [], call: [], cpu: [] } };
  for (const name of Object.keys(ways)) { await ways[name](); await nextArrival(); } // warm every way once
  for (let i = 0; i < rounds; i++) {
    for (const name of Object.keys(ways)) {
      await sleep(45);
      const c0 = process.cpuUsage();
      const t0 = now();
      const done = ways[name]();
      const t1 = now();
      busy(t0);
      const arrived = await nextArrival();
      await done;
      const c = process.cpuUsage(c0);
      out[name].arr.push(arrived - t0); out[name].call.push(t1 - t0); out[name].cpu.push(c.user + c.system - afterUs);
    }
  }
  const q = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
  console.log(`rounds ${rounds}, busy after the call ${afterUs} µs; µs`);
  console.log('way  arrival p50  p90   call p50  p90   client CPU/request p50 (minus the busy wait)');
  for (const [name, o] of Object.entries(out)) console.log(`${name.padEnd(4)} ${q(o.arr, 0.5).toFixed(0).padStart(11)} ${q(o.arr, 0.9).toFixed(0).padStart(5)} ${q(o.call, 0.5).toFixed(0).padStart(10)} ${q(o.call, 0.9).toFixed(0).padStart(4)} ${q(o.cpu, 0.5).toFixed(0).padStart(8)}`);
  sock.destroy(); session.close(); agent.destroy(); child.kill();
}
