#!/usr/bin/env bash
# Builds the pause image (the container that holds each pod's namespaces) from the Kubernetes source
# the cluster's binaries come from, and prints "NAME ARCHIVE": the image's name, which containerd is
# told to use as its sandbox image, and a docker-archive of it for `ctr images import`.
#   - build/pause/linux/pause.c, compiled as its Makefile does (gcc -Os -static -DVERSION=...);
#   - packed FROM scratch with /pause as the entrypoint, as its Dockerfile does.
# Cached under $GPUCAP_CACHE/images, keyed by the Debian source version and pause's own tag.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/image/containers.sh
source "$here/../image/containers.sh"

version="$(bash "$here/../kubernetes/build.sh" | xargs dirname | xargs basename)"
cached="$(find "$GPUCAP_CACHE/images" -maxdepth 1 -name "gpucap-pause_*_$version.docker.tar" 2>/dev/null | head -n 1)"
if [ -n "$cached" ]; then
  tag="$(basename "$cached" | cut -d_ -f2)"
  echo "localhost/gpucap-pause:$tag $cached"
  exit 0
fi

need_container_tools
need_debian_packages gcc libc6-dev
lock_cache pause-image
start_image_build pause

(cd "$work" && apt-get source --download-only "kubernetes=$version" >/dev/null 2>&1 &&
  tar xzf kubernetes_*.orig.tar.gz --wildcards '*/build/pause/*') || die "could not unpack build/pause of Debian's kubernetes $version"
pause_dir="$(find "$work" -mindepth 3 -maxdepth 3 -type d -path '*/build/pause' | head -n 1)"
tag="$(sed -n 's/^TAG *?*= *//p' "$pause_dir/Makefile" | head -n 1)"
[ -n "$tag" ] || die "no TAG in $pause_dir/Makefile"
name="localhost/gpucap-pause:$tag"
archive="$GPUCAP_CACHE/images/gpucap-pause_${tag}_$version.docker.tar"

gcc -Os -Wall -Werror -static -DVERSION="v$tag-gpucap" -o "$work/pause" "$pause_dir/linux/pause.c"
"$work/pause" -v | grep "v$tag" >/dev/null || die "the pause binary does not report v$tag"
container="$(gpucap_buildah from scratch)"
gpucap_buildah copy --quiet "$container" "$work/pause" /pause
gpucap_buildah config --entrypoint '["/pause"]' --cmd '' \
  --label org.opencontainers.image.description="pause $tag from Debian's kubernetes $version, built by scripts/cluster/pause-image.sh" \
  "$container"
gpucap_buildah commit --quiet --rm "$container" "$name" >/dev/null
container=""
mkdir -p "$(dirname "$archive")"
gpucap_buildah push --quiet "$name" "docker-archive:$archive.tmp:$name"
mv "$archive.tmp" "$archive"
log "built $name (cached as $archive)"
echo "$name $archive"
