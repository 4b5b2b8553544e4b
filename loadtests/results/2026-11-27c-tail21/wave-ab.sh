#!/bin/sh
# llm-wave-ttft.ts in turns, A = main's bundle (s33), B = tail21's (first-token hand-off), each run with its
# windows' middles under perf record (wave-sched.py reads them). Usage: wave-ab.sh ROUNDS WINDOW_S OUTDIR
set -e
ROUNDS=${1:-3}; WINDOW=${2:-20}; OUT=${3:-/tmp/tail21/ab}
cd /work/wt-tail21
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then ORDER="A B"; else ORDER="B A"; fi
  for side in $ORDER; do
    if [ "$side" = A ]; then DIR=/tmp/lead-ab/s33/dist; else DIR=/tmp/lead-ab/tail21/dist; fi
    mkdir -p "$OUT/$side-r$r"
    echo "$(date -u +%T) round $r $side" >&2
    BENCH_PORT_BASE=44000 TESSERA_BUNDLE_DIR=$DIR LLM_WAVE_SCHED_DIR="$OUT/$side-r$r" LLM_WAVE_SCHED_S=4 \
      node --import tsx loadtests/src/scenarios/llm-wave-ttft.ts "$WINDOW" "$OUT/$side-r$r/wave.json" > /dev/null 2>"$OUT/$side-r$r/err.txt"
  done
done
