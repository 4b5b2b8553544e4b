#!/bin/bash
# Interleaved engine-alone A/B of the prefill orders on a wave of 31 arrivals with a probe behind it (core 0).
cd /work/wt-decstep
for m in tiny bench; do for i in 1 2; do for o in arrival shortest_first; do
  echo "$m $o run $i $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  WAVE_ROUNDS=$([ $m = tiny ] && echo 10 || echo 5) taskset -c 0 node --import tsx loadtests/src/scenarios/llm-engine-probe.ts wave /tmp/decstep-m/$m-$o
done; done; done
