#!/bin/bash
# base (528e841) and branch versions of the three files, in turns; each micro on core 0
cd /work/wt-grpcfront17
FILES="gateway/src/adapters/grpc-front/call-bridge.ts gateway/src/adapters/grpc/node-breakers.ts gateway/src/adapters/grpc/guarded-call.ts"
F="--expose-gc --max-semi-space-size=256 --min-semi-space-size=256"
for turn in 1 2 3; do
  for side in base branch; do
    if [ $side = base ]; then git checkout -q 528e841 -- $FILES; else git checkout -q HEAD -- $FILES; fi
    echo "== turn $turn $side: header reader (last 3 of 7 rounds)"
    taskset -c 0 node --import tsx loadtests/src/scenarios/grpc-front-header-micro.ts | tail -3
    echo "== turn $turn $side: breaker call (last 3 of 7 rounds)"
    taskset -c 0 node $F --import tsx loadtests/src/scenarios/breaker-call-micro.ts | tail -3
  done
done
git checkout -q HEAD -- $FILES
git status --short
