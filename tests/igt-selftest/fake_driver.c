// SPDX-License-Identifier: MIT
/*
 * fake_driver: one subtest per side that passes only on it. Expected:
 * is-qgpu passes on qgpu and fails on virtio-gpu, is-virtio-gpu the other
 * way round, so qgpu fails a subtest virtio-gpu passes (is-virtio-gpu) and
 * `make igt` must fail. 1 pass, 1 fail on each side; exit 98.
 */
#include <string.h>
#include "libigt.h"

int main(int argc, char **argv)
{
	char name[64] = "";

	(void)argc;
	igt_fake_init(argv[0]);
	igt_fake_drm_driver(name, sizeof(name));
	igt_fake_subtest("is-qgpu");
	igt_fake_subtest_end(!strcmp(name, "qgpu") ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);
	igt_fake_subtest("is-virtio-gpu");
	igt_fake_subtest_end(!strcmp(name, "virtio_gpu") ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);
	return igt_fake_exit_status();
}
