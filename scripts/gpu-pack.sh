#!/usr/bin/env bash
# Packs everything scripts/gpu-check.sh needs on a bare GPU machine (no Node, no network) into one folder:
# the Node binary running this script, the production bundle (npm run build), onnxruntime-node's Linux
# files with onnxruntime-common, and the Vulkan loader with the libraries the NVIDIA driver's Vulkan ICD
# needs, from Debian's packages (onnxruntime's WebGPU provider runs on Vulkan; a bare GPU machine has the
# driver's ICD but maybe not the loader, nor libglvnd and X11's client libraries that the ICD links to).
# Every large file (the two binaries, the bundle's chunks, the Vulkan libraries) is xz-compressed, as
# FILE.xz, so the folder plus the repository's tracked files stay under the device tool's 64 MiB.
#
# Usage: scripts/gpu-pack.sh [--fast] [DIR]   (default DIR: .gpu-check/ in the repository, ignored by git)
#   --fast   copy without compressing (for tests on this machine; far over 60 MiB)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
compress=1
if [ "${1:-}" = "--fast" ]; then
  compress=0
  shift
fi
pack="${1:-$root/.gpu-check}"
ort="$root/node_modules/onnxruntime-node"
binding="bin/napi-v6/linux/x64"

if [ ! -f "$ort/$binding/libonnxruntime.so.1" ]; then
  echo "gpu-pack: $ort/$binding has no libonnxruntime.so.1; run npm install first" >&2
  exit 1
fi

# A file as is, or xz-compressed to FILE.xz (gpu-check.sh unpacks either).
put() {
  local from="$1" to="$2"
  mkdir -p "$(dirname "$to")"
  if [ "$compress" = 1 ]; then
    xz -T0 -9 -c "$from" > "$to.xz"
  else
    cp "$from" "$to"
  fi
}

rm -rf "$pack"
mkdir -p "$pack/app/node_modules"

(cd "$root" && node scripts/build.mjs --outdir "$pack/app/dist" >/dev/null)
# Source maps and the build record are for development; the pack only runs the bundle.
find "$pack/app/dist" -name '*.map' -delete
if [ "$compress" = 1 ]; then
  find "$pack/app/dist" -type f -size +64k -exec xz -T0 -9 {} +
fi
cp "$root/package.json" "$pack/app/package.json"

mkdir -p "$pack/app/node_modules/onnxruntime-node/$binding"
cp -r "$ort/package.json" "$ort/dist" "$pack/app/node_modules/onnxruntime-node/"
cp "$ort/$binding/onnxruntime_binding.node" "$pack/app/node_modules/onnxruntime-node/$binding/"
put "$ort/$binding/libonnxruntime.so.1" "$pack/app/node_modules/onnxruntime-node/$binding/libonnxruntime.so.1"
cp -r "$root/node_modules/onnxruntime-common" "$pack/app/node_modules/"

put "$(command -v node)" "$pack/bin/node"

# The Vulkan loader and what the NVIDIA driver's Vulkan ICD (libGLX_nvidia) links against, unpacked from
# Debian's packages (apt-get download installs nothing); gpu-check.sh uses only those the machine lacks.
vulkan_packages=(libvulkan1 libglvnd0 libglx0 libgl1 libegl1 libx11-6 libx11-xcb1 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0)
debs="$(mktemp -d)"
if (cd "$debs" && apt-get download "${vulkan_packages[@]}" >/dev/null 2>&1); then
  mkdir -p "$pack/vulkan" "$debs/root"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$debs/root"; done
  # Each library under its soname as a file of its own (a symbolic link would travel as a dangling link).
  for lib in "$debs"/root/usr/lib/x86_64-linux-gnu/*.so.[0-9]; do
    put "$lib" "$pack/vulkan/$(basename "$lib")"
  done
else
  echo "gpu-pack: could not download libvulkan1 and the driver's dependencies; the GPU machine's own Vulkan loader will be used, if it has one" >&2
fi
rm -rf "$debs"

echo "gpu-pack: $pack holds $(du -sm "$pack" | cut -f1) MiB" >&2
