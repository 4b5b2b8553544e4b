#!/bin/bash
# Eighteenth pass quiet-box reruns (run from /work/main after `npm run build`; nothing else running).
# A = 030ec03 (the last stop, /tmp/lead-ab/s41), B = HEAD (/tmp/lead-ab/head).
set -u
cd /work/main
OUT=loadtests/results/2026-11-28b-quiet
mkdir -p $OUT
rm -rf /tmp/lead-ab/head/dist && mkdir -p /tmp/lead-ab/head && cp -r dist /tmp/lead-ab/head/dist
[ -e /tmp/lead-ab/head/node_modules ] || ln -s /work/main/node_modules /tmp/lead-ab/head/node_modules
node -e '
const fs=require("fs");for (const d of ["/tmp/lead-ab/head/dist","/tmp/lead-ab/s41/dist"]){const f=d+"/build-info.json";const j=JSON.parse(fs.readFileSync(f));j.builtAtMs=Date.now()+864e5;fs.writeFileSync(f,JSON.stringify(j));}'
A=/tmp/lead-ab/s41/dist; B=/tmp/lead-ab/head/dist
run() { echo "=== $(date -u +%H:%M:%S) $1 (load $(cut -d' ' -f1 /proc/loadavg))"; shift; "$@"; echo "rc=$? $(date -u +%H:%M:%S)"; }
run "gateway ModelInfer hits and misses, HTTP and gRPC, 150/s and c=1, in turns: s41 vs HEAD" bash -c "BENCH_PORT_BASE=42000 AB_MODE=rate AB_ROUNDS=3 AB_S=5 AB_A=$A AB_B=$B AB_OUT=$OUT/gw-rate node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > $OUT/gw-rate.txt 2>&1"
run "node waves gRPC and HTTP: anchors, s41, HEAD" bash -c "BENCH_PORT_BASE=46000 WAVE_ANCHOR_PROTOCOLS=grpc,http node --import tsx loadtests/src/scenarios/node-wave-anchor.ts $A,$B 3 10 $OUT/wave.json > $OUT/wave.txt 2>&1"
run "node served/ceiling in turns, s41 vs HEAD" bash -c "BENCH_PORT_BASE=46000 timeout 600 node --import tsx loadtests/src/scenarios/batching-ceiling-ab.ts $A $B 3 5 $OUT/ceiling.json > $OUT/ceiling.txt 2>&1"
run "LLM first token at one stream, 3 turns x 100 pairs, s41 vs HEAD" bash -c "loadtests/results/2026-11-28a-token20/ab-ttft.sh $OUT/ttft 3 100 $A $B > $OUT/ttft.txt 2>&1; loadtests/results/2026-11-28a-token20/tools/summ.sh $OUT/ttft.txt > $OUT/ttft-summary.txt 2>&1"
run "llm interval 8 at 64/16/1 streams, s41 vs HEAD in turns" bash -c "BENCH_PORT_BASE=47000 LLM_INTERVAL_AB=$A,$B LLM_INTERVAL_ROUNDS=2 LLM_INTERVAL_LIST=8 timeout 600 npm run bench -- llm-interval --duration 8 --out $OUT/llm-interval > $OUT/llm-interval.log 2>&1"
run "llm-batching figures, bench_decoder (HEAD)" bash -c "BENCH_PORT_BASE=42000 TESSERA_BUNDLE_DIR=$B LLM_BATCHING_MODELS=bench_decoder LLM_BATCHING_PARTS=figures timeout 720 npm run bench -- llm-batching --out $OUT/llm-batching > $OUT/llm-batching.log 2>&1"
run "gateway per core against bare Hono, bare node:http and nginx (HEAD)" bash -c "BENCH_PORT_BASE=44000 TESSERA_BUNDLE_DIR=$B timeout 480 npm run bench -- gateway --per-core --out $OUT/gateway-per-core > $OUT/gateway-per-core.log 2>&1"
echo "=== done $(date -u +%H:%M:%S)"
