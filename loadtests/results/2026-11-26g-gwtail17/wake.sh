#!/bin/bash
# The wake-up account of the gateway alone (counts per miss and per idle second), main's bundle and this branch's in turns.
cd /work/wt-gwtail17
OUT=loadtests/results/2026-11-26g-gwtail17/wake
mkdir -p $OUT
for turn in "$@"; do
  side=${turn%%-*}
  echo "$(date -u +%H:%M:%S) start $turn load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/turns.log
  BENCH_PORT_BASE=42000 TESSERA_BUNDLE_DIR=/tmp/gwtail17-ab/$side/dist WAKE_ONLY=gateway WAKE_S=8 WAKE_IDLE_S=10 WAKE_WARMUP=3000 \
    WAKE_OUT=$OUT/$turn node --import tsx loadtests/src/scenarios/gateway-wake-account.ts > $OUT/$turn.log 2>&1
  echo "$(date -u +%H:%M:%S) end $turn rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/turns.log
done
