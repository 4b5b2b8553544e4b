#!/bin/sh
# perf record of one gateway (bundle $2) at $1 streams, interval 8: 8 s after a 20 s warm-up; output under $3.
cd /work/wt-token20
C=$1; DIST=$2; OUT=$3; mkdir -p $OUT
BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$DIST LLM_INTERVAL_NODE_FLAGS=--perf-basic-prof LLM_INTERVAL_ROUNDS=1 LLM_INTERVAL_LIST=8 npm run bench -- llm-interval --warmup 20 --duration 12 --concurrency $C --out $OUT > $OUT/bench.log 2>&1 &
while ! grep -q 'pid' $OUT/bench.log 2>/dev/null; do sleep 0.5; done
PID=$(grep -o 'pid [0-9]*' $OUT/bench.log | head -1 | cut -d' ' -f2)
while ! grep -q 'warm-up' $OUT/bench.log; do sleep 0.2; done
sleep 12
perf record -F 1999 -g -p $PID -o $OUT/perf.data -- sleep 8 > $OUT/perfrec.log 2>&1
wait
perf script -i $OUT/perf.data -F comm,tid,ip,sym > $OUT/script.txt 2>/dev/null
