#!/bin/bash
# Thirteenth pass quiet-box reruns (run from /work/main after `npm run build`; nothing else running).
# A = 5ad80ed (the last stop, /tmp/lead-ab/s35), B = HEAD (/tmp/lead-ab/head).
set -u
cd /work/main
OUT=loadtests/results/2026-11-27e-quiet
mkdir -p $OUT
rm -rf /tmp/lead-ab/head/dist && mkdir -p /tmp/lead-ab/head && cp -r dist /tmp/lead-ab/head/dist
[ -e /tmp/lead-ab/head/node_modules ] || ln -s /work/main/node_modules /tmp/lead-ab/head/node_modules
node -e '
const fs=require("fs");for (const d of ["/tmp/lead-ab/head/dist","/tmp/lead-ab/s35/dist"]){const f=d+"/build-info.json";const j=JSON.parse(fs.readFileSync(f));j.builtAtMs=Date.now()+864e5;fs.writeFileSync(f,JSON.stringify(j));}'
run() { echo "=== $(date -u +%H:%M:%S) $1 (load $(cut -d' ' -f1 /proc/loadavg))"; shift; "$@"; echo "rc=$? $(date -u +%H:%M:%S)"; }
run "gateway HTTP misses c=1/150/600 in turns s35 vs HEAD" bash -c "BENCH_PORT_BASE=44000 AB_MODE=miss17 AB_ROUNDS=3 AB_S=5 AB_A=/tmp/lead-ab/s35/dist AB_B=/tmp/lead-ab/head/dist AB_OUT=$OUT/gw-miss17 node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > $OUT/gw-miss17.txt 2>&1"
run "gateway hits and misses HTTP and gRPC at 150/s and c=1 in turns, s35 vs HEAD with --grpc-raw-h2 true" bash -c "BENCH_PORT_BASE=42000 AB_MODE=rate AB_ROUNDS=3 AB_S=5 AB_A=/tmp/lead-ab/s35/dist AB_B=/tmp/lead-ab/head/dist AB_B_GATEWAY_ARGS='--grpc-raw-h2 true' AB_OUT=$OUT/gw-rate node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > $OUT/gw-rate.txt 2>&1"
run "first token A/B in turns" bash -c "BENCH_PORT_BASE=47000 loadtests/results/2026-11-26g-ttft20/ab-turns.sh $OUT/ttft-ab/run 3 100 /tmp/lead-ab/s35/dist /tmp/lead-ab/head/dist > $OUT/ttft-ab.txt 2>&1; node loadtests/src/scenarios/llm-ttft-ab-table.mjs $OUT/ttft-ab/run > $OUT/ttft-ab-table.txt 2>&1"
run "node gRPC front: ServerLive c=1 and ModelStreamInfer, s35 vs HEAD with --grpc-raw-h2=true" bash -c "BENCH_PORT_BASE=46000 node --import tsx loadtests/src/scenarios/node-grpc-front-ab.ts /tmp/lead-ab/s35/dist /tmp/lead-ab/head/dist+--grpc-raw-h2=true 3 4 $OUT/node-front-ab.json > $OUT/node-front-ab.txt 2>&1"
run "node gRPC wave: anchors, s35, HEAD with --grpc-raw-h2" bash -c "BENCH_PORT_BASE=46000 WAVE_ANCHOR_PROTOCOLS=grpc node --import tsx loadtests/src/scenarios/node-wave-anchor.ts /tmp/lead-ab/s35/dist,/tmp/lead-ab/head/dist+--grpc-raw-h2=true 3 10 $OUT/wave-grpc.json > $OUT/wave-grpc.txt 2>&1"
run "gateway per core" bash -c "npm run bench -- gateway --per-core --out $OUT > $OUT/gateway-run.txt 2>&1"
