// Server CPU per answer: corked head string + JSON + 4 KB output (A) against one gathered buffer (B), in turns.
import net from 'node:net';
import { fork } from 'node:child_process';
if (process.argv[2] === 'sink') {
  const s = net.connect(Number(process.argv[3]), '127.0.0.1');
  s.on('data', () => {});
} else {
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: 143\r\nVary: Accept-Encoding\r\ntessera-queue-depth: 0\r\ntessera-inflight: 12\r\nContent-Length: 4239\r\nDate: Fri, 27 Nov 2026 23:29:31 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n';
  const json = Buffer.from('x'.repeat(143));
  const out = new Uint8Array(new ArrayBuffer(64 * 4096), 4096 * 3, 4096);
  const A = (socket) => { socket.cork(); socket.write(head, 'latin1'); socket.write(json); let ok = socket.write(out); socket.uncork(); return ok; };
  const B = (socket) => {
    const buf = Buffer.allocUnsafe(head.length + json.length + out.length);
    let at = buf.write(head, 0, 'latin1'); buf.set(json, at); at += json.length; buf.set(out, at);
    return socket.write(buf);
  };
  const server = net.createServer(async (socket) => {
    const N = 20000; const results = { A: [], B: [] };
    for (let round = 0; round < 6; round++) {
      for (const [name, fn] of round % 2 === 0 ? [['A', A], ['B', B]] : [['B', B], ['A', A]]) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < N; i++) {
          if (!fn(socket)) await new Promise((r) => socket.once('drain', r));
          if (i % 64 === 63) await new Promise((r) => setImmediate(r)); // a wave's answers, then a turn
        }
        const c = process.cpuUsage(c0);
        results[name].push(((c.user + c.system) / N).toFixed(2));
      }
    }
    console.log(JSON.stringify(results));
    process.exit(0);
  });
  server.listen(0, '127.0.0.1', () => fork(new URL(import.meta.url).pathname, ['sink', String(server.address().port)]));
}
