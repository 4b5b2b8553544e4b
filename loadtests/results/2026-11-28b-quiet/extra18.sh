#!/bin/bash
cd /work/main
OUT=loadtests/results/2026-11-28b-quiet
A=/tmp/lead-ab/s41/dist; B=/tmp/lead-ab/head/dist
echo "=== $(date -u +%H:%M:%S) ceiling-ab 5 rounds (load $(cut -d' ' -f1 /proc/loadavg))"
BENCH_PORT_BASE=46000 timeout 700 node --import tsx loadtests/src/scenarios/batching-ceiling-ab.ts $A $B 5 5 $OUT/ceiling-2.json > $OUT/ceiling-2.txt 2>&1; echo "rc=$? $(date -u +%H:%M:%S)"
echo "=== $(date -u +%H:%M:%S) batching whole box (HEAD) (load $(cut -d' ' -f1 /proc/loadavg))"
BENCH_PORT_BASE=46000 TESSERA_BUNDLE_DIR=$B timeout 600 npm run bench -- batching --out $OUT/batching > $OUT/batching.log 2>&1; echo "rc=$? $(date -u +%H:%M:%S)"
