#!/usr/bin/env bash
# Starts a real etcd and kube-apiserver on loopback, in the background, for one test or benchmark:
#   start.sh DIR
# and writes into DIR:
#   kubeconfig         cluster-admin (group system:masters), for the test's own setup
#   kubeconfig-reader  user gpucap-reader, in no group: it may do only what RBAC grants it, which is how
#                      a test proves the chart's rules are enough for the service
#   env                ENVTEST_* variables: URL, ports, pids, tokens, the binaries' folder
#   etcd/, certs/, *.log
# Binaries: $ENVTEST_BIN (etcd, kube-apiserver), else what install.sh prints.
# Running start.sh again on the same DIR after stop.sh brings the same server back: same ports, tokens,
# certificates and etcd data, so clients that hold the kubeconfig reconnect (an API-server restart).
# Extra kube-apiserver flags: ENVTEST_APISERVER_FLAGS (word-split), e.g. --watch-cache=false.
# No controllers, scheduler or kubelet run: tests create objects and move pods by patching status.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: start.sh DIR}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="${ENVTEST_BIN:-}"
[ -n "$bin" ] || bin="$(bash "$here/install.sh")"
for binary in etcd kube-apiserver; do
  [ -x "$bin/$binary" ] || { echo "start.sh: no $binary in $bin (run scripts/envtest/install.sh)" >&2; exit 1; }
done


etcd_pid=""
if [ -f "$dir/env" ]; then
  # shellcheck source=/dev/null
  . "$dir/env"
  etcd_port="$ENVTEST_ETCD_PORT" peer_port="$ENVTEST_PEER_PORT" api_port="$ENVTEST_APISERVER_PORT"
  admin_token="$ENVTEST_ADMIN_TOKEN" reader_token="$ENVTEST_READER_TOKEN"
  # After stop.sh --apiserver-only, etcd is still running with its data.
  if kill -0 "$ENVTEST_ETCD_PID" 2>/dev/null; then etcd_pid="$ENVTEST_ETCD_PID"; fi
else
  ports="$(node "$here/../free-ports.mjs" 3)"
  read -r etcd_port peer_port api_port <<<"$ports"
  admin_token="$(openssl rand -hex 24)" reader_token="$(openssl rand -hex 24)"
  mkdir -p "$dir/certs" "$dir/etcd"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/certs/service-account.key" 2>/dev/null
  openssl pkey -in "$dir/certs/service-account.key" -pubout -out "$dir/certs/service-account.pub"
  # token,user,uid,"group1,group2"
  {
    echo "$admin_token,envtest-admin,envtest-admin,\"system:masters\""
    echo "$reader_token,gpucap-reader,gpucap-reader"
  } >"$dir/certs/tokens.csv"
  chmod 600 "$dir/certs/tokens.csv" "$dir/certs/service-account.key"
fi

if [ -z "$etcd_pid" ]; then
  "$bin/etcd" --name envtest --data-dir "$dir/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "envtest=http://127.0.0.1:$peer_port" >>"$dir/etcd.log" 2>&1 &
  etcd_pid=$!
fi

# Without controllers nothing would create the default ServiceAccount or finalize namespaces, so the
# two admission plugins that wait for them are off. The self-signed serving certificate is written
# to certs/apiserver.crt on the first start and reused after.
# shellcheck disable=SC2086 # ENVTEST_APISERVER_FLAGS is a list of flags
"$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" --insecure-port 0 \
  --cert-dir "$dir/certs" --token-auth-file "$dir/certs/tokens.csv" --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$dir/certs/service-account.pub" \
  --service-account-signing-key-file "$dir/certs/service-account.key" \
  --service-cluster-ip-range 198.19.0.0/16 --allow-privileged=true \
  --disable-admission-plugins ServiceAccount,NamespaceLifecycle \
  ${ENVTEST_APISERVER_FLAGS:-} >>"$dir/apiserver.log" 2>&1 &
api_pid=$!

cat >"$dir/env" <<ENV
ENVTEST_DIR=$dir
ENVTEST_BIN=$bin
ENVTEST_ETCD_PID=$etcd_pid
ENVTEST_APISERVER_PID=$api_pid
ENVTEST_ETCD_PORT=$etcd_port
ENVTEST_PEER_PORT=$peer_port
ENVTEST_APISERVER_PORT=$api_port
ENVTEST_APISERVER_URL=https://127.0.0.1:$api_port
ENVTEST_ADMIN_TOKEN=$admin_token
ENVTEST_READER_TOKEN=$reader_token
ENV

write_kubeconfig() { # FILE USER TOKEN
  cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: envtest
    cluster:
      server: https://127.0.0.1:$api_port
      certificate-authority-data: $(base64 -w0 <"$dir/certs/apiserver.crt")
users:
  - name: $2
    user:
      token: $3
contexts:
  - name: envtest
    context: { cluster: envtest, user: $2 }
current-context: envtest
KUBECONFIG
  chmod 600 "$1"
}

deadline=$((SECONDS + 90))
until [ -f "$dir/certs/apiserver.crt" ] &&
  [ "$(curl -sk --max-time 2 -H "Authorization: Bearer $admin_token" "https://127.0.0.1:$api_port/readyz" 2>/dev/null)" = ok ]; do
  if ! kill -0 "$api_pid" 2>/dev/null; then
    echo "start.sh: kube-apiserver exited; the end of $dir/apiserver.log:" >&2
    tail -n 20 "$dir/apiserver.log" >&2
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "start.sh: kube-apiserver was not ready after 90 s; see $dir/apiserver.log" >&2
    exit 1
  fi
  sleep 0.3
done
write_kubeconfig "$dir/kubeconfig" envtest-admin "$admin_token"
write_kubeconfig "$dir/kubeconfig-reader" gpucap-reader "$reader_token"
echo "$dir"
