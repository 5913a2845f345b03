/* SPDX-License-Identifier: MIT */
/*
 * sw_sync for the tests that need a fence the test itself signals, on no
 * engine of qgpu's (build/kmod/sw_sync.ko, scripts/sw-sync-module.sh; the
 * module is checked in its own right by tests/vm/qgpu_swsync.c).
 * Header-only, like qgpu_test.h.
 *
 * The sw_sync ioctls are not in the kernel's UAPI headers (sw_sync.c defines
 * them: "W" 0 = create a fence, "W" 1 = advance the timeline); they are
 * declared here as the kernel defines them.
 */
#ifndef QGPU_SWSYNC_H
#define QGPU_SWSYNC_H

#include <sys/stat.h>

#include "qgpu_test.h"

#define SW_SYNC_PATH	"/sys/kernel/debug/sync/sw_sync"

struct sw_sync_create_fence {
	uint32_t value;		/* the timeline value that signals the fence */
	char name[32];		/* not used by the kernel */
	int32_t fence;		/* out: a sync_file fd */
};

#define SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct sw_sync_create_fence)
#define SW_SYNC_IOC_INC		_IOW('W', 1, uint32_t)

/*
 * The timelines still open at exit are advanced past every fence first.
 * sw_sync's release signals a closed timeline's pending fences under the
 * timeline's lock, and a waiter that drops the last reference in its
 * callback (drm_sched's dependency callback does) takes that lock again:
 * the CPU deadlocks with interrupts off. A test that fails (exits) while a
 * qgpu job still waits for such a fence would hang the guest; advancing
 * the timeline signals them outside that path.
 */
#define QT_SW_MAX_TIMELINES	16

static struct {
	int fd;
	dev_t dev;
	ino_t ino;
} qt_sw_open[QT_SW_MAX_TIMELINES];
static unsigned int qt_sw_nopen;

static inline void qt_sw_release_all(void)
{
	uint32_t by = 0x7fffffff;
	struct stat st;
	unsigned int i;

	for (i = 0; i < qt_sw_nopen; i++)
		if (!fstat(qt_sw_open[i].fd, &st) &&
		    st.st_dev == qt_sw_open[i].dev &&
		    st.st_ino == qt_sw_open[i].ino)
			ioctl(qt_sw_open[i].fd, SW_SYNC_IOC_INC, &by);
}

/* A new timeline (loading the module if needed); skips without one. */
static inline int qt_sw_timeline(void)
{
	struct stat st;
	int fd;

	if (access(SW_SYNC_PATH, F_OK) && system("modprobe sw_sync") != 0)
		igt_skip("no sw_sync module\n");
	fd = open(SW_SYNC_PATH, O_RDWR | O_CLOEXEC);
	igt_require_f(fd >= 0, "%s: %s\n", SW_SYNC_PATH, strerror(errno));
	if (!qt_sw_nopen)
		atexit(qt_sw_release_all);
	if (qt_sw_nopen < QT_SW_MAX_TIMELINES && !fstat(fd, &st)) {
		qt_sw_open[qt_sw_nopen].fd = fd;
		qt_sw_open[qt_sw_nopen].dev = st.st_dev;
		qt_sw_open[qt_sw_nopen].ino = st.st_ino;
		qt_sw_nopen++;
	}
	return fd;
}

/* A sync_file fd that signals when timeline @tl reaches @value */
static inline int qt_sw_fence(int tl, uint32_t value, const char *name)
{
	struct sw_sync_create_fence arg = { .value = value };

	snprintf(arg.name, sizeof(arg.name), "%s", name);
	do_ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &arg);
	igt_assert_lte(0, arg.fence);
	return arg.fence;
}

/* Advance timeline @tl by @by */
static inline void qt_sw_inc(int tl, uint32_t by)
{
	do_ioctl(tl, SW_SYNC_IOC_INC, &by);
}

/* A syncobj of @fd holding a sw_sync fence at @value of timeline @tl */
static inline uint32_t qt_sw_syncobj(int fd, int tl, uint32_t value)
{
	struct drm_syncobj_handle imp = {
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
	};
	uint32_t s;

	igt_assert_eq(qgpu_syncobj_create(fd, &s), 0);
	imp.handle = s;
	imp.fd = qt_sw_fence(tl, value, "qgpu-test");
	do_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp);
	close(imp.fd);
	return s;
}

#endif /* QGPU_SWSYNC_H */
