#!/usr/bin/env bash
# podman on the project's own image storage, with the runtime and settings the build machines need
# (containers.sh). Arguments go to podman: `bash scripts/image/podman.sh images`.
set -euo pipefail
# shellcheck source=scripts/image/containers.sh
source "$(dirname "$0")/containers.sh"
gpucap_podman "$@"
