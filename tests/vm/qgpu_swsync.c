// SPDX-License-Identifier: MIT
/*
 * qgpu_swsync: the guest image's sw_sync module (build/kmod/sw_sync.ko, see
 * scripts/sw-sync-module.sh) loads with modprobe, creates
 * <debugfs>/sync/sw_sync, and its timelines work: a fence on a timeline is a
 * sync_file that signals when the timeline reaches its value, merges with
 * others, is listed in <debugfs>/sync/info, signals with an error when its
 * timeline goes away, and imports into a qgpu syncobj (which then waits for
 * it).
 *
 * The sw_sync ioctls: tests/vm/qgpu_swsync.h.
 */
#include <poll.h>
#include <linux/sync_file.h>

#include "qgpu_swsync.h"
#include "qgpu_test.h"

#define SW_SYNC_INFO	"/sys/kernel/debug/sync/info"

static bool debugfs_mounted(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " /sys/kernel/debug debugfs ") != NULL;
	fclose(f);
	return found;
}

static int timeline_open(void)
{
	int fd = open(SW_SYNC_PATH, O_RDWR | O_CLOEXEC);

	igt_assert_f(fd >= 0, "%s: %s\n", SW_SYNC_PATH, strerror(errno));
	return fd;
}

/* 1 = signalled, 0 = active, negative = signalled with that error. */
static int fence_status(int fence, struct sync_fence_info *one)
{
	struct sync_fence_info fi[2];
	struct sync_file_info info = { .num_fences = 0 };

	do_ioctl(fence, SYNC_IOC_FILE_INFO, &info);
	if (one) {
		igt_assert_eq(info.num_fences, 1);
		memset(fi, 0, sizeof(fi));
		info.sync_fence_info = (uintptr_t)fi;
		do_ioctl(fence, SYNC_IOC_FILE_INFO, &info);
		*one = fi[0];
	}
	return info.status;
}

static bool fence_ready(int fence)
{
	struct pollfd p = { .fd = fence, .events = POLLIN };
	int n = poll(&p, 1, 0);

	igt_assert_gte(n, 0);
	return n == 1 && (p.revents & POLLIN);
}

/* A timeline is named after the task that opened sw_sync. */
static void own_comm(char *comm, size_t len)
{
	int fd = open("/proc/self/comm", O_RDONLY);
	ssize_t n;

	igt_assert_gte(fd, 0);
	n = read(fd, comm, len - 1);
	close(fd);
	igt_assert_gt(n, 0);
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
}

/* Does <debugfs>/sync/info list a timeline named @name at @value? */
static bool info_lists(const char *name, uint32_t value)
{
	char line[256], want[128];
	bool found = false;
	FILE *f = fopen(SW_SYNC_INFO, "r");

	igt_assert_f(f, "%s: %s\n", SW_SYNC_INFO, strerror(errno));
	snprintf(want, sizeof(want), "%s: %u\n", name, value);
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	fclose(f);
	return found;
}

