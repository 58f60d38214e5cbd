#!/usr/bin/env bash
# Starts a real single-node Kubernetes cluster on this machine, from Debian's packages and the
# binaries scripts/kubernetes/build.sh builds from Debian's kubernetes source, and imports images:
#   up.sh DIR [IMAGE...]
# IMAGE: names in the project's container storage (scripts/image/), made available to the node, so
# that pods can use them with imagePullPolicy IfNotPresent or Never (no registry is reachable).
#
# What runs (each a process of this machine, logs in DIR/logs):
#   etcd, kube-apiserver (RBAC and Node authorization, ServiceAccount and NodeRestriction admission),
#   kube-controller-manager (with the service-account token controller, so pods get real tokens),
#   kube-scheduler, containerd (Debian's, its own instance and state), kubelet, kube-proxy (iptables).
# Networking: config.sh. Storage: a default StorageClass with hostPath PersistentVolumes under
# DIR/volumes, made here (as kind does with its local-path provisioner): no provisioner comes with
# such a cluster. Writes DIR/kubeconfig (cluster-admin) and DIR/env, and prints DIR.
# Needs root. Stop it with down.sh DIR; a cluster an earlier run left up is stopped first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/image/containers.sh
source "$here/../image/containers.sh"
# shellcheck source=scripts/cluster/config.sh
source "$here/config.sh"

dir="${1:?usage: up.sh DIR [IMAGE...]}"
shift
images=("$@")
[ "$(id -u)" = 0 ] || die "needs root: it starts containerd, a kubelet and kube-proxy, and makes a bridge"
SECONDS=0
phase() { log "[$((SECONDS / 60))m$(printf %02d $((SECONDS % 60)))s] $*"; }

phase "installing what the node needs from Debian"
need_debian_packages containerd runc containernetworking-plugins etcd-server iptables conntrack openssl iproute2 util-linux
kubernetes="$(bash "$here/../kubernetes/build.sh")"
read -r pause_image pause_archive < <(bash "$here/pause-image.sh")

if [ -f "$CLUSTER_ACTIVE_FILE" ]; then
  phase "stopping the cluster an earlier run left in $(cat "$CLUSTER_ACTIVE_FILE")"
  bash "$here/down.sh" "$(cat "$CLUSTER_ACTIVE_FILE")"
fi
ip link show "$CLUSTER_BRIDGE" >/dev/null 2>&1 && die "the bridge $CLUSTER_BRIDGE exists: another cluster is up (run down.sh on its folder)"
rm -rf "$dir"
mkdir -p "$dir"/{pki,etcd,logs,kubelet,containerd,cni/net.d,cni/ipam,volumes,config}
dir="$(cd "$dir" && pwd)"
mkdir -p "$CLUSTER_RUN"
echo "$dir" >"$CLUSTER_ACTIVE_FILE"
# A start that fails half-way stops what it started, and keeps DIR for its logs.
stop_on_failure() {
  local code=$?
  [ "$code" = 0 ] && return
  log "stopping what was started (logs kept in $dir/logs)"
  GPUCAP_CLUSTER_KEEP=1 bash "$here/down.sh" "$dir"
  exit "$code"
}
trap stop_on_failure EXIT
pki="$dir/pki"
config="$dir/config"
env_file="$dir/env"
record() { echo "$1=$2" >>"$env_file"; }
: >"$env_file"
record CLUSTER_DIR "$dir"
record CLUSTER_KUBERNETES_BIN "$kubernetes"
record CLUSTER_API_URL "$CLUSTER_API_URL"
record CLUSTER_NODE "$CLUSTER_NODE"
record CLUSTER_CONTAINERD_SOCKET "$CLUSTER_CONTAINERD_SOCKET"
[ -d /var/log/pods ] || record CLUSTER_MADE_VAR_LOG_PODS 1

