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
# Every build leaves an image per step, and a changed step leaves the earlier build's images
# dangling. On vfs each is a full copy of its file system: about 1.4 GB per build here, until the
# disk filled up after some 20 builds. Dangling images that the last build did not use go, before
# this build (so that a full disk cannot stop it) and after it; the ones it used (its steps and the
# cache it reused) stay as the next build's cache, listed in $used_file.
used_file="$GPUCAP_CONTAINERS/image-build-used"
prune_unused() {
  local id pruned=0
  for id in $(gpucap_buildah images --filter dangling=true --format '{{.ID}}'); do
    if ! grep -qx "${id:0:11}" "$used_file" 2>/dev/null && gpucap_buildah rmi "$id" >/dev/null 2>&1; then pruned=$((pruned + 1)); fi
  done
  [ "$pruned" -eq 0 ] || log "removed $pruned dangling images that the last build did not use"
}
prune_unused
build_log="$(mktemp "${TMPDIR:-/tmp}/gpucap-image-build.XXXXXX")"
trap 'rm -f "$build_log"' EXIT
gpucap_buildah bud --layers --pull=never --network host \
  --file deploy/Dockerfile \
  --build-arg NODE_IMAGE="$base" \
  --build-arg IMAGE_VERSION="$version" \
  --build-arg IMAGE_REVISION="$revision" \
  "${secret[@]}" \
  --tag "$name" . 2>&1 | tee "$build_log" >&2
{ grep -oE '^--> (Using cache )?[0-9a-f]{11,}' "$build_log" || true; } | awk '{ print substr($NF, 1, 11) }' | sort -u >"$used_file"
prune_unused
echo "$name"
