// The gateway's steps from the request event to the node request's write, per stream, from an llm-ttft-probe
// run (LLM_TTFT_PROBE_MARKS=1) of a diagnosis build with `__ttftMark(i)` calls (diag-admission.patch: marks
// [5..12]), then from the node socket's first read to the first write to the client. Every step is the
// gateway's CPU (the marks show its event loop never idle in them), so wall p50s here are CPU.
// usage: node admission-steps.mjs <run folder with llm-ttft-marks.json> [...more folders]
import { readFileSync } from 'node:fs';
// RELAY=1: the steps from the node socket's first read to the first client write instead (diag-relay.patch).
const RELAY = [
  ['node socket first read', 3],
  ['answer head parsed (raw reader)', 5],
  ['upstream promise resolved', 6],
  ['forwardLlm resumed after send', 7],
  ['direct-llm resumed after the service', 8],
  ['native-llm write() entry', 9],
  ['relayToResponse: writeHead done', 10],
  ['relay.push entry (first chunk)', 11],
  ['before the first outgoing.write', 12],
  ['first client write (mark [4])', 4],
];
const ADMISSION = [
  ['request event', 0],
  ['request id, span, exchange (direct-llm)', 5],
  ['authenticate (key hash memo, tenant store)', 6],
  ['read the body (readTierBody)', 7],
  ['parse (JSON, checks), permission, router.known', 8],
  ['request rate limit (applyRateLimit)', 9],
  ['prompt tokens (admitPrompt: bound, lease take)', 10],
  ['cache ttl, deadline, forwardLlm: router.acquire (admission queue)', 11],
  ['upstream choice, breaker, render, pool.take', 12],
  ['socket.write of the request (mark [1])', 1],
];
const NAMES = process.env.RELAY === '1' ? RELAY : ADMISSION;
const p = (values, q) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
for (const folder of process.argv.slice(2)) {
  const { marks } = JSON.parse(readFileSync(`${folder}/llm-ttft-marks.json`, 'utf8'));
  const ok = marks.filter((m) => NAMES.every(([, i]) => (m[i] ?? 0) > 0));
  console.log(`${folder}: ${ok.length} of ${marks.length} streams with every mark`);
  const rows = [];
  for (let k = 1; k < NAMES.length; k++) {
    const d = ok.map((m) => (m[NAMES[k][1]] - m[NAMES[k - 1][1]]) / 1000);
    rows.push([`${NAMES[k - 1][0]} -> ${NAMES[k][0]}`, p(d, 0.5), p(d, 0.9)]);
  }
  const total = ok.map((m) => (m[NAMES[NAMES.length - 1][1]] - m[NAMES[0][1]]) / 1000);
  rows.push(['total', p(total, 0.5), p(total, 0.9)]);
  const after = marks.filter((m) => m[3] > 0 && m[4] > 0).map((m) => (m[4] - m[3]) / 1000);
  rows.push(['node socket first read -> first client write', p(after, 0.5), p(after, 0.9)]);
  console.log('| step (ends at) | p50 µs | p90 µs |\n| --- | --- | --- |');
  for (const [name, a, b] of rows) console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} |`);
}
