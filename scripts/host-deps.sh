#!/bin/bash
# Install what qgpu needs on a Debian 12 host, from Debian's archive only, and
# settle which guest kernel build is used (the Makefile's KVER, or the newest
# build of its series once that one has left the archive).
# Idempotent: does nothing when everything is already there.
#   scripts/host-deps.sh                  what `make setup` needs
#   scripts/host-deps.sh --debug-kernel   also what building the debug guest
#                                         kernel needs (scripts/debug-kernel.sh)
. "$(dirname "$0")/common.sh"

need_src() {
	! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ &&
	! grep -qs '^deb-src' /etc/apt/sources.list
}

if need_src; then
	log "adding a deb-src entry for Debian's archive"
	cat > /etc/apt/sources.list.d/qgpu-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	rm -f "$QGPU_CACHE/apt-updated"
fi

updated=
apt_update() {
	[ -z "$updated" ] || return 0
	step "apt-get update" apt-get update -q
	touch "$QGPU_CACHE/apt-updated"
	updated=1
}
[ -e "$QGPU_CACHE/apt-updated" ] || apt_update

# (grep without -q: it reads all, so pipefail never sees a SIGPIPE'd writer)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep 'ok installed' > /dev/null; }
in_archive() { apt-cache policy "$1" 2>/dev/null | grep '^  Candidate: [^(]' > /dev/null; }

# Which guest kernel build: the named one while the archive has it (or it is
# already here), else the newest $KSERIES.N build of the same flavour with
# both an image and headers. The choice is recorded for the other scripts and
# kept while its headers and extracted image are here.
resolve_kver() {
	local flavour re v best=
	if { [ -e "$QGPU_CACHE/headers-$KVER_NAMED/.done" ] && [ -e "$QGPU_CACHE/kernel-$KVER_NAMED/.done" ]; } ||
	   { in_archive "linux-image-$KVER_NAMED-unsigned" && in_archive "linux-headers-$KVER_NAMED"; }; then
		rm -f "$KVER_RECORD"
		KVER=$KVER_NAMED
		return
	fi
	# Chosen before and still here: keep it, without asking the archive.
	if [ -s "$KVER_RECORD" ] && [ -e "$QGPU_CACHE/headers-$KVER/.done" ] &&
	   [ -e "$QGPU_CACHE/kernel-$KVER/.done" ]; then
		log "linux-image-$KVER_NAMED-unsigned has left Debian's archive: using $KVER (chosen before)"
		return
	fi
	if [ -z "$updated" ]; then
		apt_update
		resolve_kver
		return
	fi
	flavour=${KVER_NAMED#"$KSERIES".*[+-]}
	re="^linux-image-${KSERIES//./\\.}\\.[0-9]+[+-]${flavour//./\\.}-unsigned\$"
	for v in $(apt-cache search --names-only "$re" | awk '{ print $1 }' |
		   sed 's/^linux-image-//; s/-unsigned$//' | sort -V -r); do
		if in_archive "linux-headers-$v"; then best=$v; break; fi
	done
	[ -n "$best" ] || die "linux-image-$KVER_NAMED-unsigned is not in the archive, nor any other $KSERIES build"
	log "linux-image-$KVER_NAMED-unsigned has left Debian's archive: using $best, the newest $KSERIES build"
	echo "$best" > "$KVER_RECORD"
	KVER=$best
}
resolve_kver

PKGS=(build-essential ninja-build meson pkg-config python3 python3-venv
      libglib2.0-dev libpixman-1-dev libfdt-dev flex bison zlib1g-dev
      dpkg-dev busybox-static cpio gzip xz-utils kmod libdrm-dev
      seabios qemu-system-data
      gcc-12 libelf1 libssl3 pahole
      python3-matplotlib)	# the trace plots (make run, make plots), make bench's
# Building a kernel from source (scripts/debug-kernel.sh), only on request.
if [ "${1:-}" = --debug-kernel ]; then
	PKGS+=(libelf-dev libssl-dev bc)
fi

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive step "apt-get install" \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The guest kernel's headers: extracted into the cache, never installed.
"$(dirname "$0")/kernel-headers.sh"
log "host dependencies present (guest kernel $KVER)"
