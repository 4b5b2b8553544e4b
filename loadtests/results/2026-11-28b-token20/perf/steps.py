# Folds a `perf script -F comm,tid,ip,sym` dump of the gateway into steps of a streamed token: the first rule that
# matches anywhere in a sample's stack wins. RELAY: the relay driver's onData (file:line in the bundle), which runs
# inside the node leg's read callback; what runs under it is the relay's, the rest of the read is the node leg's.
# usage: steps.py script.txt TOKENS_PER_S SECONDS RELAY_ONDATA_FILE_LINE
import re, sys, collections
path, tokens_per_s, secs, relay = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
stacks = []; cur = None
for line in open(path):
    if not line.strip():
        if cur: stacks.append(cur)
        cur = None; continue
    if line[0] not in ' \t':
        parts = line.split(); cur = {'tid': parts[1] if len(parts) > 1 else '?', 'frames': []}
    elif cur is not None:
        p = line.strip().split(' ', 1); cur['frames'].append(p[1] if len(p) > 1 else p[0])
if cur: stacks.append(cur)
main_tid = collections.Counter(s['tid'] for s in stacks).most_common(1)[0][0]
R = re.escape(relay)
rules = [
  ('GC (main thread)', r'Scavenger|Heap::|MarkCompact|Sweeper|MinorMC'),
  ('rate-limit lease renewals (Redis script calls, ioredis)', r'renewLease|runLua|sendCommand|ioredis|JS:\^renew '),
  ('relay: metering (tokensIn, meterSent, charges)', r'JS:.meterSent|JS:.tokensIn'),
  ('relay: client write (framing, socket write)', r'(Writable\.write|writeGeneric|writeOrBuffer|frameStreamChunk|JS:.send )(.|\n)*onData file:[^\n]*' + R),
  ('relay: driver, scan (push, carry, onData)', r'onData file:[^\n]*' + R),
  ('node leg over HTTP/2 outside the relay (node:http2 / our client: reads, window updates, requests)', r'nghttp2|Http2Session|http2/core|JS:.readFrames |JS:.flushTurn |JS:.creditStream|JS:.creditConnection'),
  ('per stream: request in, auth, admission, node request (async chain)', r'forwardLlm|JS:.completion |JS:.serve|parseLlmApiRequest|authenticate|admit|readRequestHead|RunMicrotasks|processTicksAndRejections'),
  ('timers', r'listOnTimeout|processTimers|processImmediate'),
  ('socket read/write in libuv (other sockets)', r'uv__read|uv__write|uv__stream_io'),
  ('event loop (epoll, libuv)', r'uv__io_poll|epoll'),
]
cats = collections.Counter(); other = collections.Counter()
for s in stacks:
    f = '\n'.join(s['frames'])
    if s['tid'] != main_tid:
        c = 'other threads: TurboFan compiles' if re.search(r'OptimizingCompileDispatcher|compiler::', f) else ('other threads: GC' if re.search(r'Heap|Scaveng|Mark|Sweep|Concurrent', f) else 'other threads: rest')
        cats[c] += 1; continue
    for name, rx in rules:
        if re.search(rx, f): cats[name] += 1; break
    else:
        cats['other (main thread)'] += 1; other[s['frames'][0][:80] if s['frames'] else '?'] += 1
n = len(stacks); us = 1e6 / 1999; tok = tokens_per_s * secs
print(f'samples {n}, {n*us/1000:.0f} ms CPU over {secs} s, {tok:.0f} tokens: {n*us/tok:.1f} µs/token sampled')
for k, v in cats.most_common(): print(f'{v*us/tok:7.1f} µs/token {100*v/n:5.1f}%  {k}')
print('top of other:', other.most_common(6))
