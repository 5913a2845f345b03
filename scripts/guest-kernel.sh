#!/bin/bash
# Fetch Debian's linux-image .deb for the guest and extract it (never installed
# on the host). Result: $QGPU_CACHE/kernel-$KVER/{vmlinuz,lib/modules/$KVER}.
. "$(dirname "$0")/common.sh"

dest=$QGPU_CACHE/kernel-$KVER
if [ -e "$dest/.done" ]; then
	exit 0
fi
mkdir -p "$QGPU_CACHE/debs"
cd "$QGPU_CACHE/debs"
if ! ls linux-image-"$KVER"_*.deb >/dev/null 2>&1; then
	step "downloading linux-image-$KVER" apt-get download -q "linux-image-$KVER"
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
step "extracting guest kernel" dpkg-deb -x linux-image-"$KVER"_*.deb "$dest.tmp"
cp "$dest.tmp/boot/vmlinuz-$KVER" "$dest.tmp/vmlinuz"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
touch "$dest/.done"
log "guest kernel at $dest"
