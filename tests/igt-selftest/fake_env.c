// SPDX-License-Identifier: MIT
/*
 * fake_env: what the harness promises the guest gives an IGT test: sw_sync
 * loaded (<debugfs>/sync/sw_sync), a DRM device on /dev/dri/card0 and
 * exactly one of qgpu.ko and virtio_gpu.ko loaded, the one that drives it.
 * Prints "fake_env: driver NAME" (the self-test checks each side's). Two
 * subtests, both pass on both sides; linked with rpath $ORIGIN/../lib.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "libigt.h"

static bool loaded(const char *module)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	char name[64] = "";
	bool qgpu, virtio, ok;

	(void)argc;
	igt_fake_init(argv[0]);
	igt_fake_subtest("sw-sync");
	ok = access("/sys/kernel/debug/sync/sw_sync", R_OK | W_OK) == 0;
	igt_fake_subtest_end(ok ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);

	igt_fake_subtest("one-driver");
	ok = igt_fake_drm_driver(name, sizeof(name));
	qgpu = loaded("qgpu");
	virtio = loaded("virtio_gpu");
	printf("fake_env: driver %s (qgpu.ko %s, virtio_gpu.ko %s)\n", ok ? name : "none",
	       qgpu ? "loaded" : "not loaded", virtio ? "loaded" : "not loaded");
	ok = ok && qgpu != virtio &&
	     !strcmp(name, qgpu ? "qgpu" : "virtio_gpu");
	igt_fake_subtest_end(ok ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);
	return igt_fake_exit_status();
}
