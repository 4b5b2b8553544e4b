// Where the gateway's log writes (write(2) on fd 2) fall in a kept `strace -f -ttt -yy` trace of c=1 misses
// (gateway-c1-timeline.ts, TIMELINE_KEEP), by the phase of the request in flight: before its upstream call
// left (`before-upstream`), waiting for the node (`waiting`), in the turn that read the node's answer and has
// not yet written the client's (`answer-turn`: the write delays that answer), or between requests (`between`).
// node log-writes.mjs TRACE GATEWAY_PORT
import { readFileSync } from 'node:fs';
const [file, port] = process.argv.slice(2);
const clientSocket = new RegExp(`TCP:\\[[^\\]]*:${port}->`);
let phase = 'between';
let requests = 0;
const writes = { 'before-upstream': [], waiting: [], 'answer-turn': [], between: [] };
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const tcp = /\b(read|writev|write)\(\d+<TCP/.exec(line);
  const ok = !/= -1|= 0$/.test(line);
  if (tcp && clientSocket.test(line)) {
    if (tcp[1] === 'read' && ok && phase === 'between') {
      phase = 'before-upstream';
      requests++;
    } else if (tcp[1] === 'writev') phase = 'between';
  } else if (tcp && phase !== 'between') {
    // The upstream (or Redis) socket: a write sends the call, a read takes the answer.
    if (tcp[1] !== 'read' && phase === 'before-upstream') phase = 'waiting';
    else if (tcp[1] === 'read' && ok && phase === 'waiting') phase = 'answer-turn';
  } else {
    const m = /\bwrite\(2<.*= (\d+)$/.exec(line);
    if (m) writes[phase].push(Number(m[1]));
  }
}
const out = { requests };
for (const [name, sizes] of Object.entries(writes)) out[name] = { writes: sizes.length, bytes: sizes.reduce((a, b) => a + b, 0) };
console.log(JSON.stringify(out));
