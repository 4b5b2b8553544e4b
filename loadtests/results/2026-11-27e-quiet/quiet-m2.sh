#!/bin/bash
# Thirteenth pass, second part: batching-per-core over gRPC in turns, A = s35 (grpc-js's port), B = HEAD with --grpc-raw-h2=true.
set -u
cd /work/main
OUT=loadtests/results/2026-11-27e-quiet
while ! grep -q "^rc=.*" <(tail -1 /work/notes/quiet-m.log) || ! grep -q "gateway per core" /work/notes/quiet-m.log; do sleep 10; done
export BENCH_PORT_BASE=46000
export BENCH_PER_CORE_ONLY='^(mlp_large pref64|mlp_large pref32-64-2ms|simple) grpc$'
for round in 1 2; do
  for side in A B; do
    if [ "$side" = A ]; then bundle=/tmp/lead-ab/s35/dist; args=''; else bundle=/tmp/lead-ab/head/dist; args='--grpc-raw-h2=true'; fi
    echo "== round $round side $side ($bundle $args) $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    TESSERA_BUNDLE_DIR=$bundle BENCH_NODE_ARGS=$args npm run bench -- batching-per-core --quick --warmup 3 --duration 6 --out "$OUT/pc-$side$round" 2>&1 | grep -v '^$'
  done
done
echo "== done $(date -u +%H:%M:%S)"
