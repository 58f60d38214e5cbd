#!/usr/bin/env bash
# Prints the path of a Prometheus server binary for the side-by-side benchmark (bench/prometheus.ts),
# fetching Debian's `prometheus` package into bench/.cache/prometheus/ the first time. No root and no
# system change: `apt-get download` only fetches the .deb and `dpkg-deb -x` unpacks it (the maintainer
# scripts never run). The binary is a Go program linked against libc only, so none of the package's
# dependencies (the web UI's JavaScript) is needed for the HTTP API.
#
# PROMETHEUS_BIN, when set, is used as it is. Exit status non-zero, with the reason on stderr, when no
# binary could be had: the benchmark then reports itself skipped.
set -euo pipefail

if [[ -n "${PROMETHEUS_BIN:-}" ]]; then
  if [[ -x "$PROMETHEUS_BIN" ]]; then echo "$PROMETHEUS_BIN"; exit 0; fi
  echo "PROMETHEUS_BIN=$PROMETHEUS_BIN is not an executable file" >&2
  exit 1
fi

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$bench_dir/.cache/prometheus"
binary="$cache/usr/bin/prometheus"

# A binary that runs counts as cached; a half-extracted one (interrupted run) is fetched again.
if [[ -x "$binary" ]] && "$binary" --version >/dev/null 2>&1; then
  echo "$binary"
  exit 0
fi

command -v apt-get >/dev/null || { echo "apt-get is not available to download Debian's prometheus package" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "dpkg-deb is not available to unpack Debian's prometheus package" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# As root, apt's download sandbox user (_apt) cannot write to a private temp folder: download as root.
sandbox=()
[[ "$(id -u)" == 0 ]] && sandbox=(-o APT::Sandbox::User=root)
if ! (cd "$work" && apt-get "${sandbox[@]}" -q download prometheus >"$work/download.log" 2>&1); then
  # A fresh machine may have no package lists yet (apt-get update never ran). Fetch Debian's lists
  # into a private folder rather than the system's, and download with those.
  private=(-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  if ! apt-get "${sandbox[@]}" "${private[@]}" -q update >"$work/update.log" 2>&1 ||
    ! (cd "$work" && apt-get "${sandbox[@]}" "${private[@]}" -q download prometheus >>"$work/download.log" 2>&1); then
    echo "apt-get download prometheus failed: $(tail -n 3 "$work/download.log" "$work/update.log" 2>/dev/null | tr '\n' ' ')" >&2
    exit 1
  fi
fi
debs=("$work"/prometheus_*.deb)
deb="${debs[0]}"
[[ -f "$deb" ]] || { echo "apt-get download prometheus produced no .deb" >&2; exit 1; }

rm -rf "$cache"
mkdir -p "$cache"
dpkg-deb -x "$deb" "$cache"
basename "$deb" >"$cache/PACKAGE"
if ! "$binary" --version >/dev/null 2>&1; then
  echo "the unpacked $binary does not run: $("$binary" --version 2>&1 | head -n 1)" >&2
  exit 1
fi
echo "$binary"
