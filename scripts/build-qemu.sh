#!/bin/bash
# Build qemu-system-x86_64 (and our qtest) from Debian's QEMU 7.2 source with
# the qgpu device wired in. Cached in $QGPU_CACHE keyed by the QEMU source
# version, the hook script and the configure flags, so a warm run only
# relinks after a device edit.
. "$(dirname "$0")/common.sh"

CONFIGURE_FLAGS=(--target-list=x86_64-softmmu --without-default-features
		 --disable-docs --disable-user --enable-werror)

dl=$QGPU_CACHE/qemu-dl
mkdir -p "$dl"
if ! ls "$dl"/qemu_*.dsc >/dev/null 2>&1; then
	(cd "$dl" && step "apt-get source qemu" apt-get source --download-only -q qemu)
fi
dsc=$(ls "$dl"/qemu_*.dsc | sort | tail -n 1)
ver=$(basename "$dsc" .dsc)
key=$( (echo "$ver"; cat "$QGPU_ROOT/scripts/qemu-hook.sh"; echo "${CONFIGURE_FLAGS[*]}") |
	sha256sum | cut -c1-12)
top=$QGPU_CACHE/qemu-$key
src=$top/src
bld=$top/build

if [ ! -e "$src/.extracted" ]; then
	rm -rf "$src"
	mkdir -p "$top"
	step "unpacking $ver (with Debian's patches)" dpkg-source -x "$dsc" "$src" >/dev/null
	touch "$src/.extracted"
fi
step "hooking qgpu into QEMU" bash "$QGPU_ROOT/scripts/qemu-hook.sh" "$src"
if [ ! -e "$bld/.configured" ]; then
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && step "configuring QEMU" "$src/configure" "${CONFIGURE_FLAGS[@]}") \
		> "$top/configure.log" 2>&1 || die "QEMU configure failed: see $top/configure.log"
	touch "$bld/.configured"
fi
# Debian's QEMU source (+dfsg) ships no firmware blobs. Link Debian's packaged
# firmware (seabios, qemu-system-data) into the build tree's data directory
# (qemu-bundle/), which QEMU searches when run from its build directory (VMs
# and qtests alike).
fw=$bld/qemu-bundle/usr/local/share/qemu
mkdir -p "$fw"
for f in /usr/share/seabios/*.bin /usr/share/qemu/*.bin; do
	t=$fw/$(basename "$f")
	[ -e "$t" ] && [ ! -L "$t" ] || ln -sfn "$f" "$t"
done
# The source tree's hw/qgpu follows whichever checkout built last. ninja
# compares times, so a checkout whose device files are older than the
# objects another checkout built would keep that other device: when the
# device's sources differ from the last build's, make them newer.
devhash=$(cat "$QGPU_ROOT"/qemu-device/* "$QGPU_ROOT/tests/qtest/qgpu-test.c" \
	"$QGPU_ROOT"/include/qgpu/*.h | sha256sum | cut -c1-16)
if [ "$(cat "$top/.device-hash" 2>/dev/null)" != "$devhash" ]; then
	touch "$QGPU_ROOT"/qemu-device/* "$QGPU_ROOT/tests/qtest/qgpu-test.c" \
		"$QGPU_ROOT"/include/qgpu/*.h
fi
log "building qemu-system-x86_64 (first build takes ~10 minutes)"
ninja -C "$bld" qemu-system-x86_64 tests/qtest/qgpu-test > "$top/build.log" 2>&1 ||
	{ tail -n 40 "$top/build.log" >&2; die "QEMU build failed: see $top/build.log"; }
echo "$devhash" > "$top/.device-hash"
mkdir -p "$BUILD"
ln -sfn "$bld" "$BUILD/qemu"
log "QEMU ready: $BUILD/qemu/qemu-system-x86_64"
