const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const STATUS_LINE = /^HTTP\/1\.[01] ([2-5]\d\d)(?: [^\r\n]*)?$/;
const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nConnection: keep-alive\r\nX-Accel-Buffering: no\r\ntessera-queue-depth: 0\r\nDate: Fri, 27 Nov 2026 13:50:00 GMT\r\nKeep-Alive: timeout=5\r\nTransfer-Encoding: chunked';
let sink = 0;
function a(text) { // current
  const lines = text.split('\r\n');
  const status = STATUS_LINE.exec(lines[0]);
  const headers = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]; const colon = line.indexOf(':'); const name = colon > 0 ? line.slice(0, colon) : '';
    if (!HTTP_TOKEN.test(name)) throw 1;
    const lower = name.toLowerCase(); const value = line.slice(colon + 1).trim();
    if (!HTTP_FIELD_VALUE.test(value)) throw 2;
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  const reusable = !/(?:^|,)\s*close\s*(?:,|$)/i.test(headers.connection ?? '') && lines[0].startsWith('HTTP/1.1');
  return [Number(status[1]), headers, reusable];
}
function b(text) { // no split; Map-free object created with null proto
  const first = text.indexOf('\r\n');
  const statusLine = first < 0 ? text : text.slice(0, first);
  const status = STATUS_LINE.exec(statusLine);
  const headers = Object.create(null);
  let at = first < 0 ? text.length : first + 2;
  while (at < text.length) {
    let end = text.indexOf('\r\n', at); if (end < 0) end = text.length;
    const colon = text.indexOf(':', at);
    const name = colon > at && colon < end ? text.slice(at, colon) : '';
    if (!HTTP_TOKEN.test(name)) throw 1;
    const lower = name.toLowerCase(); const value = text.slice(colon + 1, end).trim();
    if (!HTTP_FIELD_VALUE.test(value)) throw 2;
    const had = headers[lower];
    headers[lower] = had === undefined ? value : `${had}, ${value}`;
    at = end + 2;
  }
  const reusable = !/(?:^|,)\s*close\s*(?:,|$)/i.test(headers.connection ?? '') && statusLine.startsWith('HTTP/1.1');
  return [Number(status[1]), headers, reusable];
}
function c(text) { // a's shape, headers into a Map then nothing else (to see the object's cost)
  const lines = text.split('\r\n'); const status = STATUS_LINE.exec(lines[0]); const headers = new Map();
  for (let i = 1; i < lines.length; i++) { const line = lines[i]; const colon = line.indexOf(':'); const name = colon > 0 ? line.slice(0, colon) : '';
    if (!HTTP_TOKEN.test(name)) throw 1; const lower = name.toLowerCase(); const value = line.slice(colon + 1).trim(); if (!HTTP_FIELD_VALUE.test(value)) throw 2;
    const had = headers.get(lower); headers.set(lower, had === undefined ? value : `${had}, ${value}`); }
  return [Number(status[1]), headers];
}
function d(text) { // a without the regex tests
  const lines = text.split('\r\n'); const status = STATUS_LINE.exec(lines[0]); const headers = {};
  for (let i = 1; i < lines.length; i++) { const line = lines[i]; const colon = line.indexOf(':'); const name = colon > 0 ? line.slice(0, colon) : '';
    const lower = name.toLowerCase(); const value = line.slice(colon + 1).trim();
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`; }
  return [Number(status[1]), headers];
}
for (const [n, f] of [['a current', a], ['b no split, null proto', b], ['c Map', c], ['d no regex', d], ['a current', a]]) {
  for (let i = 0; i < 50000; i++) sink += f(head)[0];
  const t = process.hrtime.bigint(); for (let i = 0; i < 50000; i++) sink += f(head)[0];
  console.log(n, (Number(process.hrtime.bigint() - t) / 1000 / 50000).toFixed(3), 'µs');
}
