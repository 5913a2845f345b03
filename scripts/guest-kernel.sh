#!/bin/bash
# Fetch Debian's linux-image-$KVER-unsigned .deb for the guest and extract it
# (never installed on the host). Result:
# $QGPU_CACHE/kernel-$KVER/{vmlinuz,lib/modules/$KVER}; the modules stay as
# Debian ships them (.ko.xz), build-initramfs.sh unpacks the ones it needs.
. "$(dirname "$0")/common.sh"

pkg=linux-image-$KVER-unsigned
dest=$QGPU_CACHE/kernel-$KVER
if [ -e "$dest/.done" ]; then
	exit 0
fi
mkdir -p "$QGPU_CACHE/debs"
cd "$QGPU_CACHE/debs"
if ! ls "$pkg"_*.deb >/dev/null 2>&1; then
	step "downloading $pkg" apt-get download -q "$pkg"
fi
deb=$(ls "$pkg"_*.deb | sort -V | tail -n 1)
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
step "extracting guest kernel $KVER" dpkg-deb -x "$deb" "$dest.tmp"
[ -d "$dest.tmp/lib/modules/$KVER" ] || die "$deb has no lib/modules/$KVER"
cp "$dest.tmp/boot/vmlinuz-$KVER" "$dest.tmp/vmlinuz"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
touch "$dest/.done"
log "guest kernel at $dest"
