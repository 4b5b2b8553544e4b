#!/bin/bash
# Engine alone: where a newcomer's TTFT goes beside 31 staggered generations (no waves), both prefill orders (core 0).
cd /work/wt-decstep
for m in tiny bench; do for o in shortest_first arrival; do
  echo "$m $o $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  TTFT_STAGGERED=1 TTFT_BUSY_MS=20000 taskset -c 0 node --import tsx loadtests/src/scenarios/llm-engine-probe.ts ttft /tmp/decstep-m/$m-$o | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);delete r.engine;console.log(JSON.stringify(r))})'
done; done
