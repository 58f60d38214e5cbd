#!/usr/bin/env bash
# Stops what start.sh DIR started, by the pids it recorded in DIR/env, and leaves DIR as it is, so
# that start.sh DIR brings the same server back (an API-server restart, for a test).
#   stop.sh DIR                   kube-apiserver and etcd
#   stop.sh --apiserver-only DIR  kube-apiserver alone; etcd keeps running
# SIGTERM first; whatever still runs after 5 s gets SIGKILL.
set -uo pipefail
apiserver_only=false
if [ "${1:-}" = --apiserver-only ]; then apiserver_only=true; shift; fi
dir="${1:?usage: stop.sh [--apiserver-only] DIR}"
[ -f "$dir/env" ] || exit 0
# shellcheck source=/dev/null
. "$dir/env"
pids=("$ENVTEST_APISERVER_PID")
$apiserver_only || pids+=("$ENVTEST_ETCD_PID")

running() { local pid; for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
kill "${pids[@]}" 2>/dev/null
for _ in $(seq 50); do running || exit 0; sleep 0.1; done
kill -9 "${pids[@]}" 2>/dev/null
exit 0
