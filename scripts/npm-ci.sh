#!/usr/bin/env bash
# `npm ci` that reuses a better-sqlite3 addon compiled earlier on this machine for the same
# better-sqlite3 version and Node version, instead of compiling it again (about 3 minutes).
#
# How: better-sqlite3's install script is `prebuild-install || node-gyp rebuild`. prebuild-install
# looks for a "local prebuild" tarball before it tries to download one; we point it at our cache
# with npm_config_better_sqlite3_local_prebuilds (npm warns `Unknown env config
# "better-sqlite3-local-prebuilds"`: harmless; prebuild-install reads the variable itself. Its
# own `prebuild-install_local-prebuilds` would not do: sh drops variables with a `-` in the name).
# prebuild-install loads the unpacked addon to check it; if the tarball is missing or bad it falls
# back to compiling. After the install we load the addon once more and, if no tarball was cached,
# cache the one just compiled. Set GPUCAP_NO_PREBUILD_CACHE=1 to always compile.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$GPUCAP_REPO"

if [ "${GPUCAP_NO_PREBUILD_CACHE:-}" = 1 ]; then
  npm ci "$@"
  smoke_sqlite node "$GPUCAP_REPO"
  exit 0
fi

tarball="$(prebuilt_tarball node)"
mkdir -p "$(dirname "$tarball")"
npm_config_better_sqlite3_local_prebuilds="$(dirname "$tarball")" npm ci "$@"
if ! smoke_sqlite node "$GPUCAP_REPO"; then
  log "better-sqlite3 does not load; dropping $tarball and compiling it again"
  rm -f "$tarball"
  npm rebuild better-sqlite3
  smoke_sqlite node "$GPUCAP_REPO" || die "better-sqlite3 still does not load after a rebuild"
fi
# node-gyp leaves a Makefile in build/; an addon unpacked by prebuild-install comes alone.
if [ -f "$GPUCAP_REPO/node_modules/better-sqlite3/build/Makefile" ] || [ ! -f "$tarball" ]; then
  save_prebuilt "$GPUCAP_REPO/node_modules/better-sqlite3" "$tarball"
else
  log "better-sqlite3 addon unpacked from the cache $tarball (not compiled)"
fi
