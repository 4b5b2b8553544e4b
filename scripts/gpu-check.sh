#!/usr/bin/env bash
# The GPU check, for a bare GPU machine: no Node, no network, one H100- or H200-class GPU. Everything it
# runs comes from the folder scripts/gpu-pack.sh made (Node, the production bundle, onnxruntime-node's
# Linux files, the Vulkan loader) and from this repository's scripts/gpu-check/.
#
# Usage: scripts/gpu-check.sh [PACK_DIR] [OUT_DIR] [-- run-check options]
#   PACK_DIR default .gpu-check/; OUT_DIR default $OUT (the device tool's result folder) or ./gpu-check-out
# Writes OUT_DIR/gpu-check.json, gpu-check.md (the table), node.log and vulkan.txt (what Vulkan saw).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pack="$(cd "${1:-$root/.gpu-check}" && pwd)"
out="${2:-${OUT:-$root/gpu-check-out}}"
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# FILE.xz unpacked (xz, or Python's lzma where xz is missing), or FILE copied.
unpack() {
  local from="$1" to="$2"
  if [ -f "$from.xz" ]; then
    if command -v xz >/dev/null 2>&1; then
      xz -dc "$from.xz" > "$to"
    else
      python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$from.xz" "$to"
    fi
  else
    cp "$from" "$to"
  fi
}

binding="node_modules/onnxruntime-node/bin/napi-v6/linux/x64"
mkdir -p "$work/bin"
unpack "$pack/bin/node" "$work/bin/node"
chmod +x "$work/bin/node"
cp -r "$pack/app" "$work/app"
unpack "$pack/app/$binding/libonnxruntime.so.1" "$work/app/$binding/libonnxruntime.so.1"
rm -f "$work/app/$binding/libonnxruntime.so.1.xz"
# The bundle's compressed chunks, unpacked in place.
while IFS= read -r packed; do
  unpack "${packed%.xz}" "${packed%.xz}"
  rm -f "$packed"
done < <(find "$work/app" -name '*.xz')

# Vulkan for onnxruntime's WebGPU provider: the packed libraries the machine lacks (its own win where it
# has them), the driver's libraries, and the driver's ICD file.
libs=()
if [ -d "$pack/vulkan" ]; then
  mkdir -p "$work/vulkan"
  for lib in "$pack"/vulkan/*; do
    name="$(basename "${lib%.xz}")"
    ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$name " || unpack "$pack/vulkan/$name" "$work/vulkan/$name"
  done
  libs+=("$work/vulkan")
fi
for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -d "$dir" ] && libs+=("$dir")
done
if [ ${#libs[@]} -gt 0 ]; then
  joined="$(IFS=:; echo "${libs[*]}")"
  export LD_LIBRARY_PATH="$joined${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
icd_file=""
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then
    icd_file="$icd"
    break
  fi
done
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -n "$icd_file" ]; then
  export VK_DRIVER_FILES="$icd_file" VK_ICD_FILENAMES="$icd_file"
fi

mkdir -p "$out"
# What Vulkan sees, for when the WebGPU provider finds no adapter: the packed libraries used, the ICD's
# unresolved links, and the loader's own account of one adapter request.
{
  echo "packed libraries used: $(find "$work/vulkan" -type f -printf '%f ' 2>/dev/null)"
  icd_lib="$(ldconfig -p 2>/dev/null | awk '/libGLX_nvidia.so.0 /{print $NF; exit}')"
  [ -n "$icd_lib" ] && { echo "ldd $icd_lib:"; ldd "$icd_lib" 2>&1 | grep -E "not found|GLdispatch|X11" ; }
  "$work/bin/node" "$work/app/dist/tessera-models.js" --out "$work/probe" --only simple >/dev/null
  VK_LOADER_DEBUG=error,warn "$work/bin/node" "$root/scripts/gpu-check/ort-anchor.mjs" --app "$work/app" --providers webgpu \
    --seconds 0 --batch 1 --model "$work/probe/simple/1/model.onnx" 2>&1 | head -60
} > "$out/vulkan.txt" 2>&1 || true

"$work/bin/node" "$root/scripts/gpu-check/run-check.mjs" --app "$work/app" --out "$out" "$@"
