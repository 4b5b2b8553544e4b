set -x
cd /work/wt-frame17
BENCH_PORT_BASE=42000 AB_A=/tmp/lead-ab/s31/dist AB_B=/tmp/lead-ab/frame17/dist AB_MODE=rate-4k AB_ROUNDS=6 AB_S=5 AB_OUT=loadtests/results/2026-11-27a-frame17 node --import tsx loadtests/src/scenarios/gateway-interleaved-ab.ts > loadtests/results/2026-11-27a-frame17/gateway-ab-rate-4k.txt 2>&1
for side in a:/tmp/lead-ab/s31/dist b:/tmp/lead-ab/frame17/dist; do
  name=${side%%:*}; dist=${side#*:}
  mkdir -p loadtests/results/2026-11-27a-frame17/profiles/$name-fp32 loadtests/results/2026-11-27a-frame17/profiles/$name-simple
  BENCH_PORT_BASE=42300 BENCH_GATEWAY_CPU_PROF=loadtests/results/2026-11-27a-frame17/profiles/$name-fp32 TESSERA_BUNDLE_DIR=$dist PROFILE_KIND=http-miss PROFILE_MODEL=fp32 PROFILE_RATE=400 PROFILE_S=10 node --import tsx loadtests/src/scenarios/gateway-profile-kind.ts > loadtests/results/2026-11-27a-frame17/profiles/$name-fp32/run.txt 2>&1
  BENCH_PORT_BASE=42300 BENCH_GATEWAY_CPU_PROF=loadtests/results/2026-11-27a-frame17/profiles/$name-simple TESSERA_BUNDLE_DIR=$dist PROFILE_KIND=http-miss PROFILE_RATE=400 PROFILE_S=10 node --import tsx loadtests/src/scenarios/gateway-profile-kind.ts > loadtests/results/2026-11-27a-frame17/profiles/$name-simple/run.txt 2>&1
done
echo ALLDONE
