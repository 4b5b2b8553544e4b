#!/bin/bash
# Interleaved engine-alone TTFT A/B of the prefill orders (core 0).
cd /work/wt-decstep
for m in ${MODELS:-tiny bench}; do for i in 1 2; do for o in arrival shortest_first; do
  echo "$m $o run $i $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  TTFT_BUSY_MS=${TTFT_BUSY_MS:-30000} taskset -c 0 node --import tsx loadtests/src/scenarios/llm-engine-probe.ts ttft /tmp/decstep-m/$m-$o | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);const e=r.engine;delete r.engine;r.engine={prefills:e.prefills,prefillRuns:e.prefillRuns,meanFirstTokenMs:e.firstTokenNs/e.prefills/1e6,meanAdmissionWaitMs:e.admissionWaitNs/e.prefills/1e6};console.log(JSON.stringify(r))})'
done; done; done
