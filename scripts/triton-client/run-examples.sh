#!/usr/bin/env bash
# Runs NVIDIA's own Python example clients (triton-inference-server/client, unchanged) against a running
# `npm start` stack: straight to the node (8000/8001) and through the gateway (8080/8081) with the demo key.
# Needs, outside this repository: a checkout of NVIDIA's client and common repositories, and Debian's
#   python3-grpcio python3-numpy python3-protobuf python3-geventhttpclient python3-rapidjson
#   protobuf-compiler protobuf-compiler-grpc python3-packaging python3-aiohttp
# Usage: DEMO_KEY=tsk_... scripts/triton-client/run-examples.sh /path/to/client /path/to/common [workdir]
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

# Examples whose models the example repository has (simple): the rest need Triton's own example models.
http_examples=(simple_http_infer_client.py simple_http_async_infer_client.py simple_http_aio_infer_client.py simple_http_health_metadata.py)
grpc_examples=(simple_grpc_infer_client.py simple_grpc_async_infer_client.py simple_grpc_aio_infer_client.py
  simple_grpc_health_metadata.py simple_grpc_custom_args_client.py simple_grpc_keepalive_client.py)
failed=0
run() { # target, runner..., example, url
  local label=$1; shift
  if (cd "$client/src/python/examples" && timeout 60 "$@" > "$work/last.log" 2>&1); then echo "pass  $label"
  else echo "FAIL  $label"; tail -3 "$work/last.log"; failed=$((failed + 1)); fi
}
for f in "${http_examples[@]}"; do run "node    HTTP $f" $py "$f" -u localhost:8000; done
for f in "${grpc_examples[@]}"; do run "node    gRPC $f" $py "$f" -u localhost:8001; done
for f in "${http_examples[@]}"; do run "gateway HTTP $f" $py "$here/with-key.py" "$f" -u localhost:8080; done
for f in "${grpc_examples[@]}"; do run "gateway gRPC $f" $py "$here/with-key.py" "$f" -u localhost:8081; done
echo "$failed failed"
exit $((failed > 0))
