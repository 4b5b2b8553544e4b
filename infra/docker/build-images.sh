#!/usr/bin/env bash
# Builds the images from the repository root, the build context every Dockerfile in infra/docker expects.
# Usage: infra/docker/build-images.sh [gateway|node|node-gpu ...]   (default: all three)
# Environment: REGISTRY (default "tessera"), TAG (default "dev"), DOCKER (default "docker").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${REGISTRY:-tessera}"
tag="${TAG:-dev}"
docker="${DOCKER:-docker}"

if [ "$#" -eq 0 ]; then
  set -- gateway node node-gpu
fi

for image in "$@"; do
  dockerfile="$root/infra/docker/$image.Dockerfile"
  if [ ! -f "$dockerfile" ]; then
    echo "build-images: no Dockerfile for '$image' (expected $dockerfile)" >&2
    exit 2
  fi
  echo "building $registry/$image:$tag" >&2
  "$docker" build --file "$dockerfile" --tag "$registry/$image:$tag" "$root"
done
