#!/bin/bash
# A/B in turns of the c1-tail scenario: main's bundle (A) and this branch's (B).
cd /work/wt-gwtail17
OUT=loadtests/results/2026-11-26g-gwtail17/runs
for turn in "$@"; do
  side=${turn%%-*}
  echo "$(date -u +%H:%M:%S) start $turn load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/turns.log
  BENCH_PORT_BASE=42000 TESSERA_BUNDLE_DIR=/tmp/gwtail17-ab/$side/dist TAIL_N=${TAIL_N:-2000} TAIL_ROUNDS=1 TAIL_OUT=$OUT/$turn \
    node --import tsx loadtests/src/scenarios/gateway-c1-tail.ts > $OUT/$turn.log 2>&1
  echo "$(date -u +%H:%M:%S) end $turn rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/turns.log
done
