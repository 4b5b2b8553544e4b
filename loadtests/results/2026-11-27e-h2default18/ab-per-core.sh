#!/bin/sh
# batching-per-core over gRPC, in turns: A = s35 bundle (grpc-js's port), B = this branch with --grpc-raw-h2=true.
# Usage (from the worktree root): sh loadtests/results/2026-11-27e-h2default18/ab-per-core.sh ROUNDS
R=loadtests/results/2026-11-27e-h2default18
ROUNDS=${1:-3}
export BENCH_PORT_BASE=46000
export BENCH_PER_CORE_ONLY='^(mlp_large pref64|mlp_large pref32-64-2ms|simple) grpc$'
for round in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    if [ "$side" = A ]; then bundle=/tmp/lead-ab/s35/dist; args=''; else bundle=/tmp/lead-ab/h2default18/dist; args='--grpc-raw-h2=true'; fi
    echo "== round $round side $side ($bundle $args) $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    TESSERA_BUNDLE_DIR=$bundle BENCH_NODE_ARGS=$args npm run bench -- batching-per-core --quick --warmup 3 --duration 6 --out "$R/pc-$side$round" 2>&1 | grep -v '^$'
  done
done
echo "== done $(date -u +%H:%M:%S)"
