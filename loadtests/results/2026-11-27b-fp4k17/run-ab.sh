#!/bin/bash
# In turns: A = main 4cbdda4's bundle (/tmp/lead-ab/s32/dist), B = this branch's (/tmp/lead-ab/fp4k17/dist).
# simple and 4 KB FP32 misses back to back in each round, HTTP and gRPC, at 300/s and 150/s.
cd /work/wt-fp4k17
R=loadtests/results/2026-11-27b-fp4k17
uptime > $R/ab-4k.load
BENCH_PORT_BASE=42000 AB_A=/tmp/lead-ab/s32/dist AB_B=/tmp/lead-ab/fp4k17/dist AB_MODE=4k AB_RATES=${AB_RATES:-300,150} \
  AB_ROUNDS=${AB_ROUNDS:-4} AB_S=${AB_S:-5} AB_OUT=$R/ab-4k \
  timeout 900 node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > $R/ab-4k.md 2> $R/ab-4k.log
uptime >> $R/ab-4k.load
