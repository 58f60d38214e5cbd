#!/usr/bin/env bash
# Stops the cluster up.sh DIR started and removes everything it made: its processes, its containers
# and their mounts and network namespaces, kube-proxy's rules, the isolation chain, the bridge, and
# DIR itself (GPUCAP_CLUSTER_KEEP=1 keeps DIR, for its logs). Safe to run twice, or on a cluster that
# is half up.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/../lib.sh"
# shellcheck source=scripts/cluster/config.sh
source "$here/config.sh"

dir="${1:?usage: down.sh DIR}"
[ "$(id -u)" = 0 ] || die "needs root"
declare -A recorded=()
if [ -f "$dir/env" ]; then
  while IFS='=' read -r key value; do recorded[$key]="$value"; done <"$dir/env"
fi

# stop NAME...: SIGTERM to each recorded process, SIGKILL to what still runs 10 s later.
stop() {
  local name pid pids=()
  for name in "$@"; do
    pid="${recorded[CLUSTER_PID_$(echo "$name" | tr a-z- A-Z_)]:-}"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && pids+=("$pid")
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null
  for _ in $(seq 100); do
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && continue 2; done
    return 0
  done
  kill -9 "${pids[@]}" 2>/dev/null
}

stop kube-proxy kube-scheduler kube-controller-manager kubelet
# The kubelet is gone: end every container and sandbox through containerd, then containerd itself.
ctr=(ctr --address "$CLUSTER_CONTAINERD_SOCKET" --namespace k8s.io)
if "${ctr[@]}" version >/dev/null 2>&1; then
  for task in $("${ctr[@]}" tasks list --quiet 2>/dev/null); do
    "${ctr[@]}" tasks kill --signal SIGKILL "$task" >/dev/null 2>&1
  done
  sleep 1
  for task in $("${ctr[@]}" tasks list --quiet 2>/dev/null); do
    "${ctr[@]}" tasks delete --force "$task" >/dev/null 2>&1
  done
  for container in $("${ctr[@]}" containers list --quiet 2>/dev/null); do
    "${ctr[@]}" containers delete "$container" >/dev/null 2>&1
  done
fi
stop containerd
# containerd's shims outlive it: end those of this cluster's containerd.
pkill -9 -f "containerd-shim-runc-v2 .*-address $CLUSTER_CONTAINERD_SOCKET" 2>/dev/null
stop kube-apiserver etcd

# Network namespaces of the pods (containerd names them cni-<uuid>) that no process uses any more.
for netns in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ { print $1 }'); do
  [ -z "$(ip netns pids "$netns" 2>/dev/null)" ] && ip netns delete "$netns" 2>/dev/null
done
# Mounts left under the cluster's folders (secret tmpfs, container root filesystems), deepest first.
findmnt -rn -o TARGET | awk -v dir="$dir/" -v run="$CLUSTER_RUN/" 'index($0, dir) == 1 || index($0, run) == 1' |
  sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null; done

# kube-proxy's and the kubelet's KUBE-* chains (no other Kubernetes runs on these machines): first the
# jumps to them from the built-in chains, then the chains themselves.
remove_kube_chains() {
  local tool="$1" table rule chain chains
  for table in filter nat mangle; do
    "$tool" -t "$table" -S >/dev/null 2>&1 || continue
    "$tool" -t "$table" -S | grep -E '^-A [A-Z]+ .*-j KUBE-' | grep -v '^-A KUBE-' | while read -r rule; do
      eval "\"\$tool\" -t \"\$table\" -D ${rule#-A }"
    done
    chains="$("$tool" -t "$table" -S | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }')"
    for chain in $chains; do "$tool" -t "$table" -F "$chain"; done
    for chain in $chains; do "$tool" -t "$table" -X "$chain"; done
  done
}
remove_kube_chains iptables
remove_kube_chains ip6tables
if iptables -L "$CLUSTER_ISOLATION_CHAIN" -n >/dev/null 2>&1; then
  while iptables -D FORWARD -j "$CLUSTER_ISOLATION_CHAIN" 2>/dev/null; do :; done
  iptables -F "$CLUSTER_ISOLATION_CHAIN" && iptables -X "$CLUSTER_ISOLATION_CHAIN"
fi
ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1 && ip link delete "$CLUSTER_BRIDGE"
# The kubelet writes pod logs to /var/log/pods whatever its root folder; remove them if we made it.
if [ "${recorded[CLUSTER_MADE_VAR_LOG_PODS]:-}" = 1 ]; then rm -rf /var/log/pods /var/log/containers; fi
rm -rf "$CLUSTER_RUN/containerd"
[ "$(cat "$CLUSTER_ACTIVE_FILE" 2>/dev/null)" = "$dir" ] && rm -f "$CLUSTER_ACTIVE_FILE"
[ "${GPUCAP_CLUSTER_KEEP:-}" = 1 ] || rm -rf "$dir"
exit 0
