#!/bin/bash
# A = the image's flags, D = + the gateway's helper threads at nice 19 (preload /tmp/tail17/nice-workers.mjs); in turns.
cd /work/wt-tail17
while kill -0 $(cat /tmp/tail17/turns.pid) 2>/dev/null; do sleep 2; done
for turn in 4 5 6; do
  for v in D A; do
    case $v in A) f='';; D) f='--import /tmp/tail17/nice-workers.mjs';; esac
    echo "$(date -u +%T) turn $turn $v load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/tail17/turns/log.txt
    BENCH_PORT_BASE=42000 SCHED_N=1500 SCHED_ROUNDS=1 SCHED_WARMUP=2000 SCHED_GATEWAY_FLAGS="$f" SCHED_OUT=/tmp/tail17/turns/$v-$turn \
      timeout 600 node --import tsx loadtests/src/scenarios/gateway-c1-sched.ts > /tmp/tail17/turns/$v-$turn.out 2>&1
  done
done
echo "$(date -u +%T) done2" >> /tmp/tail17/turns/log.txt
