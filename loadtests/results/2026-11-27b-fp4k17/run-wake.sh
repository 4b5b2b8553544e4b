#!/bin/bash
# strace/sched account of the gateway's misses, simple vs 4 KB FP32, HTTP and gRPC, base then branch, then base again.
cd /work/wt-fp4k17
R=loadtests/results/2026-11-27b-fp4k17
for pair in ${PAIRS:-"base:/tmp/lead-ab/s32/dist" "branch:/tmp/lead-ab/fp4k17/dist"}; do
  name=${pair%%:*}; dir=${pair#*:}
  uptime
  BENCH_PORT_BASE=42000 TESSERA_BUNDLE_DIR=$dir WAKE_ONLY=gateway WAKE_GATEWAY=http-simple,http-4k,grpc-simple,grpc-4k \
    WAKE_RATE=${RATE:-300} WAKE_S=5 WAKE_IDLE_S=0 WAKE_WARMUP=1500 WAKE_KEEP_STRACE=1 WAKE_OUT=$R/wake-$name-${RATE:-300} \
    timeout 400 node --import tsx loadtests/src/scenarios/gateway-wake-account.ts > /dev/null 2> $R/wake-$name-${RATE:-300}.log
done
