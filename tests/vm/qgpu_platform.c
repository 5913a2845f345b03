// SPDX-License-Identifier: MIT
/*
 * qgpu_platform: the guest runs the kernel the image was built for (the
 * Makefile's KVER, or the build set-up chose in its place), one the driver
 * supports (6.12 or later), and the kernel's per-file DRM statistics
 * (/proc/PID/fdinfo/FD) show the driver's memory: drm-total-memory counts
 * every allocation of the file, drm-resident-memory those committed to a
 * segment, the same per region (system, vram, gart) by where each
 * allocation is, and drm-engine-render the render engine's time on the
 * file's DMA buffers.
 */
#include <sys/utsname.h>

#include "qgpu_test.h"

#define KIB	1024ull

static struct qgpu_dev dev;

/* One "drm-NAME:" value of @fd's fdinfo, in bytes; -1 when absent. */
static int64_t fdinfo_value(int fd, const char *name)
{
	char path[64], line[256], unit[16];
	unsigned long long v;
	int64_t ret = -1;
	size_t len = strlen(name);
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	igt_assert_f(f, "%s: %s\n", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, len) || line[len] != ':')
			continue;
		unit[0] = 0;
		n = sscanf(line + len + 1, " %llu %15s", &v, unit);
		igt_assert_f(n >= 1, "bad fdinfo line: %s", line);
		if (!strcmp(unit, "KiB"))
			v <<= 10;
		else if (!strcmp(unit, "MiB"))
			v <<= 20;
		else if (!strcmp(unit, "ns"))
			;	/* engine time */
		else
			igt_assert_f(n == 1, "unknown unit in: %s", line);
		ret = v;
		break;
	}
	fclose(f);
	return ret;
}

static bool fdinfo_has(int fd, const char *text)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	igt_assert_f(f, "%s: %s\n", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

static void assert_region(int fd, const char *region, int64_t total,
			  int64_t resident)
{
	char tn[64], rn[64];

	snprintf(tn, sizeof(tn), "drm-total-%s", region);
	snprintf(rn, sizeof(rn), "drm-resident-%s", region);
	igt_assert_f(fdinfo_value(fd, tn) == total, "%s is %lld, not %lld\n",
		     tn, (long long)fdinfo_value(fd, tn), (long long)total);
	igt_assert_f(fdinfo_value(fd, rn) == resident, "%s is %lld, not %lld\n",
		     rn, (long long)fdinfo_value(fd, rn), (long long)resident);
}

static void assert_memory(int fd, int64_t total, int64_t resident)
{
	int64_t t = fdinfo_value(fd, "drm-total-memory");
	int64_t r = fdinfo_value(fd, "drm-resident-memory");

	igt_info("drm-total-memory %lld, drm-resident-memory %lld\n",
		 (long long)t, (long long)r);
	igt_assert_eq(t, total);
	igt_assert_eq(r, resident);
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
	}

	igt_subtest("kernel-release") {
		char want[128] = "";
		struct utsname u;
		int major = 0, minor = 0;
		FILE *f;

		igt_assert_eq(uname(&u), 0);
		igt_info("running kernel %s\n", u.release);
		f = fopen("/etc/qgpu/kernel-release", "r");
		igt_require_f(f, "the image does not name its kernel\n");
		igt_assert(fgets(want, sizeof(want), f));
		fclose(f);
		want[strcspn(want, "\n")] = 0;
		igt_assert_f(!strcmp(u.release, want),
			     "running %s, the image was built for %s\n",
			     u.release, want);
		igt_assert_eq(sscanf(u.release, "%d.%d", &major, &minor), 2);
		igt_assert_f(major > 6 || (major == 6 && minor >= 12),
			     "the driver needs 6.12 or later, not %d.%d\n",
			     major, minor);
	}

	igt_subtest("fdinfo-memory") {
		uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
				QGPU_SEGBIT(QGPU_SEG_APERTURE);
		int fd = qt_reopen(&dev);
		uint32_t a, b;

		igt_assert(fdinfo_has(fd, "drm-driver:\tqgpu"));
		igt_assert(fdinfo_has(fd, "drm-client-id:"));
		igt_assert_eq(fdinfo_value(fd, "drm-total-memory"), 0);

		/* created in system memory: counted, not resident */
		a = qt_bo(fd, 64 * KIB, mask, 0, 0);
		b = qt_bo(fd, 128 * KIB, mask, 0, 0);
		assert_memory(fd, 192 * KIB, 0);
		/* another file's allocations are not this file's */
		igt_assert_eq(fdinfo_value(dev.fd, "drm-total-memory"), 0);

		qt_reside(fd, a, QGPU_RESIDE_MAKE_RESIDENT, 0);
		assert_memory(fd, 192 * KIB, 64 * KIB);
		qt_reside(fd, b, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		assert_memory(fd, 192 * KIB, 192 * KIB);
		/* per region: where each allocation is now */
		assert_region(fd, "vram", 64 * KIB, 64 * KIB);
		assert_region(fd, "gart", 128 * KIB, 128 * KIB);
		assert_region(fd, "system", 0, 0);
		qt_reside(fd, a, QGPU_RESIDE_EVICT_SYSTEM, 0);
		assert_memory(fd, 192 * KIB, 128 * KIB);
		assert_region(fd, "vram", 0, 0);
		assert_region(fd, "system", 64 * KIB, 0);

		qt_close(fd, a);
		qt_close(fd, b);
		igt_assert_eq(fdinfo_value(fd, "drm-total-memory"), 0);
		close(fd);
	}

	igt_subtest("fdinfo-engine-time") {
		struct qgpu_cb *cb = qt_cb(&dev);
		int fd = qt_reopen(&dev);
		int64_t t0, t1, other;
		uint32_t h, ctx;

		t0 = fdinfo_value(fd, "drm-engine-render");
		igt_assert_eq(t0, 0);
		other = fdinfo_value(dev.fd, "drm-engine-render");
		ctx = qt_ctx(fd);
		h = qt_bo(fd, 4 << 20, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		qgpu_cb_bind(cb, 0, h, 0, 4 << 20);
		qgpu_cb_fill(cb, 0, 0, 4 << 20, 7);
		qgpu_cb_checksum(cb, 0, 0, 4 << 20, 0, 0);
		qt_run(fd, ctx, cb, 20);
		t1 = fdinfo_value(fd, "drm-engine-render");
		igt_info("drm-engine-render: %lld ns\n", (long long)t1);
		igt_assert_lt(0, t1);
		/* the time is the file's: another file's stays as it was */
		igt_assert_eq(fdinfo_value(dev.fd, "drm-engine-render"), other);
		/* it only grows, and counts work of destroyed contexts */
		qt_run(fd, ctx, cb, 20);
		igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
		igt_assert_lt(t1, fdinfo_value(fd, "drm-engine-render"));
		qt_cb_free(cb);
		qt_close(fd, h);
		close(fd);
	}

	igt_fixture {
		qgpu_close(&dev);
	}
}
