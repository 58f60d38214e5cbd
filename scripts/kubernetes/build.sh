#!/usr/bin/env bash
# Builds the Kubernetes binaries the project runs for real, from Debian's `kubernetes` source package
# with Debian's Go, and prints the folder that holds them:
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl
# The envtest (scripts/envtest/) uses kube-apiserver; the single-node cluster (scripts/cluster/) uses
# them all. One `make` builds the six (15-20 minutes on 2 cores, the first time); the result is
# cached under $GPUCAP_CACHE/kubernetes/<Debian source version>/bin, so a new Debian upload builds
# again and nothing else does.
#
# Why from source: Debian ships no kube-apiserver or kubelet package, and no other registry is
# reachable here. Why the reflect2 swap: the source vendors modern-go/reflect2 1.0.1, which breaks
# under Go >= 1.18 (after a few minutes of bookmark watches kube-apiserver panics on every object it
# encodes, and every create answers INTERNAL_ERROR). Debian's golang-github-modern-go-reflect2-dev
# 1.0.2 fixes it; it goes over the vendored copy before make.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/../lib.sh"

COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2

need_debian_packages golang-go rsync golang-github-modern-go-reflect2-dev make gcc libc6-dev

# Debian's source index: added once (deb-src lines are off by default).
if ! apt-cache showsrc kubernetes 2>/dev/null | grep '^Package: kubernetes' >/dev/null; then
  [ "$(id -u)" = 0 ] || die "Debian's deb-src index is not enabled: add a deb-src entry for bookworm main and run apt-get update"
  log "enabling Debian's source index (deb-src bookworm main)"
  cat >/etc/apt/sources.list.d/gpucap-kubernetes-src.sources <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  apt-get update -qq >&2
fi
version="$(apt-cache showsrc kubernetes | awk '/^Version:/ { print $2 }' | sort -V | tail -n 1)"
[ -n "$version" ] || die "apt-cache showsrc kubernetes names no version"
bin="$GPUCAP_CACHE/kubernetes/$version/bin"

built() {
  local command
  for command in "${COMMANDS[@]}"; do [ -x "$bin/$command" ] || return 1; done
}

build() {
  local work tree
  mkdir -p "$GPUCAP_CACHE/kubernetes"
  work="$(mktemp -d "$GPUCAP_CACHE/kubernetes/build.XXXXXX")"
  # shellcheck disable=SC2064 # the folder is known now
  trap "rm -rf '$work'" EXIT
  log "building ${COMMANDS[*]} from Debian's kubernetes $version (first time only, about 20 minutes)"
  (cd "$work" && apt-get source --download-only "kubernetes=$version" >&2 && tar xzf kubernetes_*.orig.tar.gz)
  tree="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)"
  [ -n "$tree" ] || die "the kubernetes source archive unpacked no kubernetes-* folder"
  rsync -a --delete "$REFLECT2/" "$tree/vendor/github.com/modern-go/reflect2/"
  mkdir -p "$work/go/src/k8s.io" "$work/home"
  ln -s "$tree" "$work/go/src/k8s.io/kubernetes"
  local targets=() command
  for command in "${COMMANDS[@]}"; do targets+=("cmd/$command"); done
  # The binaries report the version that the source archive records (hack/lib/version.sh), so helm's
  # kubeVersion check and kubectl's skew warning see the real one.
  (cd "$tree" && env GOPATH="$work/go" GOFLAGS= GOCACHE="$work/go-build" HOME="$work/home" \
    make WHAT="${targets[*]}" >&2) || die "make WHAT=\"${targets[*]}\" failed (output above)"
  mkdir -p "$bin.tmp"
  for command in "${COMMANDS[@]}"; do cp "$tree/_output/local/bin/linux/amd64/$command" "$bin.tmp/"; done
  rm -rf "$bin" && mv "$bin.tmp" "$bin"
}

if ! built; then
  lock_cache kubernetes-build
  built || build
fi
built || die "the build left no ${COMMANDS[*]} in $bin"
echo "$bin"
