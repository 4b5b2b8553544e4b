#!/bin/bash
# The added first token at one stream in turns: A (main's bundle) then B (this branch's), marks on.
# usage: ab-ttft.sh OUT TURNS PAIRS A_DIST B_DIST   (extra env passes through, e.g. LLM_TTFT_PROBE_GATEWAY_CORE=1;
# FLAGS_A / FLAGS_B: Node flags for that side's gateway, e.g. the same bundle twice with V8 flags on one side)
OUT=$1; TURNS=${2:-3}; PAIRS=${3:-100}; A=${4:-/tmp/lead-ab/s40/dist}; B=${5:-/tmp/lead-ab/token20/dist}
cd "$(dirname "$0")/../../.." || exit 1
mkdir -p "$OUT"
for turn in $(seq 1 "$TURNS"); do
  for side in A B; do
    dir=$A; [ "$side" = B ] && dir=$B
    echo "=== turn $turn $side $dir flags [${FLAGS_A:+A:$FLAGS_A}${FLAGS_B:+ B:$FLAGS_B}] $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    flags=$FLAGS_A; [ "$side" = B ] && flags=$FLAGS_B
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=$PAIRS LLM_TTFT_PROBE_NODE_FLAGS="$flags" timeout 500 \
      npm run bench -- llm-ttft-probe --out "$OUT/$side-$turn" 2>&1 | grep -vE '^>|^$|tessera@|^\[bench'
  done
done
echo "=== done $(date -u +%T)"
