#!/bin/bash
# Wire qgpu's device into a QEMU source tree without copying our sources:
# hw/qgpu is a symlink to qemu-device/, the qtest a symlink to tests/qtest/;
# hw/qgpu's trace-events join QEMU's trace event groups.
# Usage: qemu-hook.sh QEMU_SRC_DIR   (idempotent; re-points the symlinks)
. "$(dirname "$0")/common.sh"

src=$1
ln -sfn "$QGPU_ROOT/qemu-device" "$src/hw/qgpu"
ln -sfn "$QGPU_ROOT/tests/qtest/qgpu-test.c" "$src/tests/qtest/qgpu-test.c"

grep -q "subdir('qgpu')" "$src/hw/meson.build" ||
	echo "subdir('qgpu')" >> "$src/hw/meson.build"
grep -q 'source qgpu/Kconfig' "$src/hw/Kconfig" ||
	echo 'source qgpu/Kconfig' >> "$src/hw/Kconfig"
# The device's trace events (qemu-device/trace-events): QEMU generates
# trace/trace-hw_qgpu.h, which qemu-device/trace.h includes, for every
# directory named in trace_events_subdirs of its top-level meson.build.
if ! grep -q "'hw/qgpu'" "$src/meson.build"; then
	sed -i "0,/^    'hw\/display',$/s//&\n    'hw\/qgpu',/" "$src/meson.build"
	grep -q "'hw/qgpu'" "$src/meson.build" ||
		die "could not register hw/qgpu's trace events in QEMU's meson.build"
fi
# Register the qtest for x86_64 (QEMU lists its qtests per target).
if ! grep -q "'qgpu-test'" "$src/tests/qtest/meson.build"; then
	sed -i "0,/^qtests_x86_64 = /s//qtests_x86_64 = ['qgpu-test'] + /" \
		"$src/tests/qtest/meson.build"
	grep -q "'qgpu-test'" "$src/tests/qtest/meson.build" ||
		die "could not register qgpu-test in QEMU's tests/qtest/meson.build"
fi
