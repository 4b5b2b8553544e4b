#!/bin/bash
# A/B in turns (issue 20, second pass): base = c0ef227's bundle, head = this branch's bundle, each copied
# to a folder of its own with build-info.json's builtAtMs moved ahead (else bin/launch.js, seeing this
# worktree's sources newer than the base build, runs the sources through tsx instead), node_modules linked
# beside them. Marks on (llm-ttft-marks.mjs), PAIRS pairs per run.
# usage: ab-turns.sh OUT_PREFIX TURNS PAIRS BASE_DIR HEAD_DIR
cd "$(dirname "$0")/../../.."
OUT=$1; TURNS=${2:-3}; PAIRS=${3:-100}; BASE=$4; HEAD=$5
for turn in $(seq 1 "$TURNS"); do
  for side in base head; do
    dir=$BASE; [ "$side" = head ] && dir=$HEAD
    echo "=== turn $turn $side $(date -u +%T)"
    TESSERA_BUNDLE_DIR=$dir LLM_TTFT_PROBE_MARKS=1 LLM_TTFT_PROBE_PAIRS=$PAIRS timeout 500 npm run bench -- llm-ttft-probe --out "$OUT-$side-$turn" 2>&1 | grep -vE '^>|^$|tessera@'
  done
done
echo "=== done $(date -u +%T)"
