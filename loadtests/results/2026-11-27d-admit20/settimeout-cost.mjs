// Cost of a socket's idle timer armed on giveBack and cleared on take, warm, one socket (as the raw pool does).
import net from 'node:net';
const server = net.createServer((s) => s.resume()).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const socket = net.connect(server.address().port, '127.0.0.1');
await new Promise((r) => socket.once('connect', r));
const drop = () => {};
const N = Number(process.argv[2] ?? 2000);
const times = { arm: [], clear: [] };
for (let i = 0; i < N; i++) {
  let t = process.hrtime.bigint();
  socket.setTimeout(3000, drop);
  times.arm.push(Number(process.hrtime.bigint() - t));
  await new Promise((r) => setImmediate(r));
  t = process.hrtime.bigint();
  socket.setTimeout(0);
  times.clear.push(Number(process.hrtime.bigint() - t));
  await new Promise((r) => setImmediate(r));
}
for (const [k, v] of Object.entries(times)) { v.sort((a, b) => a - b); console.log(k, 'p50', (v[v.length >> 1] / 1000).toFixed(2), 'µs p90', (v[Math.floor(v.length * 0.9)] / 1000).toFixed(2), 'first', (times[k][0]/1000).toFixed(1)); }
socket.destroy(); server.close();
