#!/usr/bin/env bash
# Makes Debian's PostgreSQL server available to the tests and benchmarks that run against a real
# database, and prints the folder of its binaries (what PG_BIN names): initdb, pg_ctl, postgres.
# The `postgresql` package is installed when missing (as root; anyone else is told to install it).
# Nothing of the system's own cluster is used: scripts/postgres/start.sh runs a private server.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/../lib.sh"

need_debian_packages postgresql
# The newest major version installed (Debian bookworm ships 15).
bin="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d | sort -V | tail -n 1)"
if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then die "no PostgreSQL server binaries under /usr/lib/postgresql"; fi
"$bin/postgres" --version >/dev/null || die "$bin/postgres does not run"
echo "$bin"