# A process of the cluster, in the background, its output in DIR/logs/NAME.log, its pid recorded.
start() {
  local name="$1"
  shift
  "$@" >>"$dir/logs/$name.log" 2>&1 &
  record "CLUSTER_PID_$(echo "$name" | tr a-z- A-Z_)" $!
}
# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds; fails with WHAT and the logs' ends.
wait_for() {
  local what="$1" limit=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$limit" ]; then
      for log_file in "$dir"/logs/*.log; do
        echo "--- end of $log_file" >&2
        tail -n 15 "$log_file" >&2
      done
      die "$what did not happen within $2 s"
    fi
    sleep 0.5
  done
}

phase "network: bridge $CLUSTER_BRIDGE at $CLUSTER_NODE_IP, traffic kept inside $CLUSTER_TEST_RANGE"
ip link add "$CLUSTER_BRIDGE" type bridge
ip addr add "$CLUSTER_NODE_IP/24" dev "$CLUSTER_BRIDGE"
ip link set "$CLUSTER_BRIDGE" up
iptables -N "$CLUSTER_ISOLATION_CHAIN"
iptables -A "$CLUSTER_ISOLATION_CHAIN" -s "$CLUSTER_TEST_RANGE" ! -d "$CLUSTER_TEST_RANGE" -j DROP
iptables -A "$CLUSTER_ISOLATION_CHAIN" ! -s "$CLUSTER_TEST_RANGE" -d "$CLUSTER_TEST_RANGE" -j DROP
iptables -I FORWARD 1 -j "$CLUSTER_ISOLATION_CHAIN"

phase "certificates and credentials"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$CLUSTER_NAME-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
# issue NAME SUBJECT EXTENSIONS: a key and a certificate signed by the cluster's CA.
issue() {
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  printf '%b\n' "$3" >"$pki/$1.ext"
  openssl x509 -req -days 30 -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>/dev/null
}
issue apiserver "/CN=kube-apiserver" "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:$CLUSTER_NODE_IP,IP:$CLUSTER_KUBERNETES_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth"
issue kubelet "/CN=$CLUSTER_NODE" "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:$CLUSTER_NODE_IP,DNS:$CLUSTER_NODE"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/service-account.key" 2>/dev/null
openssl pkey -in "$pki/service-account.key" -pubout -out "$pki/service-account.pub"
# One bearer token per identity (token,user,uid,"groups"). The kubelet is system:node:<node> in
# system:nodes, which the Node authorizer and NodeRestriction scope to its own node and pods; the
# other components are the users that Kubernetes' bootstrap RBAC policy already binds.
token() { openssl rand -hex 24; }
admin_token="$(token)" kubelet_token="$(token)" controller_token="$(token)" scheduler_token="$(token)" proxy_token="$(token)"
cat >"$pki/tokens.csv" <<TOKENS
$admin_token,$CLUSTER_NAME-admin,$CLUSTER_NAME-admin,"system:masters"
$kubelet_token,system:node:$CLUSTER_NODE,system:node:$CLUSTER_NODE,"system:nodes"
$controller_token,system:kube-controller-manager,system:kube-controller-manager
$scheduler_token,system:kube-scheduler,system:kube-scheduler
$proxy_token,system:kube-proxy,system:kube-proxy
TOKENS
chmod 600 "$pki"/*.key "$pki/tokens.csv"
# kubeconfig FILE USER TOKEN
kubeconfig() {
  cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: $CLUSTER_NAME
    cluster:
      server: $CLUSTER_API_URL
      certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
  - name: $2
    user:
      token: $3
contexts:
  - name: $CLUSTER_NAME
    context: { cluster: $CLUSTER_NAME, user: $2 }
current-context: $CLUSTER_NAME
KUBECONFIG
  chmod 600 "$1"
}
kubeconfig "$dir/kubeconfig" "$CLUSTER_NAME-admin" "$admin_token"
kubeconfig "$config/kubelet.kubeconfig" "system:node:$CLUSTER_NODE" "$kubelet_token"
kubeconfig "$config/controller-manager.kubeconfig" system:kube-controller-manager "$controller_token"
kubeconfig "$config/scheduler.kubeconfig" system:kube-scheduler "$scheduler_token"
kubeconfig "$config/proxy.kubeconfig" system:kube-proxy "$proxy_token"
record KUBECONFIG "$dir/kubeconfig"
kubectl=("$kubernetes/kubectl" --kubeconfig "$dir/kubeconfig")

phase "etcd and kube-apiserver on $CLUSTER_API_URL"
ports="$(node "$here/../free-ports.mjs" 4)"
read -r etcd_port peer_port proxy_healthz_port proxy_metrics_port <<<"$ports"
start etcd etcd --name "$CLUSTER_NAME" --data-dir "$dir/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "$CLUSTER_NAME=http://127.0.0.1:$peer_port"
start kube-apiserver "$kubernetes/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address "$CLUSTER_NODE_IP" --advertise-address "$CLUSTER_NODE_IP" \
  --secure-port "$CLUSTER_API_PORT" --insecure-port 0 \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/service-account.pub" \
  --service-account-signing-key-file "$pki/service-account.key" \
  --service-cluster-ip-range "$CLUSTER_SERVICE_SUBNET" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$pki/ca.crt" \
  --kubelet-preferred-address-types InternalIP \
  --allow-privileged=true
wait_for "kube-apiserver readiness" 90 "${kubectl[@]}" get --raw /readyz

phase "kube-controller-manager and kube-scheduler"
start kube-controller-manager "$kubernetes/kube-controller-manager" \
  --kubeconfig "$config/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 0 --port 0 --leader-elect=false \
  --use-service-account-credentials=true \
  --service-account-private-key-file "$pki/service-account.key" --root-ca-file "$pki/ca.crt" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"
start kube-scheduler "$kubernetes/kube-scheduler" --kubeconfig "$config/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 0 --port 0 --leader-elect=false

phase "containerd, with the pause image and ${#images[@]} image(s) imported"
mkdir -p "$CLUSTER_RUN/containerd"
cat >"$config/containerd.toml" <<TOML
# Debian's containerd with its defaults, but for its own folders and socket, and three settings this
# machine needs: restrict_oom_score_adj (no CAP_SYS_RESOURCE: without it every sandbox fails with
# "can't get final child's PID from pipe"), the locally built pause image, and Debian's CNI plugins.
version = 2
root = "$dir/containerd/root"
state = "$CLUSTER_RUN/containerd/state"
[grpc]
  address = "$CLUSTER_CONTAINERD_SOCKET"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
TOML
cat >"$dir/cni/net.d/10-$CLUSTER_NAME.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "$CLUSTER_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CLUSTER_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{ "subnet": "$CLUSTER_POD_SUBNET", "rangeStart": "$CLUSTER_POD_RANGE_START", "gateway": "$CLUSTER_NODE_IP" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    }
  ]
}
CNI
start containerd containerd --config "$config/containerd.toml"
ctr=(ctr --address "$CLUSTER_CONTAINERD_SOCKET" --namespace k8s.io)
wait_for "containerd's socket" 30 "${ctr[@]}" version
"${ctr[@]}" images import "$pause_archive" >/dev/null
for image in "${images[@]}"; do
  archive="$dir/containerd/import.tar"
  gpucap_podman save --quiet --format docker-archive --output "$archive" "$image"
  "${ctr[@]}" images import "$archive" >/dev/null
  rm -f "$archive"
done
for image in "$pause_image" "${images[@]}"; do
  [ -n "$("${ctr[@]}" images list --quiet "name==$image")" ] || die "containerd does not list $image after its import"
done

phase "kubelet ($CLUSTER_NODE) and kube-proxy"
cat >"$config/kubelet.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $CLUSTER_NODE_IP
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $pki/ca.crt }
authorization: { mode: Webhook }
# No systemd, a hybrid cgroup v1 layout and swap on this machine: pods go in cgroupfs cgroups with
# no QoS hierarchy and no node allocatable enforcement.
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
# A shared development machine: evict only when it is really out of room, never collect the
# imported images (nothing could pull them back).
evictionHard: { memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2% }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
volumePluginDir: $dir/kubelet/volume-plugins
KUBELET
start kubelet "$kubernetes/kubelet" --config "$config/kubelet.yaml" \
  --kubeconfig "$config/kubelet.kubeconfig" --root-dir "$dir/kubelet" \
  --container-runtime remote --container-runtime-endpoint "unix://$CLUSTER_CONTAINERD_SOCKET" \
  --hostname-override "$CLUSTER_NODE" --node-ip "$CLUSTER_NODE_IP"
cat >"$config/kube-proxy.yaml" <<PROXY
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $config/proxy.kubeconfig }
hostnameOverride: $CLUSTER_NODE
mode: iptables
clusterCIDR: $CLUSTER_POD_SUBNET
bindAddress: $CLUSTER_NODE_IP
healthzBindAddress: 127.0.0.1:$proxy_healthz_port
metricsBindAddress: 127.0.0.1:$proxy_metrics_port
# The conntrack sysctls are the host's: leave them as they are.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
PROXY
start kube-proxy "$kubernetes/kube-proxy" --config "$config/kube-proxy.yaml"
node_ready() { [ "$("${kubectl[@]}" get node "$CLUSTER_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for "node $CLUSTER_NODE Ready" 120 node_ready
wait_for "the default ServiceAccount's token" 60 "${kubectl[@]}" get serviceaccount default -o jsonpath='{.secrets[0].name}'

phase "default StorageClass and hostPath PersistentVolumes"
storage=$(
  cat <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $CLUSTER_NAME-hostpath
  annotations: { storageclass.kubernetes.io/is-default-class: "true" }
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: Immediate
YAML
  for i in 0 1 2; do
    # World-writable, as kind's local-path provisioner makes its folders: a hostPath volume is not
    # chowned to the pod's fsGroup, and the service runs as 65532.
    mkdir -p "$dir/volumes/pv-$i"
    chmod 0777 "$dir/volumes/pv-$i"
    cat <<YAML
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $CLUSTER_NAME-pv-$i
spec:
  storageClassName: $CLUSTER_NAME-hostpath
  capacity: { storage: 10Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: { path: $dir/volumes/pv-$i, type: Directory }
YAML
  done
)
echo "$storage" | "${kubectl[@]}" apply -f - >/dev/null

phase "up: $("$kubernetes/kubectl" version --short --kubeconfig "$dir/kubeconfig" 2>/dev/null | tr '\n' ' ')"
trap - EXIT
echo "$dir"
