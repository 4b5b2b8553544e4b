// Does node:http2 write a request's frames before the current macrotask ends? The server runs in a child
// process and notes arrival on CLOCK_MONOTONIC (process.hrtime, shared by both); the client busy-waits
// 50 ms right after request() + end(). usage: node h2-flush-check.mjs
import http2 from 'node:http2';
import { fork } from 'node:child_process';
const now = () => Number(process.hrtime.bigint()) / 1e6;
if (process.argv[2] === 'server') {
  const server = http2.createServer();
  server.on('stream', (stream) => { process.send(now()); stream.respond({ ':status': 200 }); stream.end('ok'); });
  server.listen(47101, () => process.send('ready'));
} else {
  const child = fork(new URL(import.meta.url).pathname, ['server']);
  child.once('message', () => {
    const session = http2.connect('http://127.0.0.1:47101');
    session.once('connect', () => {
      const t0 = now();
      const req = session.request({ ':method': 'POST', ':path': '/' });
      req.end('body');
      while (now() - t0 < 50); // the rest of the macrotask
      const t1 = now();
      child.once('message', (arrived) => {
        console.log(`request() at 0 ms, its macrotask ended at ${(t1 - t0).toFixed(1)} ms, the server saw the stream at ${(arrived - t0).toFixed(1)} ms`);
        session.close(); child.kill();
      });
      req.on('error', () => {});
      session.on('error', () => {});
      req.resume();
    });
  });
}
