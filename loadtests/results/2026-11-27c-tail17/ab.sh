#!/bin/bash
cd /work/wt-tail17
while kill -0 $(cat /tmp/tail17/turns3.pid) 2>/dev/null; do sleep 2; done
echo "$(date -u +%T) ab rate load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/tail17/ab-log.txt
AB_A=/tmp/lead-ab/s33/dist AB_B=/tmp/lead-ab/tail17/dist AB_MODE=rate AB_ROUNDS=3 AB_OUT=/tmp/tail17/ab-rate BENCH_PORT_BASE=42000 timeout 700 node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > /tmp/tail17/ab-rate.out 2>&1
echo "$(date -u +%T) ab 1000/s load $(cut -d' ' -f1 /proc/loadavg)" >> /tmp/tail17/ab-log.txt
AB_A=/tmp/lead-ab/s33/dist AB_B=/tmp/lead-ab/tail17/dist AB_MODE=4k AB_RATES=1000 AB_ROUNDS=3 AB_OUT=/tmp/tail17/ab-1000 BENCH_PORT_BASE=42000 timeout 700 node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > /tmp/tail17/ab-1000.out 2>&1
echo "$(date -u +%T) ab done" >> /tmp/tail17/ab-log.txt
