#!/bin/bash
# strace timelines of c=1 misses, kept raw, for main's bundle and b3: where the log's write(2)s fall.
cd /work/wt-gwtail17
OUT=loadtests/results/2026-11-26g-gwtail17/timeline
mkdir -p $OUT
for side in "$@"; do
  BENCH_PORT_BASE=42000 TESSERA_BUNDLE_DIR=/tmp/gwtail17-ab/$side/dist TIMELINE_N=1000 TIMELINE_OUT=$OUT/$side TIMELINE_KEEP=/tmp/gwtail17-trace-$side.txt \
    timeout 300 node --import tsx loadtests/src/scenarios/gateway-c1-timeline.ts > $OUT/$side.log 2>&1
  port=$(grep -o 'gateway on [0-9]*' $OUT/$side.log | head -1 | awk '{print $3}')
  node loadtests/results/2026-11-26g-gwtail17/log-writes.mjs /tmp/gwtail17-trace-$side.txt $port > $OUT/$side-log-writes.json
done
