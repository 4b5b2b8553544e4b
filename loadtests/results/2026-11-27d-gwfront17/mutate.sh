#!/bin/bash
# Each mutation: file, python replace (old -> new), tests to run. Reverts with git checkout after each.
cd /work/wt-gwfront17
run() {
  local name="$1" file="$2" old="$3" new="$4"; shift 4
  cp "$file" /tmp/gwfront17/mut/backup
  python3 - "$file" "$old" "$new" <<'PY'
import sys
p,old,new=sys.argv[1:4]
s=open(p).read()
assert s.count(old)==1, ('not unique', old)
open(p,'w').write(s.replace(old,new))
PY
  local out=$(timeout 300 npx vitest run "$@" 2>&1 | grep -E "Tests |×" | sed 's/\x1b\[[0-9;]*m//g')
  cp /tmp/gwfront17/mut/backup "$file"
  echo "== $name"; echo "$out" | head -40
}
SEC=tests/security/gateway-raw-http1.test.ts
run "allow Transfer-Encoding" shared/src/http/raw-http1/head-reader.ts "const REFUSED_NAMES = new Set(['transfer-encoding', " "const REFUSED_NAMES = new Set([" $SEC
run "allow repeated names" shared/src/http/raw-http1/head-reader.ts "REFUSED_NAMES.has(name) || headers.has(name)" "REFUSED_NAMES.has(name)" $SEC
run "any number as Content-Length" shared/src/http/raw-http1/head-reader.ts "    if (c < 48 || c > 57) return undefined;" "    if (Number.isNaN(Number(value))) return undefined;" $SEC
run "no byte check in the head" shared/src/http/raw-http1/head-reader.ts "} else if (b === LF || (b < SPACE && b !== TAB) || b > 126) return OUTSIDE;" "} else if (b === 0x7f) return OUTSIDE;" $SEC
run "no timeouts" shared/src/http/raw-http1/connection.ts "    const elapsed = now - this.since;" "    const elapsed = 0 * (now - this.since);" $SEC
run "no raw body cap" gateway/src/entry-node.ts "Math.min(config.maxBodyBytes, RAW_MAX_BODY_BYTES)" "config.maxBodyBytes" $SEC
run "x-api-key disagreement not refused" gateway/src/core/auth/api-key.ts "fromHeader !== undefined && fromHeader !== fromAuthorization" "fromHeader !== undefined && fromHeader === ''" $SEC
run "client end not listened (raw)" gateway/src/adapters/node-http/raw-infer-front.ts "    socket.once('end', this.onGone);" "" tests/reliability/gateway-client-gone-upstream.test.ts
run "raw answer drops the request id" gateway/src/adapters/node-http/raw-infer-front.ts "    return this.request.head.headers.get(name) ?? null;" "    return name === 'x-request-id' ? null : (this.request.head.headers.get(name) ?? null);" tests/security/gateway-raw-http1-infer.test.ts gateway/test/native-infer.test.ts
run "switch ignored (raw never attached)" gateway/src/entry-node.ts "(options.httpRawReader ?? config.httpRawReader) ?" "false ?" tests/security/gateway-raw-http1-infer.test.ts tests/reliability/gateway-client-gone-upstream.test.ts
