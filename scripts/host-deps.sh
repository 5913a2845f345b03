#!/bin/bash
# Install what qgpu needs on a Debian 12 host, from Debian's archive only.
# Idempotent: does nothing when everything is already there.
. "$(dirname "$0")/common.sh"

PKGS=(build-essential ninja-build meson pkg-config python3 python3-venv
      libglib2.0-dev libpixman-1-dev libfdt-dev flex bison zlib1g-dev
      dpkg-dev busybox-static cpio gzip kmod libdrm-dev
      seabios qemu-system-data
      linux-headers-$KVER)

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

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ ! -e "$QGPU_CACHE/apt-updated" ] || [ ${#missing[@]} -gt 0 ]; then
	step "apt-get update" apt-get update -q
	touch "$QGPU_CACHE/apt-updated"
fi
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive step "apt-get install" \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
log "host dependencies present"
