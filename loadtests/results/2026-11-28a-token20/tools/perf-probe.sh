#!/bin/bash
# The probe (marks on) with perf recording the gateway on CLOCK_MONOTONIC (the marks' clock), kernel included.
# usage: perf-probe.sh OUT BUNDLE PAIRS SECONDS
OUT=$1; BUNDLE=$2; PAIRS=${3:-600}; SECS=${4:-40}
cd /work/wt-token20
mkdir -p $OUT
BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$BUNDLE LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=$PAIRS LLM_TTFT_PROBE_NODE_FLAGS=--perf-basic-prof \
  npm run bench -- llm-ttft-probe --out $OUT > $OUT/probe.log 2>&1 &
NPM=$!
GW=""
for i in $(seq 1 200); do
  GW=$(ps -eo pid,args --sort=start_time | grep -F "bin/tessera-gateway.js" | grep -F -- "--perf-basic-prof" | grep -v grep | tail -1 | awk '{print $1}')
  [ -n "$GW" ] && grep -q "tessera-bench-llm-ttft" /proc/$GW/cmdline 2>/dev/null && break
  GW=""; sleep 0.5
done
echo "gateway pid $GW"
sleep 15   # warm-up streams and the first pairs
perf record -k CLOCK_MONOTONIC -F 4999 -g -p $GW -o $OUT/perf.data -- sleep $SECS > $OUT/perfrec.log 2>&1
cp /tmp/perf-$GW.map $OUT/ 2>/dev/null
wait $NPM
echo "probe done"
