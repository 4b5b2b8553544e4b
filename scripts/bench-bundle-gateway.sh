#!/usr/bin/env bash
# Gateway cache-hit CPU per request, running from the sources through tsx against the production bundle
# (npm run build first): the gateway alone on core 0, the node and tessera-perf (concurrency 16) on core 1,
# the gateway's CPU read from /proc over 6 s of steady load, two rounds. Ports 18100-18180 on 127.0.0.1.
#
# Usage: scripts/bench-bundle-gateway.sh
set -euo pipefail
R="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
W="$(mktemp -d)"
PIDS=()
# Whatever happens, the processes this script started end with it.
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
KEY=tsk_benchbenchbenchbenchbenchbenchbenchbenchben
HASH=$(printf '%s' "$KEY" | sha256sum | cut -d' ' -f1)
cat > "$W"/gw.json <<JSON
{ "tiers": { "standard": { "rateLimits": { "requestsPerSecond": 1000000, "burst": 1000000, "elementsPerSecond": 0, "elementsBurst": 0 } } },
  "tenants": [ { "id": "bench", "name": "bench", "tier": "standard", "keys": [ { "id": "k", "hash": "$HASH" } ] } ],
  "cache": { "enabled": true, "models": { "simple": { "enabled": true } } },
  "metrics": { "requireAdminKey": false } }
JSON
rm -rf "$W"/models; node "$R"/dist/tessera-models.js --out "$W"/models --only simple >/dev/null
taskset -c 1 node "$R"/dist/tessera-node.js --model-repository "$W"/models --http-port 18100 --grpc-port 18101 --metrics-port 18102 --http-address 127.0.0.1 --grpc-address 127.0.0.1 --metrics-address 127.0.0.1 > "$W"/node.log 2>&1 &
NODE=$!
PIDS+=("$NODE")
sleep 4
cpu() { awk '{s+=$14+$15} END {print s}' /proc/"$1"/task/*/stat; }
count() { curl -s 127.0.0.1:18180/metrics | awk '/^tessera_gateway_requests_total\{/ {s+=$NF} END {print s+0}'; }
for round in 1 2; do
for variant in source bundle; do
  if [ $variant = source ]; then
    TESSERA_FROM_SOURCE=1 taskset -c 0 node "$R"/bin/tessera-gateway.js --config "$W"/gw.json --port 18180 --host 127.0.0.1 --node grpc=127.0.0.1:18101,http=127.0.0.1:18100 > "$W"/gw-$variant.log 2>&1 &
  else
    taskset -c 0 node "$R"/dist/tessera-gateway.js --config "$W"/gw.json --port 18180 --host 127.0.0.1 --node grpc=127.0.0.1:18101,http=127.0.0.1:18100 > "$W"/gw-$variant.log 2>&1 &
  fi
  GW=$!
  PIDS+=("$GW")
  for _ in $(seq 1 40); do curl -sf 127.0.0.1:18180/v2/health/ready >/dev/null 2>&1 && break; sleep 0.5; done
  taskset -c 1 node "$R"/dist/tessera-perf.js -m simple -u 127.0.0.1:18180 --api-key $KEY --concurrency-range 16 --warmup-ms 2000 --measurement-interval 4000 --max-trials 3 --json-out "$W"/perf-$variant-$round.json > /dev/null 2>&1 &
  PERF=$!
  sleep 4
  c0=$(cpu $GW); n0=$(count); sleep 6; c1=$(cpu $GW); n1=$(count)
  wait $PERF || true
  echo "$variant round $round: $(( (c1-c0)*10000000/(n1-n0) / 1000 )) us CPU per request, $(( (n1-n0)/6 )) req/s"
  kill $GW; wait $GW 2>/dev/null || true
done
done
kill $NODE
