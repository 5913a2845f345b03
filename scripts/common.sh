#!/bin/bash
# Shared settings for qgpu's scripts. Sourced, never run.
# QGPU_CACHE holds everything slow to make (QEMU build, .debs, guest kernel);
# it lives outside the checkout so clean clones reuse it.
set -euo pipefail

QGPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QGPU_CACHE=${QGPU_CACHE:-/var/cache/qgpu}
BUILD=${QGPU_BUILD:-$QGPU_ROOT/build}
mkdir -p "$QGPU_CACHE" "$BUILD"

log() { printf '[qgpu] %s\n' "$*" >&2; }
die() { printf '[qgpu] error: %s\n' "$*" >&2; exit 1; }

# The guest kernel release (e.g. 6.12.117+deb12-amd64) is named in one place,
# the Makefile's KVER. KVER_NAMED is that name; KVER is the build in use: the
# named one, or, once it has left Debian's archive, the newest build of the
# same series (KSERIES, e.g. 6.12) that host-deps.sh found and recorded in
# $QGPU_CACHE/kver-$KVER_NAMED.
KVER_NAMED=$(sed -n 's/^KVER[[:space:]]*:*=[[:space:]]*\([^[:space:]]*\).*/\1/p' \
	"$QGPU_ROOT/Makefile")
[ -n "$KVER_NAMED" ] || die "no KVER in $QGPU_ROOT/Makefile"
KVER_RECORD=$QGPU_CACHE/kver-$KVER_NAMED
KVER=$KVER_NAMED
if [ -s "$KVER_RECORD" ]; then KVER=$(cat "$KVER_RECORD"); fi
KSERIES=${KVER_NAMED%%[+-]*}
KSERIES=${KSERIES%.*}

# step NAME CMD...: run a set-up step, failing with a clear message.
step() {
	local name=$1
	shift
	log "$name"
	"$@" || die "set-up step failed: $name"
}
