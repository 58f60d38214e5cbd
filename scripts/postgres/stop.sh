#!/usr/bin/env bash
# Stops the server that start.sh started in DIR, keeping its data and port for a later start.sh:
#   stop.sh DIR [fast|immediate]
# `fast` (default) ends sessions and shuts down cleanly; `immediate` stops at once, as a crash would
# (recovery runs at the next start). Does nothing when it is not running.
set -euo pipefail
dir="${1:?usage: stop.sh DIR [fast|immediate]}"
mode="${2:-fast}"
case "$mode" in fast | immediate) ;; *) echo "stop.sh: mode must be fast or immediate, got \"$mode\"" >&2; exit 2 ;; esac
[ -f "$dir/env" ] || exit 0
# shellcheck source=/dev/null
. "$dir/env"
as_server_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
as_server_user "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1 || exit 0
as_server_user "$PG_BIN/pg_ctl" -D "$PG_DATA" -m "$mode" -w -t 60 stop >/dev/null
