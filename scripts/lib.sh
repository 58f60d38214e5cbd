# shellcheck shell=bash
# Helpers shared by scripts/*.sh (sourced, not run).
#
# better-sqlite3 has no reachable prebuilt download here, so every install compiles it from source
# (about 3 minutes on 2 cores). We keep each compiled addon as a tarball in the format
# prebuild-install expects (build/Release/better_sqlite3.node inside
# better-sqlite3-vVERSION-node-vABI-PLATFORM-ARCH.tar.gz), in a folder named after the exact Node
# version whose headers it was compiled against, so that the compile is paid once per machine.
# Keyed by exact Node version, not only by ABI: Node 24.19 changed the header-only
# node::ObjectWrap, and an addon compiled against 24.19+ headers aborts at GC (see with-node24.sh),
# so two builds with the same ABI are not interchangeable.

# Root of the repository (the parent of scripts/).
GPUCAP_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Where the caches live; override with GPUCAP_CACHE_DIR.
GPUCAP_CACHE="${GPUCAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}}"
GPUCAP_PREBUILDS="$GPUCAP_CACHE/gpucap-better-sqlite3"

log() { echo "[$(basename "$0")] $*" >&2; }
die() { log "error: $*"; exit 1; }

# Version of better-sqlite3: the installed one, else the one package-lock.json pins.
better_sqlite3_version() {
  local pkg="$GPUCAP_REPO/node_modules/better-sqlite3/package.json" lock="$GPUCAP_REPO/package-lock.json"
  if [ -f "$pkg" ]; then
    node -p 'require(process.argv[1]).version' "$pkg"
  elif [ -f "$lock" ]; then
    node -p 'require(process.argv[1]).packages["node_modules/better-sqlite3"].version' "$lock"
  else
    die "neither $pkg nor $lock found"
  fi
}

# prebuilt_tarball NODE_BINARY -> path of the cached addon tarball compiled for (and against the
# headers of) that Node.
prebuilt_tarball() {
  local node_bin="$1" version abi platform arch
  version="$("$node_bin" -v)"
  abi="$("$node_bin" -p process.versions.modules)"
  platform="$("$node_bin" -p process.platform)"
  arch="$("$node_bin" -p process.arch)"
  echo "$GPUCAP_PREBUILDS/node-$version/better-sqlite3-v$(better_sqlite3_version)-node-v$abi-$platform-$arch.tar.gz"
}

# copy_tree SOURCE DEST: copies the repository's files without node_modules, .git and whatever git
# ignores (build output, databases, bench caches that may be written while we copy).
copy_tree() {
  local src="$1" dst="$2"
  mkdir -p "$dst"
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
      xargs -0 --no-run-if-empty cp -P --parents -t "$dst")
  else
    tar -C "$src" --exclude-vcs-ignores --exclude=./node_modules --exclude=./.git -cf - . | tar -C "$dst" -xf -
  fi
}

# save_prebuilt PACKAGE_DIR TARBALL: stores PACKAGE_DIR/build/Release/better_sqlite3.node (atomically).
save_prebuilt() {
  local dir="$1" tarball="$2" tmp
  mkdir -p "$(dirname "$tarball")"
  tmp="$(mktemp "$tarball.XXXXXX")"
  tar -C "$dir" -czf "$tmp" build/Release/better_sqlite3.node
  chmod 644 "$tmp"
  mv -f "$tmp" "$tarball"
  log "cached the better-sqlite3 addon at $tarball"
}

# smoke_sqlite NODE_BINARY DIR: opens an in-memory database with DIR's better-sqlite3 under that Node.
smoke_sqlite() {
  (cd "$2" && "$1" -e '
    const Database = require("better-sqlite3");
    const db = new Database(":memory:");
    const { v } = db.prepare("select sqlite_version() as v").get();
    console.log("better-sqlite3 loads under Node " + process.version + " (ABI " + process.versions.modules + "), SQLite " + v);
  ')
}
