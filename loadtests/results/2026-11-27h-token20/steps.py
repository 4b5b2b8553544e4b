# Folds a `perf script -F comm,tid,ip,sym` dump of the gateway into steps of a streamed token (first matching rule over the whole stack wins).
import re, sys, collections
path, tokens_per_s, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
stacks = []; cur = None
for line in open(path):
    if not line.strip():
        if cur: stacks.append(cur)
        cur = None; continue
    if line[0] not in ' \t':
        parts = line.split()
        cur = {'tid': parts[1] if len(parts) > 1 else '?', 'comm': parts[0], 'frames': []}
    elif cur is not None:
        p = line.strip().split(' ', 1); cur['frames'].append(p[1] if len(p) > 1 else p[0])
if cur: stacks.append(cur)
main_tid = collections.Counter(s['tid'] for s in stacks).most_common(1)[0][0]
rules = [
  ('GC (main thread)', r'Scavenger|Heap::|MarkCompact|Sweeper|garbage|MinorMC'),
  ('rate-limit lease renewals (Redis script calls, ioredis)', r'renewLease|runLua|JS:\^decide |JS:\^flush |JS:\^tick |sendCommand|ioredis|JS:\^renew '),
  ('relay: metering (scanner tokensIn, completion charges)', r'JS:.meterSent|tokensIn'),
  ('relay: client write (framing, socket write)', r'JS:.write file.*chunk-6CQXX5B2.js:39985|JS:.send file.*39997|frameStreamChunk'),
  ('relay: driver (push, carry, onData)', r'JS:.onData file.*chunk-5O7ZQPMH.js:528|JS:.push file.*chunk-5O7ZQPMH|JS:.stream.push'),
  ('node answer read: HTTP/2 session (nghttp2, node:http2)', r'nghttp2|Http2Session|http2/core'),
  ('per stream: request in, auth, admission, node request (async chain)', r'forwardLlm|JS:.completion |JS:.serve|parseLlmApiRequest|authenticate|admit|readRequestHead|RunMicrotasks|processTicksAndRejections'),
  ('timers', r'listOnTimeout|processTimers|processImmediate'),
  ('socket read/write in libuv (other sockets)', r'uv__read|uv__write|uv__stream_io'),
  ('event loop (epoll, libuv)', r'uv__io_poll|epoll'),
]
cats = collections.Counter(); other = collections.Counter()
for s in stacks:
    if s['tid'] != main_tid:
        f = ' '.join(s['frames'])
        c = 'other threads: TurboFan compiles' if re.search(r'OptimizingCompileDispatcher|compiler::', f) else ('other threads: GC' if re.search(r'Heap|Scaveng|Mark|Sweep|Concurrent', f) else 'other threads: rest')
        cats[c] += 1; continue
    f = '\n'.join(s['frames'])
    for name, rx in rules:
        if re.search(rx, f): cats[name] += 1; break
    else:
        cats['other (main thread)'] += 1; other[s['frames'][0][:80] if s['frames'] else '?'] += 1
n = len(stacks)
# perf at 1999 Hz: one sample ~ 500 µs of CPU
us_per_sample = 1e6 / 1999
tok = tokens_per_s * secs
print(f'samples {n}, {n*us_per_sample/1000:.0f} ms CPU over {secs} s, {tok:.0f} tokens: {n*us_per_sample/tok:.1f} µs/token sampled')
for k, v in cats.most_common(): print(f'{v*us_per_sample/tok:7.1f} µs/token {100*v/n:5.1f}%  {k}')
print('top of other:', other.most_common(8))
