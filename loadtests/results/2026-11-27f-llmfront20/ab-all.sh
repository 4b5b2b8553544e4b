#!/bin/bash
# In turns: s36 (base, main d129547) vs llmfront20 (head: LLM routes on the raw HTTP/1.1 front door).
# 1) added first token at one stream, 3 turns x 100 pairs (no marks: they hook node:http's 'request');
# 2) llm bench (gateway CPU per token at 1/16/64 streams, bare node:http relay anchor in the same run), 3 turns.
cd /work/wt-llmfront20
R=${R:-/tmp/llmfront20/ab}
mkdir -p $R
BASE=/tmp/lead-ab/s36/dist; HEAD=/tmp/lead-ab/llmfront20/dist
for turn in 1 2 3; do
  for side in base head; do
    dir=$BASE; [ "$side" = head ] && dir=$HEAD
    echo "=== ttft turn $turn $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir LLM_TTFT_PROBE_PAIRS=100 timeout 500 npm run bench -- llm-ttft-probe --out $R/ttft-$side-$turn 2>&1 | grep -vE '^>|^$|tessera@'
  done
done
for turn in 1 2 3; do
  for side in base head; do
    dir=$BASE; [ "$side" = head ] && dir=$HEAD
    echo "=== llm turn $turn $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir timeout 600 npm run bench -- llm --duration 8 --out $R/llm-$side-$turn 2>&1 | grep -vE '^>|^$|tessera@' | grep -v "^\[bench llm\] c="
  done
done
echo "=== done $(date -u +%T)"
