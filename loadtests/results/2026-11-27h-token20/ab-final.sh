#!/bin/bash
# In turns: A = main b114f47 (/tmp/lead-ab/s39/dist), B = token20 (/tmp/lead-ab/token20/dist).
cd /work/wt-token20
R=/tmp/token20/final; mkdir -p $R
echo "=== interval A/B $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
BENCH_PORT_BASE=47000 LLM_INTERVAL_AB=/tmp/lead-ab/s39/dist,/tmp/lead-ab/token20/dist LLM_INTERVAL_ROUNDS=2 LLM_INTERVAL_LIST=1,8 timeout 590 npm run bench -- llm-interval --warmup 6 --duration 8 --concurrency 64,16,1 --out $R/interval 2>&1 | grep -vE '^>|^$|tessera@'
for turn in 1 2 3; do
  for side in base head; do
    dir=/tmp/lead-ab/s39/dist; [ "$side" = head ] && dir=/tmp/lead-ab/token20/dist
    echo "=== ttft turn $turn $side $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
    BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=100 timeout 500 npm run bench -- llm-ttft-probe --out $R/ttft-$side-$turn 2>&1 | grep -vE '^>|^$|tessera@'
  done
done
echo "=== done $(date -u +%T)"
