# shellcheck shell=bash
# How the project runs buildah and podman (sourced by scripts/image/*.sh and scripts/cluster/*.sh;
# tests go through podman.sh). On the build machines:
#   - the storage driver is vfs: overlay needs kernel features these machines lack;
#   - the project's images live in their own storage under the cache folder, so they never mix with
#     (or clash with the driver of) the machine's default container storage; its run-time state is on
#     /run, which a reboot empties, as containers/storage expects;
#   - the OCI runtime is Debian's runc: crun refuses the machines' hybrid cgroup layout;
#   - cgroups are managed by cgroupfs and events go to a file: no systemd or journald runs there;
#   - every container gets explicit limits of open files and processes, no higher than this shell's
#     hard limits: podman would ask for 1048576 open files, and without CAP_SYS_RESOURCE runc then
#     fails with "error setting rlimit type 7: operation not permitted". Processes are capped at
#     32768 as well, podman's own limit (asking for more fails the same way, as rlimit type 6).
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

GPUCAP_CONTAINERS="$GPUCAP_CACHE/containers"
CONTAINERS_STORAGE=(--root "$GPUCAP_CONTAINERS/storage" --runroot "${XDG_RUNTIME_DIR:-/run}/gpucap-containers" --storage-driver vfs)

# capped_limit FLAG CAP: this shell's hard limit (ulimit -H FLAG), at most CAP.
capped_limit() {
  local value
  value="$(ulimit -H "$1")"
  if [ "$value" = unlimited ] || [ "$value" -gt "$2" ]; then value="$2"; fi
  echo "$value"
}
CONTAINER_NOFILE="$(capped_limit -n 1048576)"
CONTAINER_NPROC="$(capped_limit -u 32768)"
CONTAINER_ULIMITS=(--ulimit "nofile=$CONTAINER_NOFILE:$CONTAINER_NOFILE" --ulimit "nproc=$CONTAINER_NPROC:$CONTAINER_NPROC")

need_container_tools() { need_debian_packages buildah podman runc; }

# gpucap_buildah ARGS...: buildah on the project's storage; `bud` and `build` get runc and the limits.
gpucap_buildah() {
  case "${1:-}" in
    bud | build) buildah "${CONTAINERS_STORAGE[@]}" "$1" --runtime runc "${CONTAINER_ULIMITS[@]}" "${@:2}" ;;
    *) buildah "${CONTAINERS_STORAGE[@]}" "$@" ;;
  esac
}

# gpucap_podman ARGS...: podman on the project's storage; `run` and `create` get the limits.
gpucap_podman() {
  local global=("${CONTAINERS_STORAGE[@]}" --runtime runc --cgroup-manager cgroupfs --events-backend file)
  case "${1:-}" in
    run | create) podman "${global[@]}" "$1" "${CONTAINER_ULIMITS[@]}" "${@:2}" ;;
    *) podman "${global[@]}" "$@" ;;
  esac
}

# image_exists NAME: whether the project's storage holds an image of that name.
image_exists() { gpucap_buildah inspect --type image "$1" >/dev/null 2>&1; }

# start_image_build NAME: sets `work` to a new scratch folder and `container` to "" (for the working
# container the caller makes with `buildah from`); both are removed when the script exits.
start_image_build() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/gpucap-$1.XXXXXX")"
  container=""
  trap end_image_build EXIT
}
end_image_build() {
  [ -z "${container:-}" ] || gpucap_buildah rm "$container" >/dev/null 2>&1 || true
  rm -rf "${work:-}"
}
