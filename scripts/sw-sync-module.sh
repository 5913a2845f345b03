#!/bin/bash
# Build sw_sync.ko, the kernel's Sync File Validation Framework
# (CONFIG_SW_SYNC: <debugfs>/sync/sw_sync and its timeline ioctls, which IGT's
# sw_sync test and others use), as an out-of-tree module for the guest
# kernel: Debian's 6.12 config leaves SW_SYNC unset.
#
# Sources: drivers/dma-buf/{sw_sync.c,sync_debug.c,sync_debug.h,sync_trace.h}
# from Debian's linux-source-$KSERIES of the same version as the guest
# kernel's headers, the .deb scripts/checkpatch.sh takes checkpatch.pl from
# ($QGPU_CACHE/debs; downloaded once by `checkpatch.sh --fetch`). They are
# extracted once into $QGPU_CACHE/sw_sync-src-VERSION/ and built unchanged,
# with kmod/sw_sync/Kbuild and kmod/sw_sync/sw_sync_module.c (the module's
# licence, and a stand-in for the one function the kernel does not export),
# against the cached headers.
#
# Output: $BUILD/kmod/sw_sync.ko, rebuilt only when an input changes (key in
# $BUILD/kmod/sw_sync.key). scripts/build-initramfs.sh puts every
# $BUILD/kmod/*.ko into the guest image as an on-demand module: `modprobe
# sw_sync` in the guest.
. "$(dirname "$0")/common.sh"

pkg=linux-source-$KSERIES
kdir=$QGPU_CACHE/headers-$KVER/usr/src/linux-headers-$KVER
ver=$(cat "$QGPU_CACHE/headers-$KVER/version" 2>/dev/null) ||
	die "no headers for $KVER in $QGPU_CACHE: run scripts/host-deps.sh"
deb=$QGPU_CACHE/debs/${pkg}_${ver}_all.deb
files=(sw_sync.c sync_debug.c sync_debug.h sync_trace.h)
glue=$QGPU_ROOT/kmod/sw_sync

# Debian's sources, once per version.
src=$QGPU_CACHE/sw_sync-src-$ver
if [ ! -e "$src/.done" ]; then
	[ -e "$deb" ] || "$QGPU_ROOT/scripts/checkpatch.sh" --fetch
	[ -e "$deb" ] || die "$deb missing after checkpatch.sh --fetch"
	log "extracting drivers/dma-buf/sw_sync.c and sync_debug.c from $(basename "$deb")"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO --wildcards "*/$pkg.tar.xz" |
		tar -xJ -C "$src.tmp" --strip-components=1 \
			"${files[@]/#/$pkg/drivers/dma-buf/}" ||
		die "could not extract the sw_sync sources from $deb"
	for f in "${files[@]}"; do
		[ -e "$src.tmp/drivers/dma-buf/$f" ] || die "$f not found in $deb"
	done
	rm -rf "$src"
	mv "$src.tmp" "$src"
	touch "$src/.done"
fi

out=$BUILD/kmod
mkdir -p "$out"
key=$( {
	echo "$KVER $ver"
	sha256sum "$0" "$glue/Kbuild" "$glue/sw_sync_module.c" "$kdir/Module.symvers"
	(cd "$src" && sha256sum "${files[@]/#/drivers/dma-buf/}")
} | sed "s|$QGPU_ROOT/||; s|$QGPU_CACHE/||" | sha256sum | cut -c1-16)
if [ -e "$out/sw_sync.ko" ] && [ "$(cat "$out/sw_sync.key" 2>/dev/null)" = "$key" ]; then
	log "sw_sync.ko up to date: $out/sw_sync.ko"
	exit 0
fi

# A directory laid out like the kernel tree (see kmod/sw_sync/Kbuild).
b=$out/sw_sync.build
rm -rf "$b" "$out/sw_sync.ko" "$out/sw_sync.key"
mkdir -p "$b/drivers/dma-buf" "$b/include/trace"
cp "$glue/Kbuild" "$glue/sw_sync_module.c" "$b/"
for f in "${files[@]}"; do cp "$src/drivers/dma-buf/$f" "$b/drivers/dma-buf/"; done
log "building sw_sync.ko (Debian $pkg $ver) against $KVER"
make -s -C "$kdir" M="$b" W=e modules || die "sw_sync.ko did not build"
vermagic=$(modinfo -F vermagic "$b/sw_sync.ko")
case $vermagic in
"$KVER "*) ;;
*) die "sw_sync.ko has vermagic '$vermagic', not $KVER" ;;
esac
# (without debug info: the image stays small)
strip --strip-debug -o "$out/sw_sync.ko.tmp" "$b/sw_sync.ko"
mv "$out/sw_sync.ko.tmp" "$out/sw_sync.ko"
echo "$key" > "$out/sw_sync.key"
log "sw_sync.ko ready: $out/sw_sync.ko"
