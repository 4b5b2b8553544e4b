#!/usr/bin/env bash
# Runs NVIDIA's own Python example clients (triton-inference-server/client, unchanged) against a running
# `npm start` stack: straight to the node (8000/8001) and through the gateway (8080/8081) with the demo key.
# Needs, outside this repository: a checkout of NVIDIA's client and common repositories, and Debian's
#   python3-grpcio python3-numpy python3-protobuf python3-geventhttpclient python3-rapidjson
#   protobuf-compiler protobuf-compiler-grpc python3-packaging python3-aiohttp
# Usage: DEMO_KEY=tsk_... scripts/triton-client/run-examples.sh /path/to/client /path/to/common [workdir]
# Other ports (a stack started with TESSERA_*_PORT): NODE_HTTP, NODE_GRPC, GATEWAY_HTTP, GATEWAY_GRPC (host:port).
set -euo pipefail
client=${1:?path to triton-inference-server/client}
common=${2:?path to triton-inference-server/common}
work=${3:-/tmp/tessera-triton-client}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3

# tritonclient is built by CMake, which generates its protobuf modules; do the same with protoc.
rm -rf "$work" && mkdir -p "$work/gen"
cp -r "$client/src/python/library" "$work/library"
protoc -I"$common/protobuf" --python_out="$work/gen" --grpc_python_out="$work/gen" \
  --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" grpc_service.proto model_config.proto
lib=$work/library/tritonclient/grpc
cp "$work/gen/model_config_pb2.py" "$lib/"
sed 's/^import model_config_pb2/from tritonclient.grpc import model_config_pb2/' "$work/gen/grpc_service_pb2.py" > "$lib/service_pb2.py"
sed 's/^import grpc_service_pb2 as/from tritonclient.grpc import service_pb2 as/' "$work/gen/grpc_service_pb2_grpc.py" > "$lib/service_pb2_grpc.py"
export PYTHONPATH=$work/library

# Every example whose models `npx tessera-models` writes; the rest need images (densenet_onnx, inception), CUDA or
# system shared memory, or a model-control repository of Triton's exact eight models.
http_examples=(simple_http_infer_client.py simple_http_async_infer_client.py simple_http_aio_infer_client.py
  simple_http_health_metadata.py simple_http_string_infer_client.py simple_http_sequence_sync_infer_client.py
  "simple_http_sequence_sync_infer_client.py -d")
grpc_examples=(simple_grpc_infer_client.py simple_grpc_async_infer_client.py simple_grpc_aio_infer_client.py
  simple_grpc_health_metadata.py simple_grpc_custom_args_client.py simple_grpc_keepalive_client.py
  simple_grpc_string_infer_client.py grpc_explicit_byte_content_client.py grpc_explicit_int_content_client.py
  grpc_explicit_int8_content_client.py simple_grpc_sequence_sync_infer_client.py
  "simple_grpc_sequence_sync_infer_client.py -d" simple_grpc_sequence_stream_infer_client.py
  "simple_grpc_sequence_stream_infer_client.py -d" simple_grpc_aio_sequence_stream_infer_client.py
  simple_grpc_custom_repeat.py)
# These build the raw gRPC stub themselves, so no client plugin can add the key: node only.
node_only="grpc_explicit_byte_content_client.py grpc_explicit_int_content_client.py grpc_explicit_int8_content_client.py"
node_http=${NODE_HTTP:-localhost:8000} node_grpc=${NODE_GRPC:-localhost:8001}
gateway_http=${GATEWAY_HTTP:-localhost:8080} gateway_grpc=${GATEWAY_GRPC:-localhost:8081}
failed=0
run() { # target, runner..., example, url
  local label=$1; shift
  if (cd "$client/src/python/examples" && timeout 60 "$@" > "$work/last.log" 2>&1); then echo "pass  $label"
  else echo "FAIL  $label"; tail -3 "$work/last.log"; failed=$((failed + 1)); fi
}
# shellcheck disable=SC2086 # an entry may carry the example's own flags (-d)
for f in "${http_examples[@]}"; do run "node    HTTP $f" $py $f -u "$node_http"; done
# shellcheck disable=SC2086
for f in "${grpc_examples[@]}"; do run "node    gRPC $f" $py $f -u "$node_grpc"; done
# Through the gateway a model's CORRID is the tenant's node-level id, not the client's (docs/security.md), so the
# -d examples, which check CORRID arithmetic, run straight to the node only.
for f in "${http_examples[@]}"; do
  case "$f" in *" -d") continue ;; esac
  # shellcheck disable=SC2086
  run "gateway HTTP $f" $py "$here/with-key.py" $f -u "$gateway_http"
done
for f in "${grpc_examples[@]}"; do
  case " $node_only " in *" $f "*) continue ;; esac
  case "$f" in *" -d") continue ;; esac
  # shellcheck disable=SC2086
  run "gateway gRPC $f" $py "$here/with-key.py" $f -u "$gateway_grpc"
done
echo "$failed failed"
exit $((failed > 0))
