# shellcheck shell=bash
# shellcheck disable=SC2034 # used by the scripts that source this file
# The single-node cluster's fixed layout, shared by up.sh and down.sh (sourced).
#
# Every address is inside 198.18.0.0/15, the range set aside for network tests (RFC 2544), so nothing
# the cluster does can reach, or be mistaken for, a real network:
#   198.18.0.1/24   the bridge gpucap0: the node's address, where kube-apiserver and the kubelet listen
#   198.18.0.10-    pod addresses (CNI bridge + host-local on 198.18.0.0/24)
#   198.19.0.0/24   Service ClusterIPs; 198.19.0.1 is the `kubernetes` Service in front of the API server
# A filter chain drops any forwarded packet between that range and the rest of the world, so the
# cluster's traffic stays on this machine.

CLUSTER_NAME=gpucap
CLUSTER_NODE=gpucap-node
CLUSTER_BRIDGE=gpucap0
CLUSTER_NODE_IP=198.18.0.1
CLUSTER_POD_SUBNET=198.18.0.0/24
CLUSTER_POD_RANGE_START=198.18.0.10
CLUSTER_SERVICE_SUBNET=198.19.0.0/24
CLUSTER_KUBERNETES_SERVICE_IP=198.19.0.1
CLUSTER_TEST_RANGE=198.18.0.0/15
CLUSTER_API_PORT=6443
CLUSTER_API_URL="https://$CLUSTER_NODE_IP:$CLUSTER_API_PORT"
CLUSTER_ISOLATION_CHAIN=GPUCAP-ISOLATE
# containerd's sockets and run-time state: on /run, emptied by a reboot.
CLUSTER_RUN=/run/gpucap-cluster
CLUSTER_CONTAINERD_SOCKET="$CLUSTER_RUN/containerd/containerd.sock"
# Which folder holds the cluster that is up (one at a time: the addresses are fixed).
CLUSTER_ACTIVE_FILE="$CLUSTER_RUN/active"
