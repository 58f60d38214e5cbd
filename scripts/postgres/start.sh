#!/usr/bin/env bash
# Starts a private PostgreSQL server on loopback, in the background, for one test or benchmark:
#   start.sh DIR
# and writes into DIR:
#   env          PG_* variables: PG_URL (postgres://…@127.0.0.1:PORT/gpucap), PG_PORT, PG_DATA, PG_BIN
#   data/        the cluster (initdb on the first start)
#   postgres.log the server's log
# Binaries: $PG_BIN, else what install.sh prints. As root, the server runs as the `postgres` system
# user that Debian's package creates (PostgreSQL refuses to run as root); DIR is made traversable for it.
# Running start.sh again on the same DIR after stop.sh brings the same server back: same port, same
# data, so clients that hold PG_URL reconnect (a database restart, as the fault tests need).
# Tuned for tests: no fsync, no full-page writes. A crash of the machine may lose data; a crash or
# SIGKILL of the server does not (commits still wait for their WAL to reach the OS).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: start.sh DIR}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="${PG_BIN:-}"
[ -n "$bin" ] || bin="$(bash "$here/install.sh")"
for binary in initdb pg_ctl postgres; do
  [ -x "$bin/$binary" ] || { echo "start.sh: no $binary in $bin (run scripts/postgres/install.sh)" >&2; exit 1; }
done

as_server_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}


if [ -f "$dir/env" ]; then
  # shellcheck source=/dev/null
  . "$dir/env"
  port="$PG_PORT"
else
  port="$(node "$here/../free-ports.mjs")"
  if [ "$(id -u)" = 0 ]; then
    chmod o+x "$dir" # the server user must reach data/ inside a private temporary folder
    install -d -o postgres -g postgres -m 700 "$dir/data"
    install -o postgres -g postgres -m 600 /dev/null "$dir/postgres.log"
    # A folder above DIR that the server user cannot pass (a private mktemp -d, say) stops initdb
    # with a bare "Permission denied": say which one.
    runuser -u postgres -- test -x "$dir/data" || {
      blocked="$dir"; up="$dir"
      while [ "$up" != / ]; do runuser -u postgres -- test -x "$up" || blocked="$up"; up="$(dirname "$up")"; done
      echo "start.sh: the postgres user cannot reach $dir: $blocked is not searchable by others (chmod o+x it, or choose DIR elsewhere)" >&2; exit 1
    }
  else
    install -d -m 700 "$dir/data"
  fi
  # Trust on loopback only: the server listens on 127.0.0.1 and nowhere else, for this test alone.
  as_server_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  cat >"$dir/env" <<ENV
PG_PORT=$port
PG_DATA=$dir/data
PG_BIN=$bin
PG_URL=postgres://postgres@127.0.0.1:$port/gpucap
ENV
fi

# No Unix socket: the tests connect over TCP on loopback, like a replica to its database.
# synchronous_commit stays on: a commit must survive a crash of the server, which the fault tests do.
options="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories= -c fsync=off -c full_page_writes=off"
options="$options -c max_connections=200 -c log_min_messages=warning"
as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -o "$options" -w -t 60 start >/dev/null ||
  { tail -n 30 "$dir/postgres.log" >&2; exit 1; }
# The database the service uses; kept across restarts.
as_server_user "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'gpucap'" | grep -q 1 ||
  as_server_user "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE gpucap" >/dev/null
echo "$dir/env"
