// SPDX-License-Identifier: MIT
/*
 * fake_crash: crashes (SIGSEGV) on purpose in its second subtest, as an IGT
 * test does: the CRASH line, then death by the signal. Expected on both
 * sides: before passes, segv crashes (1 fail), after never runs; the test
 * after this one still runs.
 */
#include <signal.h>
#include "libigt.h"

int main(int argc, char **argv)
{
	(void)argc;
	igt_fake_init(argv[0]);
	igt_fake_subtest("before");
	igt_fake_subtest_end(IGT_FAKE_SUCCESS);
	igt_fake_subtest("segv");
	raise(SIGSEGV);
	igt_fake_subtest_end(IGT_FAKE_SUCCESS);
	igt_fake_subtest("after");
	igt_fake_subtest_end(IGT_FAKE_SUCCESS);
	return igt_fake_exit_status();
}
