#!/bin/bash
# Flags in turns: A = the image's flags, B = + --single-threaded-gc, C = + --v8-pool-size=1; one round of 1500 per run.
cd /work/wt-tail17
for turn in 1 2 3; do
  for v in A B C; do
    case $v in A) f='';; B) f='--single-threaded-gc';; C) f='--v8-pool-size=1';; esac
    echo "$(date -u +%T) turn $turn $v load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/tail17/turns/log.txt
    BENCH_PORT_BASE=42000 SCHED_N=1500 SCHED_ROUNDS=1 SCHED_WARMUP=2000 SCHED_GATEWAY_FLAGS="$f" SCHED_OUT=/tmp/tail17/turns/$v-$turn \
      timeout 600 node --import tsx loadtests/src/scenarios/gateway-c1-sched.ts > /tmp/tail17/turns/$v-$turn.out 2>&1
  done
done
echo "$(date -u +%T) done" >> /tmp/tail17/turns/log.txt
