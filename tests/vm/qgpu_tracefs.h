/* SPDX-License-Identifier: MIT */
/*
 * The guest's tracefs for the tests that read the driver's tracepoints
 * (qgpu_trace, qgpu_vm). Header-only, like qgpu_test.h.
 *
 * qt_find_tracefs() mounts tracefs if needed and sets qt_tdir ("" when
 * there is none); qt_twrite() writes a tracefs file; qt_tread() returns the
 * whole trace buffer as a malloc'ed string.
 */
#ifndef QGPU_TRACEFS_H
#define QGPU_TRACEFS_H

#include <sys/mount.h>

#include "qgpu_test.h"

static char qt_tdir[64];

static inline void qt_find_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (!stat("/sys/kernel/tracing/events", &st))
		snprintf(qt_tdir, sizeof(qt_tdir), "/sys/kernel/tracing");
	else if (!stat("/sys/kernel/debug/tracing/events", &st))
		snprintf(qt_tdir, sizeof(qt_tdir), "/sys/kernel/debug/tracing");
}

static inline void qt_twrite(const char *file, const char *val)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", qt_tdir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	igt_assert_f(fd >= 0, "open %s: %s\n", path, strerror(errno));
	igt_assert_eq(write(fd, val, strlen(val)), (ssize_t)strlen(val));
	close(fd);
}

static inline char *qt_tread(void)
{
	char path[128], *buf;
	size_t len = 0, cap = 1 << 20;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", qt_tdir);
	fd = open(path, O_RDONLY);
	igt_assert(fd >= 0);
	buf = malloc(cap + 1);
	igt_assert(buf);
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			igt_assert(buf);
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

#endif /* QGPU_TRACEFS_H */
