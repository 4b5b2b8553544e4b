import subprocess, sys, re
C='shared/src/http/raw-http2/connection.ts'
SEC='tests/security/node-raw-h2.test.ts'
M=[
 ('hpack bomb: no over-limit reset', C, "    if (decoded.overLimit) return this.write(rstStreamFrame(streamId, H2Error.ENHANCE_YOUR_CALM));\n", "", SEC),
 ('continuation flood: no block bound', C, "    if (partial.bytes + FRAME_HEAD_BYTES * partial.parts.length > this.limits.maxHeaderListBytes) return this.fail(H2Error.ENHANCE_YOUR_CALM);\n", "", SEC),
 ('rapid reset: no budget', C, "    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);\n    const stream = this.streams.get(streamId);\n    if (stream !== undefined) this.closeStream", "    const stream = this.streams.get(streamId);\n    if (stream !== undefined) this.closeStream", SEC),
 ('settings flood: no budget', C, "    if (payload.length % 6 !== 0) return this.fail(H2Error.FRAME_SIZE_ERROR);\n    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);\n", "    if (payload.length % 6 !== 0) return this.fail(H2Error.FRAME_SIZE_ERROR);\n", SEC),
 ('ping flood: no budget', C, "    if ((flags & Flag.ACK) !== 0) return;\n    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);\n", "    if ((flags & Flag.ACK) !== 0) return;\n", SEC),
 ('stalled window: no timer', C, "      if (stream.blockedSince === since) this.reset(stream, H2Error.CANCEL);\n", "", SEC),
 ('frame size: no check', C, "      if (length > MAX_FRAME_BYTES) return this.fail(H2Error.FRAME_SIZE_ERROR);\n", "", SEC),
 ('padding: no check', C, "  if (pad >= payload.length) return undefined;\n", "", SEC),
 ('stream id order: no check', C, "    if (streamId <= this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR);\n", "", SEC),
 ('even stream id: allowed', C, "if (streamId === 0 || streamId % 2 === 0) return this.fail(H2Error.PROTOCOL_ERROR);\n    let block", "if (streamId === 0) return this.fail(H2Error.PROTOCOL_ERROR);\n    let block", SEC),
 ('data on closed: no rst', C, "      if (stream === undefined) this.write(rstStreamFrame(streamId, H2Error.STREAM_CLOSED));\n      else", "      if (stream === undefined) void 0;\n      else", SEC),
 ('data on idle: no goaway', C, "    if (streamId > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR); // DATA on an idle stream\n", "", SEC),
 ('max concurrent: no bound', C, "this.streams.size >= this.limits.maxConcurrentStreams", "false", SEC),
 ('malformed request: not refused', C, "    if ('problem' in checked) return this.write(rstStreamFrame(streamId, H2Error.PROTOCOL_ERROR));\n", "    if ('problem' in checked) return this.onStream(new RawH2Stream(streamId, this, 0, 0), {});\n", SEC),
 ('hpack index: no check', 'shared/src/http/raw-http2/hpack-decoder.ts', "    if (field === undefined) throw new HpackError(`index ${index} past the table`);\n", "    if (field === undefined) return ['x', ''];\n", SEC),
 ('flow control: no check', C, "    if (this.receiveWindow < 0) return this.fail(H2Error.FLOW_CONTROL_ERROR);\n", "", SEC),
 ('preface: not checked', C, "      if (!this.pending.subarray(0, have).equals(CLIENT_PREFACE.subarray(0, have))) return this.fail(H2Error.PROTOCOL_ERROR);\n", "", SEC),
 ('relay: none', 'gpu-node/src/server/grpc/raw-h2-front.ts', "      if (!take(stream, headers)) relayStream(stream, headers, relaySession());\n", "      if (!take(stream, headers)) stream.close(7);\n", 'gpu-node/src/server/grpc/raw-h2-front.test.ts'),
 ('fast path: not in place (all relayed)', 'gpu-node/src/server/grpc/raw-h2-front.ts', "      if (!take(stream, headers)) relayStream", "      if (stream.id > 0) relayStream", 'gpu-node/src/server/grpc/raw-h2-model-infer.test.ts'),
 ('relay: answer data not paused/flowed (trailers dropped)', 'shared/src/http/raw-http2/relay.ts', "  stream.on('wantTrailers', () => stream.sendTrailers(trailers === undefined ? {} : outgoing(trailers)));\n", "  stream.on('wantTrailers', () => stream.sendTrailers({}));\n", 'gpu-node/src/server/grpc/raw-h2-front.test.ts'),
]
only = sys.argv[1:] 
for name, path, old, new, test in M:
    if only and not any(o in name for o in only): continue
    src = open(path).read()
    assert src.count(old) == 1, (name, src.count(old))
    open(path, 'w').write(src.replace(old, new))
    try:
        r = subprocess.run(['npx', 'vitest', 'run', test, '--testTimeout=15000'], capture_output=True, text=True, timeout=400)
        out = re.sub(r'\x1b\[[0-9;]*m', '', r.stdout + r.stderr)
        m = re.search(r'Tests\s+(.*)', out)
        fails = re.findall(r'(?:×|FAIL)\s+.*?> (.*)', out)
        print(f'{name}: {m.group(1).strip() if m else "?"}', flush=True)
        for f in sorted(set(fails))[:6]: print('   ', f.strip()[:150], flush=True)
    finally:
        open(path, 'w').write(src)
