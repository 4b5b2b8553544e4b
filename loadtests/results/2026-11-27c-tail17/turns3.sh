#!/bin/bash
# On main's frozen bundle (/tmp/lead-ab/s33/dist): A = the image's flags, D = + helper threads at nice 19 (preload); in turns.
cd /work/wt-tail17
while pgrep -f 'loadtests/src/scenarios/gateway-c1-sched.ts' > /dev/null; do sleep 2; done
for turn in 7 8 9; do
  for v in A D; do
    case $v in A) f='';; D) f='--import /tmp/tail17/nice-workers.mjs';; esac
    echo "$(date -u +%T) turn $turn $v load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/tail17/turns3/log.txt
    TESSERA_BUNDLE_DIR=/tmp/lead-ab/s33/dist BENCH_PORT_BASE=42000 SCHED_N=1500 SCHED_ROUNDS=1 SCHED_WARMUP=2000 SCHED_GATEWAY_FLAGS="$f" SCHED_OUT=/tmp/tail17/turns3/$v-$turn \
      timeout 600 node --import tsx loadtests/src/scenarios/gateway-c1-sched.ts > /tmp/tail17/turns3/$v-$turn.out 2>&1
  done
done
echo "$(date -u +%T) done3" >> /tmp/tail17/turns3/log.txt
