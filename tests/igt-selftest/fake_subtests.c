// SPDX-License-Identifier: MIT
/*
 * fake_subtests: subtests of every kind the harness counts. Expected on
 * both sides: 5 pass (open, version, dynamic and its two dynamic subtests),
 * 0 fail, 1 skip (skipped); exit 0. Linked with rpath $ORIGIN/../lib.
 */
#include <stdio.h>
#include "libigt.h"

int main(int argc, char **argv)
{
	char name[64];
	bool ok;

	(void)argc;
	igt_fake_init(argv[0]);
	igt_fake_subtest("open");
	ok = igt_fake_drm_driver(name, sizeof(name));
	igt_fake_subtest_end(ok ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);

	igt_fake_subtest("version");
	igt_fake_subtest_end(ok && name[0] ? IGT_FAKE_SUCCESS : IGT_FAKE_FAIL);

	igt_fake_subtest("skipped");
	printf("Test requirement not met: nothing, on purpose\n");
	igt_fake_subtest_end(IGT_FAKE_SKIP);

	igt_fake_subtest("dynamic");
	igt_fake_dynamic("one");
	igt_fake_dynamic_end(IGT_FAKE_SUCCESS);
	igt_fake_dynamic("two");
	igt_fake_dynamic_end(IGT_FAKE_SUCCESS);
	igt_fake_subtest_end(IGT_FAKE_SUCCESS);
	return igt_fake_exit_status();
}
