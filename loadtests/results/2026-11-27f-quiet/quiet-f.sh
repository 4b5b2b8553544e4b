#!/bin/bash
# Fourteenth pass quiet-box reruns (run from /work/main after `npm run build`; nothing else running).
# A = d129547 (the last stop's code, /tmp/lead-ab/s36), B = HEAD (/tmp/lead-ab/head).
set -u
cd /work/main
OUT=loadtests/results/2026-11-27f-quiet
mkdir -p $OUT
rm -rf /tmp/lead-ab/head/dist && mkdir -p /tmp/lead-ab/head && cp -r dist /tmp/lead-ab/head/dist
[ -e /tmp/lead-ab/head/node_modules ] || ln -s /work/main/node_modules /tmp/lead-ab/head/node_modules
node -e '
const fs=require("fs");for (const d of ["/tmp/lead-ab/head/dist","/tmp/lead-ab/s36/dist"]){const f=d+"/build-info.json";const j=JSON.parse(fs.readFileSync(f));j.builtAtMs=Date.now()+864e5;fs.writeFileSync(f,JSON.stringify(j));}'
A=/tmp/lead-ab/s36/dist; B=/tmp/lead-ab/head/dist
run() { echo "=== $(date -u +%H:%M:%S) $1 (load $(cut -d' ' -f1 /proc/loadavg))"; shift; "$@"; echo "rc=$? $(date -u +%H:%M:%S)"; }
run "gateway ModelInfer hits and misses, HTTP and gRPC, 150/s and c=1, in turns: s36 vs HEAD with --grpc-raw-h2 true --grpc-upstream-raw-h2 true" bash -c "BENCH_PORT_BASE=42000 AB_MODE=rate AB_ROUNDS=3 AB_S=5 AB_A=$A AB_B=$B AB_B_GATEWAY_ARGS='--grpc-raw-h2 true --grpc-upstream-raw-h2 true' AB_OUT=$OUT/gw-rate node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > $OUT/gw-rate.txt 2>&1"
run "gateway gRPC front: ServerLive c=1 and ModelStreamInfer per response, s36 on grpc-js's port vs HEAD with --grpc-raw-h2 true" bash -c "BENCH_PORT_BASE=42000 node --import tsx loadtests/src/scenarios/gateway-grpc-front-ab.ts A=$A B=$B+--grpc-raw-h2+true --rounds 4 --window 4 --out $OUT/gw-front-ab.json > $OUT/gw-front-ab.txt 2>&1"
run "node gRPC front: ServerLive c=1 and ModelStreamInfer, s36 (grpc-js) vs HEAD with --grpc-raw-h2=true" bash -c "BENCH_PORT_BASE=46000 node --import tsx loadtests/src/scenarios/node-grpc-front-ab.ts $A $B+--grpc-raw-h2=true 3 4 $OUT/node-front-ab.json > $OUT/node-front-ab.txt 2>&1"
run "first token A/B in turns (HEAD: LLM routes on the raw front door)" bash -c "BENCH_PORT_BASE=47000 loadtests/results/2026-11-26g-ttft20/ab-turns.sh $OUT/ttft-ab/run 3 100 $A $B > $OUT/ttft-ab.txt 2>&1; node loadtests/src/scenarios/llm-ttft-ab-table.mjs $OUT/ttft-ab/run > $OUT/ttft-ab-table.txt 2>&1"
for turn in 1 2; do
  for side in A B; do
    dir=$A; [ "$side" = B ] && dir=$B
    run "llm bench turn $turn side $side" bash -c "BENCH_PORT_BASE=47000 TESSERA_BUNDLE_DIR=$dir timeout 600 npm run bench -- llm --duration 8 --out $OUT/llm-$side-$turn > $OUT/llm-$side-$turn.txt 2>&1"
  done
done
run "node gRPC wave: anchors, s36, HEAD with --grpc-raw-h2" bash -c "BENCH_PORT_BASE=46000 WAVE_ANCHOR_PROTOCOLS=grpc node --import tsx loadtests/src/scenarios/node-wave-anchor.ts $A,$B+--grpc-raw-h2=true 3 10 $OUT/wave-grpc.json > $OUT/wave-grpc.txt 2>&1"
echo "=== done $(date -u +%H:%M:%S)"
