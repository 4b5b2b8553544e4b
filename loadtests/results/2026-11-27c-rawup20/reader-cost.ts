// The raw upstream's answer reader alone, warm: ns per SSE event fed one chunk per read. usage: taskset -c 0 npx tsx loadtests/results/2026-11-27c-rawup20/reader-cost.ts
import { RawAnswerReader } from '../../../gateway/src/adapters/node-http/raw-answer-reader.js';
const event = `data: ${JSON.stringify({ id: 'cmpl-1', object: 'text_completion', created: 1, model: 'm', choices: [{ index: 0, text: ' word', finish_reason: null }] })}\n\n`;
const framed = Buffer.from(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`);
let bytes = 0;
const reader = new RawAnswerReader({ head: () => {}, data: (b) => (bytes += b.length), end: () => {} });
reader.feed(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n'));
for (let round = 0; round < 3; round++) {
  const n = 200_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) reader.feed(framed);
  console.log(`reader: ${(Number(process.hrtime.bigint() - t0) / n).toFixed(0)} ns per event (one chunk per read), ${bytes}`);
}
