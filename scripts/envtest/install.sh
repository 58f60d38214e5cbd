#!/usr/bin/env bash
# Makes a real etcd and kube-apiserver available to the integration tests and benchmarks, from
# Debian's packages only, and prints the folder that holds both (what ENVTEST_BIN names):
#   etcd            Debian's etcd-server package (installed when missing)
#   kube-apiserver  built from Debian's kubernetes source by scripts/kubernetes/build.sh (about 20
#                   minutes the first time, then cached)
# The folder is $GPUCAP_CACHE/envtest/<kubernetes version>/bin; it holds links, not copies.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/../lib.sh"

need_debian_packages etcd-server openssl curl
kubernetes_bin="$(bash "$here/../kubernetes/build.sh")"
bin="$GPUCAP_CACHE/envtest/$(basename "$(dirname "$kubernetes_bin")")/bin"
mkdir -p "$bin"
ln -sfn "$(command -v etcd)" "$bin/etcd"
ln -sfn "$kubernetes_bin/kube-apiserver" "$bin/kube-apiserver"
ln -sfn "$kubernetes_bin/kubectl" "$bin/kubectl"
"$bin/etcd" --version >/dev/null || die "$bin/etcd does not run"
"$bin/kube-apiserver" --version >/dev/null || die "$bin/kube-apiserver does not run"
echo "$bin"
