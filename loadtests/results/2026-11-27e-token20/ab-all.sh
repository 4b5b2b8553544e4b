#!/bin/bash
# In turns: s35 (base) vs token20 (head). 1) first token at one stream with marks, 3 turns x 100 pairs;
# 2) llm bench per-token CPU at 1/16/64 streams, 2 turns.
cd /work/wt-token20
R=/tmp/token20/ab
mkdir -p $R
BASE=/tmp/lead-ab/s35/dist; HEAD=/tmp/lead-ab/token20/dist
for turn in 1 2 3; do
  for side in base head; do
    dir=$BASE; [ "$side" = head ] && dir=$HEAD
    echo "=== ttft turn $turn $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=100 timeout 500 npm run bench -- llm-ttft-probe --out $R/ttft-$side-$turn 2>&1 | grep -vE '^>|^$|tessera@'
  done
done
for turn in 1 2; do
  for side in base head; do
    dir=$BASE; [ "$side" = head ] && dir=$HEAD
    echo "=== llm turn $turn $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir timeout 600 npm run bench -- llm --duration 8 --out $R/llm-$side-$turn 2>&1 | grep -vE '^>|^$|tessera@' | grep -v "^\[bench llm\] c="
  done
done
echo "=== done $(date -u +%T)"
