#!/usr/bin/env bash
# Builds the service image from deploy/Dockerfile, unchanged, with buildah, on the base image that
# base.sh builds from Debian and npm (no Docker Hub needed), and prints the image's name:
#   localhost/gpu-capacity-api:<package.json version>
# Options (environment):
#   GPUCAP_IMAGE       another name for the image
#   GPUCAP_BUILD_CA    a CA bundle for npm inside the build, for TLS-inspecting proxies; default: the
#                      cafile of this machine's npm configuration, when it has one. Passed as the build
#                      secret npm_ca, so it never lands in a layer.
# buildah keeps the build's layers (--layers): a rebuild with the same package*.json reuses the
# layer of `npm ci`, which compiles better-sqlite3 (about 3 minutes).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/image/containers.sh
source "$here/containers.sh"
cd "$GPUCAP_REPO"

version="$(node -p 'require("./package.json").version')"
name="${GPUCAP_IMAGE:-localhost/gpu-capacity-api:$version}"
base="$(bash "$here/base.sh")"

secret=()
ca="${GPUCAP_BUILD_CA:-$(npm config get cafile 2>/dev/null || true)}"
if [ -n "$ca" ] && [ "$ca" != null ] && [ "$ca" != undefined ]; then
  [ -s "$ca" ] || die "the CA bundle \"$ca\" (GPUCAP_BUILD_CA, or npm's cafile) is missing or empty"
  secret=(--secret "id=npm_ca,src=$ca")
  log "npm in the build trusts the CA bundle $ca as well (build secret npm_ca)"
fi

revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
log "building $name on $base"
lock_cache image-build
gpucap_buildah bud --layers --pull=never --network host \
  --file deploy/Dockerfile \
  --build-arg NODE_IMAGE="$base" \
  --build-arg IMAGE_VERSION="$version" \
  --build-arg IMAGE_REVISION="$revision" \
  "${secret[@]}" \
  --tag "$name" . >&2
echo "$name"
