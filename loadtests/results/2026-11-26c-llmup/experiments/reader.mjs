import { request, Agent } from 'node:http';
import { connect as netConnect } from 'node:net';
import { connect } from 'node:http2';
const mode = process.argv[2];
let events = 0;
if (mode === 'http') {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  for (let i = 0; i < 64; i++) request({ port: 47110, host: '127.0.0.1', agent }, (res) => res.on('data', () => { events++; })).end();
} else if (mode === 'raw') {
  for (let i = 0; i < 64; i++) { const s = netConnect(47110, '127.0.0.1'); s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'); s.on('data', (b) => { events++; }); }
} else {
  const session = connect('http://127.0.0.1:47111');
  for (let i = 0; i < 64; i++) session.request({ ':path': '/' }).on('data', () => { events++; });
}
let last = process.cpuUsage(); let lastE = 0;
setInterval(() => { const u = process.cpuUsage(last); last = process.cpuUsage(); const e = events - lastE; lastE = events; if (e) console.log(mode, 'µs/read-callback', ((u.user + u.system) / e).toFixed(2), 'callbacks', e); }, 2000);
