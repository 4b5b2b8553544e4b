#!/bin/sh
cd /work/wt-token20
C=$1
BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=/tmp/lead-ab/token20/dist LLM_INTERVAL_NODE_FLAGS=--perf-basic-prof LLM_INTERVAL_ROUNDS=1 LLM_INTERVAL_LIST=8 npm run bench -- llm-interval --warmup 20 --duration 12 --concurrency $C --out /tmp/token20/perf$C > /tmp/token20/perf$C.log 2>&1 &
while ! grep -q 'pid' /tmp/token20/perf$C.log 2>/dev/null; do sleep 0.5; done
PID=$(grep -o 'pid [0-9]*' /tmp/token20/perf$C.log | head -1 | cut -d' ' -f2)
while ! grep -q 'warm-up' /tmp/token20/perf$C.log; do sleep 0.2; done
sleep 12
perf record -F 1999 -g -p $PID -o /tmp/token20/perf$C.data -- sleep 8 > /tmp/token20/perfrec$C.log 2>&1
wait
