#!/bin/bash
# Shared settings for qgpu's scripts. Sourced, never run.
# QGPU_CACHE holds everything slow to make (QEMU build, .debs, guest kernel);
# it lives outside the checkout so clean clones reuse it.
set -euo pipefail

QGPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QGPU_CACHE=${QGPU_CACHE:-/var/cache/qgpu}
KVER=6.1.0-56-amd64
BUILD=${QGPU_BUILD:-$QGPU_ROOT/build}
mkdir -p "$QGPU_CACHE" "$BUILD"

log() { printf '[qgpu] %s\n' "$*" >&2; }
die() { printf '[qgpu] error: %s\n' "$*" >&2; exit 1; }

# step NAME CMD...: run a set-up step, failing with a clear message.
step() {
	local name=$1
	shift
	log "$name"
	"$@" || die "set-up step failed: $name"
}
