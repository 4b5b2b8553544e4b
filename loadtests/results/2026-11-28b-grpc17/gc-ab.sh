#!/bin/bash
# A/B in turns: GC per miss from the gateway's /metrics over 6000 untraced misses, and heap after each scavenge (--trace-gc).
cd /work/wt-grpc17
R=loadtests/results/2026-11-28b-grpc17/gc-ab; mkdir -p $R
for round in 1 2 3; do for side in A B; do dir=/tmp/lead-ab/s41/dist; [ $side = B ] && dir=/tmp/grpc17-b2/dist
 for c in grpc http; do log=/tmp/grpc17-gcab-$side-$c.log; rm -f $log
  BENCH_GATEWAY_LOG=$log BENCH_GATEWAY_NODE_FLAGS="--trace-gc" FRAME_CASES=$c BENCH_PORT_BASE=44100 FRAME_N=300 FRAME_GC_N=6000 FRAME_WARMUP=1000 TESSERA_BUNDLE_DIR=$dir timeout 300 node --import tsx loadtests/src/scenarios/gateway-frame-account.ts > $R/$side-$c-$round.md 2>$R/$side-$c-$round.err
  grep -E "Scavenge|Mark" $log > $R/$side-$c-$round.trace-gc.txt
  echo "$side $c $round: $(grep collections $R/$side-$c-$round.md) | load $(cut -d' ' -f1 /proc/loadavg)"
 done; done; done
