// The gateway's HTTP/2 read path alone, in turns: a node-like server (child process, core 1) streams
// EVENTS events of ~150 bytes on STREAMS streams, ITL ms apart; this process (core 0) reads them either
// through the stream's Readable ('data', as relay-to-response did) or below it (h2-direct-body.ts), in
// alternating rounds. CPU per event from process.cpuUsage (user + system).
// Run: taskset -c 0 node --import tsx loadtests/results/2026-11-26f-llmtok/micro/h2-direct-read.mjs [rounds] [streams]
import { connect, createServer } from 'node:http2';
import { fork } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { makeDirectBody, directBodyOf } from '../../../../gateway/src/adapters/node-http/h2-direct-body.ts';

const EVENTS = 64;
const ITL = 20;
const event = Buffer.from(`data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"llm_engine","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n`);

if (process.argv[2] === 'server') {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      if (stream.destroyed) return clearInterval(timer);
      stream.write(event);
      if (++sent === EVENTS) {
        clearInterval(timer);
        stream.end();
      }
    }, ITL);
  });
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
} else {
  const rounds = Number(process.argv[2] ?? 6);
  const streams = Number(process.argv[3] ?? 64);
  const child = fork(new URL(import.meta.url).pathname, ['server'], { execArgv: process.execArgv });
  try { execFileSync('taskset', ['-pc', '1', String(child.pid)]); } catch {}
  const port = await new Promise((resolve) => child.once('message', resolve));
  const session = connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 65536 } });
  await new Promise((resolve) => session.once('connect', resolve));
  session.setLocalWindowSize(1 << 24);

  const one = (mode) =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':path': '/', ':method': 'POST' }, { endStream: true });
      makeDirectBody(stream, () => true);
      let bytes = 0;
      stream.once('response', () => {
        if (mode === 'direct') directBodyOf(stream).start((chunk) => { bytes += chunk.length; return true; });
        else stream.on('data', (chunk) => { bytes += chunk.length; });
      });
      stream.once('end', () => resolve(bytes));
      stream.once('error', reject);
    });
  const round = async (mode) => {
    const before = process.cpuUsage();
    const byteCounts = await Promise.all(Array.from({ length: streams }, () => one(mode)));
    const used = process.cpuUsage(before);
    const events = byteCounts.reduce((a, b) => a + b, 0) / event.length;
    return (used.user + used.system) / events;
  };
  await round('readable');
  await round('direct');
  const results = { readable: [], direct: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? ['readable', 'direct'] : ['direct', 'readable']) results[mode].push(await round(mode));
  }
  const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
  let wins = 0;
  for (let i = 0; i < rounds; i++) if (results.direct[i] < results.readable[i]) wins++;
  console.log(JSON.stringify({ streams, events: EVENTS, rounds, readable: results.readable.map((v) => +v.toFixed(2)), direct: results.direct.map((v) => +v.toFixed(2)) }));
  console.log(`µs of CPU per event (median): Readable ${median(results.readable).toFixed(2)}, direct ${median(results.direct).toFixed(2)}; direct cheaper in ${wins} of ${rounds} rounds`);
  session.destroy();
  child.kill();
}
