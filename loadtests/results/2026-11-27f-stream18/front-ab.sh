#!/bin/sh
# ModelStreamInfer node µs per response and ServerLive c=1, in turns. A = main (s36), B = this branch; both as named.
set -e
R=loadtests/results/2026-11-27f-stream18
ROUNDS=${1:-5}
node --import tsx loadtests/src/scenarios/node-grpc-front-ab.ts /tmp/lead-ab/s36/dist /tmp/lead-ab/stream18/dist+--grpc-raw-h2=true $ROUNDS 4 $R/front-ab-grpcjs-vs-inplace.json > $R/front-ab-grpcjs-vs-inplace.txt 2>&1
node --import tsx loadtests/src/scenarios/node-grpc-front-ab.ts /tmp/lead-ab/s36/dist+--grpc-raw-h2=true /tmp/lead-ab/stream18/dist+--grpc-raw-h2=true $ROUNDS 4 $R/front-ab-relay-vs-inplace.json > $R/front-ab-relay-vs-inplace.txt 2>&1
