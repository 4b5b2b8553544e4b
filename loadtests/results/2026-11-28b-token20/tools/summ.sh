#!/bin/bash
# one line per turn: side, added median of pairs, admission wall/CPU, first bytes wall/CPU, cpu per stream, runq
awk '
/^=== turn/ {side=$4" t"$3; load=$NF}
/median of the pairs/ {split($0,a,"median of the pairs. differences: "); med=a[2]}
/CPU .* ms; event loop waiting/ {match($0,/CPU [0-9.]+ ms/); cpu=substr($0,RSTART+4,RLENGTH-7); match($0,/schedstat\) [0-9.]+/); rq=substr($0,RSTART+11,RLENGTH-11)}
/^request event -> node stream opened: p50/ {aw=$8}
/^node first data -> first write to client: p50/ {fw=$10}
/^  request event -> node stream opened: gateway CPU/ {ac=$10}
/^  node first data -> first write to client: gateway CPU/ {fc=$12; printf "%-6s load %-5s added %-9s admission %s/%s µs  first-bytes %s/%s µs  cpu/stream %s ms  runq %s ms\n", side, load, med, aw, ac, fw, fc, cpu, rq}
' "$1"
