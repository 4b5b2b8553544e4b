#!/bin/bash
# Gateway CPU per relayed ServerLive call (grpc-js port vs raw front relaying to grpc-js), in turns.
# Usage: live-turns.sh ROUNDS N OUTFILE ; gateway on core 0, h2load on core 1, ports 42300-42399.
set -u
ROUNDS=$1; N=$2; OUT=$3
cd /work/wt-h2front17
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
run_side() { # $1 label, $2 rawflag, $3 port
  TESSERA_BUNDLE_DIR=/tmp/lead-ab/h2front17/dist taskset -c 0 node --min-semi-space-size=32 --max-semi-space-size=32 bin/tessera-gateway.js --config /tmp/h2front17-live/gw.json --port $(( $3 + 50 )) --grpc-port $3 --host 127.0.0.1 --grpc-raw-h2 $2 > /tmp/h2front17-live/gw-$1.log 2>&1 &
  echo $!
}
PA=$(run_side grpcjs false 42301); PB=$(run_side raw true 42302)
sleep 6
for p in $PA $PB; do kill -0 $p || { echo "gateway $p died"; exit 1; }; done
H=(-H 'content-type: application/grpc' -H 'te: trailers' -H 'authorization: Bearer tsk_h2front17-live' -d /tmp/h2front17-live/empty.bin)
URL=/inference.GRPCInferenceService/ServerLive
for port in 42301 42302; do taskset -c 1 h2load -n 2000 -c 1 "${H[@]}" http://127.0.0.1:$port$URL > /dev/null; done  # warm-up
for r in $(seq 1 $ROUNDS); do
  for side in grpcjs raw; do
    if [ $side = grpcjs ]; then P=$PA; PORT=42301; else P=$PB; PORT=42302; fi
    t0=$(ticks $P)
    res=$(taskset -c 1 h2load -n $N -c 1 "${H[@]}" http://127.0.0.1:$PORT$URL | grep -E "requests:|time for request:")
    t1=$(ticks $P)
    us=$(awk -v a=$t0 -v b=$t1 -v n=$N -v t=$TICK 'BEGIN{printf "%.1f", (b-a)/t*1e6/n}')
    echo "round $r $side: gateway CPU $us us/call; $(echo $res | tr '\n' ' ')" | tee -a $OUT
  done
done
kill $PA $PB; wait $PA $PB 2>/dev/null