igt_main
{
	igt_subtest("modprobe") {
		igt_assert_f(debugfs_mounted(), "debugfs is not mounted on /sys/kernel/debug\n");
		/* a module on Debian's kernel; built in on the debug kernel */
		if (access(SW_SYNC_PATH, F_OK))
			igt_assert_eq(system("modprobe sw_sync"), 0);
		igt_assert_f(access(SW_SYNC_PATH, R_OK | W_OK) == 0, "%s: %s\n",
			     SW_SYNC_PATH, strerror(errno));
		igt_assert_f(access(SW_SYNC_INFO, R_OK) == 0, "%s: %s\n",
			     SW_SYNC_INFO, strerror(errno));
	}

	igt_fixture
		igt_require_f(access(SW_SYNC_PATH, F_OK) == 0, "no %s\n", SW_SYNC_PATH);

	igt_subtest("fence-signal") {
		struct sync_fence_info fi;
		char comm[32];
		int tl = timeline_open();
		int f = qt_sw_fence(tl, 2, "qgpu-two");

		own_comm(comm, sizeof(comm));
		igt_assert_eq(fence_status(f, &fi), 0);
		igt_assert_f(!strcmp(fi.obj_name, comm), "timeline %s\n", fi.obj_name);
		igt_assert_eq(strcmp(fi.driver_name, "sw_sync"), 0);
		igt_assert(!fence_ready(f));
		qt_sw_inc(tl, 1);
		igt_assert_eq(fence_status(f, NULL), 0);
		igt_assert(!fence_ready(f));
		qt_sw_inc(tl, 1);
		igt_assert_eq(fence_status(f, &fi), 1);
		igt_assert_eq(fi.status, 1);
		igt_assert_neq(fi.timestamp_ns, 0);
		igt_assert(fence_ready(f));
		close(f);
		close(tl);
	}

	igt_subtest("merge") {
		struct sync_merge_data m = { .name = "qgpu-merged" };
		struct sync_file_info info = { .num_fences = 0 };
		int tl1 = timeline_open(), tl2 = timeline_open();
		int a = qt_sw_fence(tl1, 1, "a");
		int b = qt_sw_fence(tl2, 2, "b");

		/* one fence per timeline: the merged file holds both */
		m.fd2 = b;
		do_ioctl(a, SYNC_IOC_MERGE, &m);
		igt_assert_gte(m.fence, 0);
		do_ioctl(m.fence, SYNC_IOC_FILE_INFO, &info);
		igt_assert_eq(info.num_fences, 2);
		igt_assert_f(!strcmp(info.name, "qgpu-merged"), "name %s\n", info.name);
		qt_sw_inc(tl1, 1);
		qt_sw_inc(tl2, 1);
		igt_assert_eq(fence_status(a, NULL), 1);
		igt_assert_eq(fence_status(m.fence, NULL), 0);
		igt_assert(!fence_ready(m.fence));
		qt_sw_inc(tl2, 1);
		igt_assert_eq(fence_status(m.fence, NULL), 1);
		igt_assert(fence_ready(m.fence));
		close(m.fence);
		close(a);
		close(b);
		close(tl1);
		close(tl2);
	}

	igt_subtest("debugfs-info") {
		char comm[32];
		int tl = timeline_open();

		own_comm(comm, sizeof(comm));
		igt_assert(info_lists(comm, 0));
		qt_sw_inc(tl, 5);
		igt_assert(info_lists(comm, 5));
		close(tl);
		igt_assert(!info_lists(comm, 5));
	}

	igt_subtest("timeline-close") {
		struct sync_fence_info fi;
		int tl = timeline_open();
		int f = qt_sw_fence(tl, 1, "orphan");

		close(tl);
		igt_assert(fence_ready(f));
		igt_assert_eq(fence_status(f, &fi), -ENOENT);
		igt_assert_eq(fi.status, -ENOENT);
		close(f);
	}

	igt_subtest("qgpu-syncobj-import") {
		struct qgpu_dev dev;
		uint32_t syncobj;
		int tl, f, ret;

		qt_open(&dev, QGPU_NODE_RENDER);
		tl = timeline_open();
		f = qt_sw_fence(tl, 1, "into-syncobj");
		igt_assert_eq(drmSyncobjCreate(dev.fd, 0, &syncobj), 0);
		igt_assert_eq(drmSyncobjImportSyncFile(dev.fd, syncobj, f), 0);
		ret = drmSyncobjWait(dev.fd, &syncobj, 1, 0, 0, NULL);
		igt_assert_eq(ret, -ETIME);
		qt_sw_inc(tl, 1);
		ret = drmSyncobjWait(dev.fd, &syncobj, 1, INT64_MAX, 0, NULL);
		igt_assert_eq(ret, 0);
		igt_assert_eq(drmSyncobjDestroy(dev.fd, syncobj), 0);
		close(f);
		close(tl);
		qgpu_close(&dev);
	}
}
