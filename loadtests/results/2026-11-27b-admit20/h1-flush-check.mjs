// The same check as h2-flush-check.mjs over node:http (HTTP/1.1, keep-alive agent, socket already open):
// does the request leave before the macrotask that made it ends? usage: node h1-flush-check.mjs
import http from 'node:http';
import { fork } from 'node:child_process';
const now = () => Number(process.hrtime.bigint()) / 1e6;
if (process.argv[2] === 'server') {
  const server = http.createServer((req, res) => { process.send(now()); req.resume(); res.end('ok'); });
  server.listen(47102, () => process.send('ready'));
} else {
  const child = fork(new URL(import.meta.url).pathname, ['server']);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (onSent) => {
    const req = http.request({ host: '127.0.0.1', port: 47102, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } }, (res) => { res.resume(); res.on('end', onSent); });
    req.on('error', () => {});
    req.end('body');
  };
  child.once('message', () => {
    // A first request opens the keep-alive socket; the second is the one timed.
    send(() => setTimeout(() => {
      const t0 = now();
      send(() => {});
      while (now() - t0 < 50); // the rest of the macrotask
      const t1 = now();
      child.once('message', (arrived) => {
        console.log(`request() at 0 ms, its macrotask ended at ${(t1 - t0).toFixed(1)} ms, the server saw the request at ${(arrived - t0).toFixed(1)} ms`);
        agent.destroy(); child.kill();
      });
    }, 20));
    child.once('message', () => {});
  });
}
