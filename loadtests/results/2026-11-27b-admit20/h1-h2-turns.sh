#!/bin/bash
# The gateway's node hop over HTTP/2 (default) against HTTP/1.1 (LLM_TTFT_PROBE_NODE_HTTP2=0), same build, in turns.
# usage: h1-h2-turns.sh OUT_PREFIX TURNS PAIRS BUNDLE_DIR
cd "$(dirname "$0")/../../.."
OUT=$1; TURNS=${2:-2}; PAIRS=${3:-100}; DIR=$4
for turn in $(seq 1 "$TURNS"); do
  for side in h2 h1; do
    h2=1; [ "$side" = h1 ] && h2=0
    echo "=== turn $turn $side $(date -u +%T)"
    TESSERA_BUNDLE_DIR=$DIR LLM_TTFT_PROBE_NODE_HTTP2=$h2 LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=$PAIRS timeout 500 npm run bench -- llm-ttft-probe --out "$OUT-$side-$turn" 2>&1 | grep -vE '^>|^$|tessera@'
  done
done
echo "=== done $(date -u +%T)"
