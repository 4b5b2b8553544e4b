// Gateway-side cost of one chunked write per event: node:http's framing (res.write) against one
// self-framed buffer (res.chunkedEncoding = false after the first write, as relay-to-response.ts does),
// and the same buffer written straight to res.socket (no ServerResponse write at all).
// One process, one keep-alive connection, one event per event-loop turn (as at 20 ms between tokens),
// the two ways in alternating blocks; CPU of the whole process (client reads included, the same bytes
// both ways) per event from process.cpuUsage. Usage: node chunk-framing.mjs [events per block] [blocks]
import http from 'node:http';
import net from 'node:net';

const EVENTS = Number(process.argv[2] ?? 20000);
const BLOCKS = Number(process.argv[3] ?? 6);
const event = Buffer.from('data: {"id":"cmpl-1","object":"text_completion","created":1795700000,"model":"llm_engine","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}]}\n\n');
const HEX = '0123456789abcdef';
function frameChunk(bytes) {
  const length = bytes.length;
  let digits = 1;
  while (length >>> (4 * digits) !== 0 && digits < 8) digits += 1;
  const out = Buffer.allocUnsafe(digits + 4 + length);
  for (let i = 0; i < digits; i++) out[i] = HEX.charCodeAt((length >>> (4 * (digits - 1 - i))) & 15);
  out[digits] = 13; out[digits + 1] = 10;
  out.set(bytes, digits + 2);
  out[digits + 2 + length] = 13; out[digits + 3 + length] = 10;
  return out;
}
const turn = () => new Promise((resolve) => setImmediate(resolve));
let mode = 'node';
const server = http.createServer(async (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(event);
  if (mode !== 'node') res.chunkedEncoding = false;
  const start = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    const fresh = Buffer.from(event); // a fresh chunk per event, as the upstream gives
    if (mode === 'socket') res.socket.write(frameChunk(fresh));
    else res.write(mode === 'self' ? frameChunk(fresh) : fresh);
    await turn();
  }
  const used = process.cpuUsage(start);
  results.push({ mode, usPerEvent: (used.user + used.system) / EVENTS, userUs: used.user / EVENTS, sysUs: used.system / EVENTS, wallMs: performance.now() - t0 });
  if (mode !== 'node') res.end(Buffer.from('0\r\n\r\n')); else res.end();
});
const results = [];
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const socket = net.connect(server.address().port, '127.0.0.1');
socket.setNoDelay(true);
let received = 0;
let onEnd;
socket.on('data', (d) => { received += d.length; if (d.includes('0\r\n\r\n')) onEnd?.(); });
const MODES = ['node', 'self', 'socket'];
for (let b = 0; b < BLOCKS * 3; b++) {
  const round = Math.floor(b / 3);
  mode = MODES[(b + round) % 3];
  const done = new Promise((resolve) => (onEnd = resolve));
  socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n');
  await done;
}
socket.destroy();
server.close();
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
for (const r of results) console.log(`${r.mode.padEnd(4)} ${r.usPerEvent.toFixed(2)} µs/event (user ${r.userUs.toFixed(2)}, sys ${r.sysUs.toFixed(2)}), ${r.wallMs.toFixed(0)} ms`);
const by = (m) => results.filter((r) => r.mode === m).map((r) => r.usPerEvent);
console.log(`median µs per event: node:http framing ${med(by('node')).toFixed(2)}, self-framed through res.write ${med(by('self')).toFixed(2)}, self-framed straight to the socket ${med(by('socket')).toFixed(2)}; res.write self-framed cheaper than node:http in ${by('self').filter((v, i) => v < by('node')[i]).length} of ${by('self').length} rounds`);
