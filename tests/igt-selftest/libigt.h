/* SPDX-License-Identifier: MIT */
/*
 * libigt.h - the self-test's stand-in for an IGT build's libigt.so.
 *
 * The harness of `make igt` (scripts/igt.py) runs programs from an IGT build
 * directory. Its self-test (tests/igt-selftest/selftest.py) gives it one made
 * here, build/igt-fake/: tests/NAME programs linked against
 * lib/libigt.so.0.1 (with the links libigt.so.0 and libigt.so), so that the
 * harness must find and copy a library of the directory. The programs print
 * what IGT prints and exit as IGT tests do:
 *
 *	Starting subtest: NAME
 *	Starting dynamic subtest: NAME
 *	Dynamic subtest NAME: SUCCESS|FAIL|SKIP (0.000s)
 *	Subtest NAME: SUCCESS|FAIL|SKIP|CRASH (0.000s)
 *
 * exit 0 (passed), 77 (all skipped), 98 (something failed); a crash in a
 * subtest prints its CRASH line and dies by the signal.
 */
#ifndef IGT_FAKE_LIBIGT_H
#define IGT_FAKE_LIBIGT_H

#include <stdbool.h>
#include <stddef.h>

enum igt_fake_result { IGT_FAKE_SUCCESS, IGT_FAKE_FAIL, IGT_FAKE_SKIP };

/* Installs the crash handler; call first. */
void igt_fake_init(const char *prog);
/* Prints "Starting subtest: NAME"; the subtest is then the current one. */
void igt_fake_subtest(const char *name);
/* Ends the current subtest with its result line. */
void igt_fake_subtest_end(enum igt_fake_result r);
/* The same for a dynamic subtest of the current subtest. */
void igt_fake_dynamic(const char *name);
void igt_fake_dynamic_end(enum igt_fake_result r);
/* The exit status IGT would use for the results so far. */
int igt_fake_exit_status(void);
/* The name of the DRM driver of /dev/dri/card0 (DRM_IOCTL_VERSION); false if none. */
bool igt_fake_drm_driver(char *name, size_t len);

#endif
