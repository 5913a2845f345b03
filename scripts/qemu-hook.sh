#!/bin/bash
# Wire qgpu's device into a QEMU source tree without copying our sources:
# hw/qgpu is a symlink to qemu-device/, the qtest a symlink to tests/qtest/.
# Usage: qemu-hook.sh QEMU_SRC_DIR   (idempotent; re-points the symlinks)
. "$(dirname "$0")/common.sh"

src=$1
ln -sfn "$QGPU_ROOT/qemu-device" "$src/hw/qgpu"
ln -sfn "$QGPU_ROOT/tests/qtest/qgpu-test.c" "$src/tests/qtest/qgpu-test.c"

grep -q "subdir('qgpu')" "$src/hw/meson.build" ||
	echo "subdir('qgpu')" >> "$src/hw/meson.build"
grep -q 'source qgpu/Kconfig' "$src/hw/Kconfig" ||
	echo 'source qgpu/Kconfig' >> "$src/hw/Kconfig"
# Register the qtest for x86_64 (QEMU lists its qtests per target).
if ! grep -q "'qgpu-test'" "$src/tests/qtest/meson.build"; then
	sed -i "0,/^qtests_x86_64 = /s//qtests_x86_64 = ['qgpu-test'] + /" \
		"$src/tests/qtest/meson.build"
	grep -q "'qgpu-test'" "$src/tests/qtest/meson.build" ||
		die "could not register qgpu-test in QEMU's tests/qtest/meson.build"
fi
