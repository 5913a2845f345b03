// SPDX-License-Identifier: MIT
/* libigt.c - see libigt.h. */
#include "libigt.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <drm.h>

static const char *const result_txt[] = { "SUCCESS", "FAIL", "SKIP" };
static char current[128];
static char dynamic[128];
static int passed, failed, skipped;

static void crash(int sig)
{
	char buf[256];
	int n = 0;

	if (current[0])
		n = snprintf(buf, sizeof(buf), "Received signal %d.\nSubtest %s: CRASH (0.000s)\n",
			     sig, current);
	if (n > 0 && write(STDOUT_FILENO, buf, (size_t)n) < 0)
		n = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

void igt_fake_init(const char *prog)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGSEGV, crash);
	signal(SIGABRT, crash);
	printf("IGT-Version: 0.0-selftest (%s, a stand-in for IGT)\n", prog);
}

static void count(enum igt_fake_result r)
{
	if (r == IGT_FAKE_SUCCESS)
		passed++;
	else if (r == IGT_FAKE_FAIL)
		failed++;
	else
		skipped++;
}

void igt_fake_subtest(const char *name)
{
	snprintf(current, sizeof(current), "%s", name);
	printf("Starting subtest: %s\n", name);
}

void igt_fake_subtest_end(enum igt_fake_result r)
{
	printf("Subtest %s: %s (0.000s)\n", current, result_txt[r]);
	count(r);
	current[0] = 0;
}

void igt_fake_dynamic(const char *name)
{
	snprintf(dynamic, sizeof(dynamic), "%s", name);
	printf("Starting dynamic subtest: %s\n", name);
}

void igt_fake_dynamic_end(enum igt_fake_result r)
{
	printf("Dynamic subtest %s: %s (0.000s)\n", dynamic, result_txt[r]);
	count(r);
}

int igt_fake_exit_status(void)
{
	if (failed)
		return 98;
	if (skipped && !passed)
		return 77;
	return 0;
}

bool igt_fake_drm_driver(char *name, size_t len)
{
	struct drm_version v;
	int fd = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return false;
	memset(&v, 0, sizeof(v));
	memset(name, 0, len);
	v.name = name;
	v.name_len = len - 1;
	ret = ioctl(fd, DRM_IOCTL_VERSION, &v);
	close(fd);
	return ret == 0;
}
