// SPDX-License-Identifier: MIT
/*
 * qgpu_syncobj: DRM syncobjs (binary and timeline) on qgpu, as Linux 6.12
 * defines them (drivers/gpu/drm/drm_syncobj.c): create, destroy, wait
 * (ALL/ANY, absolute timeouts, WAIT_FOR_SUBMIT, WAIT_AVAILABLE), reset,
 * signal, timeline signal and query (LAST_SUBMITTED), transfer between
 * binary and timeline syncobjs, handle <-> fd, sync_file export/import,
 * eventfd notification, and every bad input with its errno.
 *
 * Fences that are not yet signalled come from real qgpu work: a DMA
 * buffer that stalls in a WAIT command until the CPU writes the value it
 * waits for (released well within the scheduler's job timeout).
 */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "qgpu_test.h"

/* 6.12's DRM_IOCTL_SYNCOBJ_EVENTFD; libdrm's drm.h may predate it. */
struct qt_syncobj_eventfd {
	uint32_t handle;
	uint32_t flags;
	uint64_t point;
	int32_t fd;
	uint32_t pad;
};
#define QT_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct qt_syncobj_eventfd)

#define WAIT_ALL DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL
#define WAIT_SUBMIT DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
#define WAIT_AVAILABLE DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE
#define MS 1000000ll

static struct qgpu_dev dev;
static uint32_t ctx;

/* ------------------------------------------------------------------------ */
/* Raw ioctls: every field under the test's control, -errno back             */

static uint32_t sync_create(uint32_t flags)
{
	struct drm_syncobj_create c = { .flags = flags };

	do_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
	igt_assert_neq(c.handle, 0);
	return c.handle;
}

static void sync_destroy(uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	do_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static int wait_raw(const uint32_t *h, uint32_t n, int64_t abs_ns,
		    uint32_t flags, uint32_t *first)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)h, .timeout_nsec = abs_ns,
		.count_handles = n, .flags = flags, .first_signaled = ~0u,
	};
	int ret = igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);

	if (first)
		*first = w.first_signaled;
	return ret;
}

/* Wait for one binary syncobj, @rel_ns from now (0: poll). */
static int wait1(uint32_t h, int64_t rel_ns, uint32_t flags)
{
	return wait_raw(&h, 1, rel_ns ? qgpu_now_ns() + rel_ns : 0, flags,
			NULL);
}

static int tl_wait_raw(const uint32_t *h, const uint64_t *pts, uint32_t n,
		       int64_t abs_ns, uint32_t flags, uint32_t *first)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)h, .points = (uintptr_t)pts,
		.timeout_nsec = abs_ns, .count_handles = n, .flags = flags,
		.first_signaled = ~0u,
	};
	int ret = igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);

	if (first)
		*first = w.first_signaled;
	return ret;
}

static int tl_wait1(uint32_t h, uint64_t point, int64_t rel_ns,
		    uint32_t flags)
{
	return tl_wait_raw(&h, &point, 1, rel_ns ? qgpu_now_ns() + rel_ns : 0,
			   flags, NULL);
}

static int array_ioctl(unsigned long req, const uint32_t *h, uint32_t n,
		       uint32_t pad)
{
	struct drm_syncobj_array a = {
		.handles = (uintptr_t)h, .count_handles = n, .pad = pad,
	};

	return igt_ioctl(dev.fd, req, &a);
}

static int tl_array_ioctl(unsigned long req, const uint32_t *h,
			  uint64_t *pts, uint32_t n, uint32_t flags)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)h, .points = (uintptr_t)pts,
		.count_handles = n, .flags = flags,
	};

	return igt_ioctl(dev.fd, req, &a);
}

static void tl_signal(uint32_t h, uint64_t point)
{
	igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &h,
				     &point, 1, 0), 0);
}

static uint64_t query(uint32_t h, uint32_t flags)
{
	uint64_t point = ~0ull;

	igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_QUERY, &h, &point, 1,
				     flags), 0);
	return point;
}

static int transfer(uint32_t dst, uint64_t dst_pt, uint32_t src,
		    uint64_t src_pt, uint32_t flags)
{
	struct drm_syncobj_transfer t = {
		.src_handle = src, .dst_handle = dst, .src_point = src_pt,
		.dst_point = dst_pt, .flags = flags,
	};

	return igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
}

static int handle_to_fd(int fd, uint32_t h, uint32_t flags, int *out)
{
	struct drm_syncobj_handle a = { .handle = h, .flags = flags, .fd = -1 };
	int ret = igt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a);

	*out = a.fd;
	return ret;
}

static int fd_to_handle(int fd, int sfd, uint32_t flags, uint32_t *h)
{
	struct drm_syncobj_handle a = { .handle = *h, .flags = flags,
					.fd = sfd };
	int ret = igt_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a);

	*h = a.handle;
	return ret;
}

static int eventfd_ioctl(uint32_t h, uint64_t point, int efd,
			 uint32_t flags)
{
	struct qt_syncobj_eventfd e = {
		.handle = h, .flags = flags, .point = point, .fd = efd,
	};

	return igt_ioctl(dev.fd, QT_IOCTL_SYNCOBJ_EVENTFD, &e);
}

/* Whether a sync_file (or eventfd) is readable within @ms. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* A syncobj that holds no fence at all */
static bool no_fence(uint32_t h)
{
	return wait1(h, 0, 0) == -EINVAL;
}

/* One writable page followed by 8 MiB of PROT_NONE: an array that starts
 * readable and faults before 2^20 entries. */
static char *short_array(const void *first, size_t len)
{
	char *p = mmap(NULL, 4096 + (8 << 20), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	igt_assert_eq(mprotect(p, 4096, PROT_READ | PROT_WRITE), 0);
	memcpy(p, first, len);
	return p;
}

static void short_array_free(char *p)
{
	munmap(p, 4096 + (8 << 20));
}

/* ------------------------------------------------------------------------ */
/* GPU work that stays unsignalled until released                            */

struct stall {
	uint32_t h;
	volatile uint64_t *m;
	struct qgpu_cb *cb;
};

/* A DMA buffer that waits for m[0] >= 1, then writes m[1] = 1. */
static void stall_init(struct stall *s)
{
	s->h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
		     QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(dev.fd, s->h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	s->m = qt_map(dev.fd, s->h, 4096);
	memset((void *)s->m, 0, 4096);
	s->cb = qt_cb(&dev);
	qgpu_cb_bind(s->cb, 0, s->h, 0, 4096);
	qgpu_cb_wait(s->cb, 0, 0, 1);
	qgpu_cb_fence(s->cb, 0, 8, 1);
}

/* Submit it, signalling @handle (at @point when a timeline point). */
static void stall_submit(struct stall *s, uint32_t handle, uint64_t point)
{
	struct drm_qgpu_sync_entry out = { .handle = handle, .point = point };

	igt_assert_eq(qgpu_submit(dev.fd, ctx, s->cb, NULL, 0, &out, 1, NULL),
		      0);
}

static void stall_release(struct stall *s)
{
	__atomic_store_n(&s->m[0], 1, __ATOMIC_SEQ_CST);
}

/* Release (if not yet) and wait for the work to be done. */
static void stall_fini(struct stall *s)
{
	uint32_t h = sync_create(0);

	stall_release(s);
	/* the same context runs in order: a fence after it */
	qgpu_cb_reset(s->cb);
	qgpu_cb_bind(s->cb, 0, s->h, 0, 4096);
	qgpu_cb_fence(s->cb, 0, 16, 2);
	stall_submit(s, h, 0);
	igt_assert_eq(wait1(h, 10 * SEC_NS, 0), 0);
	igt_assert_eq(s->m[1], 1);
	sync_destroy(h);
	qt_cb_free(s->cb);
	qt_unmap(dev.fd, s->h, (void *)s->m, 4096);
	qt_close(dev.fd, s->h);
}

/* ------------------------------------------------------------------------ */
/* Something done by another thread a little later                           */

enum later_op { LATER_SIGNAL, LATER_TL_SIGNAL, LATER_SUBMIT, LATER_TRANSFER };

struct later {
	pthread_t thread;
	enum later_op op;
	uint32_t handle, src;
	uint64_t point;
	struct stall *stall;
	int delay_ms;
	int release_ms;		/* LATER_SUBMIT: release the stall after */
	int ret;
};

static void *later_fn(void *arg)
{
	struct later *l = arg;
	struct drm_syncobj_array a = {
		.handles = (uintptr_t)&l->handle, .count_handles = 1,
	};
	struct drm_syncobj_timeline_array ta = {
		.handles = (uintptr_t)&l->handle, .points = (uintptr_t)&l->point,
		.count_handles = 1,
	};
	struct drm_syncobj_transfer t = {
		.src_handle = l->src, .dst_handle = l->handle,
		.dst_point = l->point,
	};
	struct drm_qgpu_sync_entry out = { .handle = l->handle,
					   .point = l->point };

	usleep(l->delay_ms * 1000);
	switch (l->op) {
	case LATER_SIGNAL:
		l->ret = igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		break;
	case LATER_TL_SIGNAL:
		l->ret = igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
				   &ta);
		break;
	case LATER_SUBMIT:
		l->ret = qgpu_submit(dev.fd, ctx, l->stall->cb, NULL, 0, &out,
				     1, NULL);
		if (l->release_ms) {
			usleep(l->release_ms * 1000);
			stall_release(l->stall);
		}
		break;
	case LATER_TRANSFER:
		l->ret = igt_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
		break;
	}
	return NULL;
}

static void later_start(struct later *l)
{
	if (!l->delay_ms)
		l->delay_ms = 200;
	l->ret = -1;
	igt_assert_eq(pthread_create(&l->thread, NULL, later_fn, l), 0);
}

static void later_join(struct later *l)
{
	pthread_join(l->thread, NULL);
	igt_assert_eq(l->ret, 0);
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("create-destroy") {
		struct drm_syncobj_create c = { 0 };
		struct drm_syncobj_destroy d = { 0 };
		uint32_t a = sync_create(0), b = sync_create(0);

		igt_assert_neq(a, b);
		/* unknown create flags */
		c.flags = 2;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_CREATE, &c, EINVAL);
		c.flags = 0x80000000u;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_CREATE, &c, EINVAL);
		/* destroy: pad, unknown handles, twice */
		d.handle = a;
		d.pad = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d, EINVAL);
		d.pad = 0;
		do_ioctl(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d, EINVAL);
		d.handle = 0;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d, EINVAL);
		d.handle = 0x7ffffff0;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d, EINVAL);
		/* handles are per file */
		{
			int other = qt_reopen(&dev);

			d.handle = b;
			do_ioctl_err(other, DRM_IOCTL_SYNCOBJ_DESTROY, &d,
				     EINVAL);
			close(other);
		}
		sync_destroy(b);
	}

	igt_subtest("create-signaled") {
		uint32_t s = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		uint32_t u = sync_create(0);
		uint32_t both[2] = { u, s }, first;

		igt_assert_eq(wait1(s, 0, 0), 0);
		igt_assert_eq(wait1(s, 0, WAIT_SUBMIT), 0);
		igt_assert_eq(tl_wait1(s, 0, 0, 0), 0);
		/* no fence: EINVAL, or ETIME when waiting for a submission */
		igt_assert_eq(wait1(u, 0, 0), -EINVAL);
		igt_assert_eq(wait1(u, 0, WAIT_SUBMIT), -ETIME);
		igt_assert_eq(wait1(u, 100 * MS, WAIT_SUBMIT), -ETIME);
		/* any of them: the signalled one's index */
		igt_assert_eq(wait_raw(both, 2, 0, WAIT_SUBMIT, &first), 0);
		igt_assert_eq(first, 1);
		/* all of them: time out */
		igt_assert_eq(wait_raw(both, 2, 0, WAIT_SUBMIT | WAIT_ALL,
				       NULL), -ETIME);
		/* a binary syncobj is at point 0 */
		igt_assert_eq_u64(query(s, 0), 0);
		igt_assert_eq_u64(query(u, 0), 0);
		sync_destroy(s);
		sync_destroy(u);
	}

	igt_subtest("wait-any-all") {
		struct stall st;
		uint32_t h[3], first;
		int64_t t0, t;

		stall_init(&st);
		h[0] = sync_create(0);
		h[1] = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		h[2] = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		stall_submit(&st, h[0], 0);
		/* not signalled; the others are */
		igt_assert_eq(wait1(h[0], 0, 0), -ETIME);
		igt_assert_eq(wait_raw(h, 3, 0, 0, &first), 0);
		igt_assert_eq(first, 1);
		igt_assert_eq(wait_raw(h, 3, 0, WAIT_ALL, NULL), -ETIME);
		/* an absolute timeout: waits until then, not longer */
		t0 = qgpu_now_ns();
		igt_assert_eq(wait_raw(h, 3, t0 + 150 * MS, WAIT_ALL, NULL),
			      -ETIME);
		t = qgpu_now_ns() - t0;
		igt_assert_f(t >= 140 * MS && t < 2 * SEC_NS,
			     "waited %lld ms for a 150 ms deadline\n",
			     (long long)(t / MS));
		/* a deadline in the past is a poll */
		t0 = qgpu_now_ns();
		igt_assert_eq(wait_raw(h, 1, t0 - SEC_NS, 0, NULL), -ETIME);
		igt_assert_lt(qgpu_now_ns() - t0, 100 * MS);
		igt_assert_eq(wait_raw(&h[1], 1, 1, 0, NULL), 0);
		/* the GPU finishes: all of them signal */
		stall_release(&st);
		igt_assert_eq(wait_raw(h, 3, qgpu_now_ns() + 10 * SEC_NS,
				       WAIT_ALL, &first), 0);
		igt_assert_eq(st.m[1], 1);
		igt_assert_eq(wait_raw(h, 3, 0, 0, &first), 0);
		igt_assert_eq(first, 0);
		stall_fini(&st);
		sync_destroy(h[0]);
		sync_destroy(h[1]);
		sync_destroy(h[2]);
	}

	igt_subtest("wait-for-submit-by-gpu-work") {
		struct stall st;
		struct later l = { .op = LATER_SUBMIT, .release_ms = 200 };
		uint32_t h = sync_create(0);
		int64_t t0;

		stall_init(&st);
		l.handle = h;
		l.stall = &st;
		/* without WAIT_FOR_SUBMIT an empty syncobj is an error */
		igt_assert_eq(wait1(h, SEC_NS, 0), -EINVAL);
		/* with it: the submit comes (200 ms), its work is released
		 * (200 ms later), its fence signals */
		t0 = qgpu_now_ns();
		later_start(&l);
		igt_assert_eq(wait1(h, 10 * SEC_NS, WAIT_SUBMIT), 0);
		igt_assert_lte(350 * MS, qgpu_now_ns() - t0);
		igt_assert_eq(st.m[1], 1);
		later_join(&l);
		stall_fini(&st);
		sync_destroy(h);
	}

	igt_subtest("wait-for-submit-by-signal") {
		struct later l = { .op = LATER_SIGNAL };
		uint32_t h[2] = { sync_create(0), sync_create(0) };
		int64_t t0;

		l.handle = h[1];
		later_start(&l);
		t0 = qgpu_now_ns();
		/* any: the one signalled later */
		{
			uint32_t first;

			igt_assert_eq(wait_raw(h, 2, t0 + 10 * SEC_NS,
					       WAIT_SUBMIT, &first), 0);
			igt_assert_eq(first, 1);
		}
		igt_assert_lte(150 * MS, qgpu_now_ns() - t0);
		later_join(&l);
		igt_assert_eq(wait1(h[0], 0, WAIT_SUBMIT), -ETIME);
		sync_destroy(h[0]);
		sync_destroy(h[1]);
	}

	igt_subtest("wait-for-submit-by-transfer") {
		struct later l = { .op = LATER_TRANSFER };
		uint32_t h = sync_create(0);
		uint32_t src = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		uint32_t tl = sync_create(0);

		/* a binary syncobj filled by a transfer */
		l.handle = h;
		l.src = src;
		l.point = 0;
		later_start(&l);
		igt_assert_eq(wait1(h, 10 * SEC_NS, WAIT_SUBMIT), 0);
		later_join(&l);
		/* a timeline point filled by a transfer */
		memset(&l, 0, sizeof(l));
		l.op = LATER_TRANSFER;
		l.handle = tl;
		l.src = src;
		l.point = 3;
		later_start(&l);
		igt_assert_eq(tl_wait1(tl, 3, 0, WAIT_SUBMIT), -ETIME);
		igt_assert_eq(tl_wait1(tl, 3, 10 * SEC_NS, WAIT_SUBMIT), 0);
		later_join(&l);
		igt_assert_eq_u64(query(tl, 0), 3);
		sync_destroy(h);
		sync_destroy(src);
		sync_destroy(tl);
	}

	igt_subtest("transfer-waits-for-submit") {
		struct later l = { .op = LATER_SIGNAL };
		uint32_t src = sync_create(0), dst = sync_create(0);

		/* no fence to transfer */
		igt_assert_eq(transfer(dst, 0, src, 0, 0), -EINVAL);
		igt_assert_eq(transfer(dst, 5, src, 0, 0), -EINVAL);
		/* WAIT_FOR_SUBMIT: the transfer waits for the source */
		l.handle = src;
		later_start(&l);
		igt_assert_eq(transfer(dst, 0, src, 0, WAIT_SUBMIT), 0);
		later_join(&l);
		igt_assert_eq(wait1(dst, 0, 0), 0);
		sync_destroy(src);
		sync_destroy(dst);
	}

	igt_subtest("wait-available") {
		struct stall st;
		struct later l = { .op = LATER_SUBMIT };
		uint32_t tl = sync_create(0), first;
		uint64_t pt = 5;

		stall_init(&st);
		/* no point 5 yet: not available, not signalled */
		igt_assert_eq(tl_wait1(tl, 5, 0, WAIT_AVAILABLE), -ETIME);
		igt_assert_eq(tl_wait1(tl, 5, 0, 0), -EINVAL);
		/* binary waits do not know WAIT_AVAILABLE */
		igt_assert_eq(wait_raw(&tl, 1, 0, WAIT_AVAILABLE, NULL),
			      -EINVAL);
		l.handle = tl;
		l.point = 5;
		l.stall = &st;
		later_start(&l);
		/* available once submitted, though the GPU has not run it */
		igt_assert_eq(tl_wait_raw(&tl, &pt, 1,
					  qgpu_now_ns() + 10 * SEC_NS,
					  WAIT_AVAILABLE, &first), 0);
		later_join(&l);
		igt_assert_eq(first, 0);
		igt_assert_eq(st.m[1], 0);
		igt_assert_eq(tl_wait1(tl, 5, 0, 0), -ETIME);
		igt_assert_eq(tl_wait1(tl, 5, 50 * MS, WAIT_SUBMIT), -ETIME);
		igt_assert_eq_u64(query(tl, 0), 0);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  5);
		/* an earlier point resolves to the next one submitted:
		 * available, not signalled */
		igt_assert_eq(tl_wait1(tl, 3, 0, WAIT_AVAILABLE), 0);
		igt_assert_eq(tl_wait1(tl, 3, 0, 0), -ETIME);
		stall_release(&st);
		igt_assert_eq(tl_wait1(tl, 5, 10 * SEC_NS, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 5);
		stall_fini(&st);
		sync_destroy(tl);
	}

	igt_subtest("reset") {
		struct stall st;
		uint32_t h[2] = { sync_create(DRM_SYNCOBJ_CREATE_SIGNALED),
				  sync_create(0) };

		stall_init(&st);
		stall_submit(&st, h[1], 0);
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_RESET, h, 2, 0), 0);
		/* both empty now, even the one with GPU work behind it */
		igt_assert(no_fence(h[0]));
		igt_assert(no_fence(h[1]));
		/* resetting an empty one is fine */
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_RESET, h, 1, 0), 0);
		stall_fini(&st);
		igt_assert(no_fence(h[1]));
		sync_destroy(h[0]);
		sync_destroy(h[1]);
	}

	igt_subtest("signal") {
		struct stall st;
		uint32_t h[2] = { sync_create(0), sync_create(0) };

		stall_init(&st);
		stall_submit(&st, h[1], 0);
		igt_assert_eq(wait1(h[1], 0, 0), -ETIME);
		/* SIGNAL replaces whatever fence with a signalled one */
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_SIGNAL, h, 2, 0), 0);
		igt_assert_eq(wait_raw(h, 2, 0, WAIT_ALL, NULL), 0);
		igt_assert_eq(st.m[1], 0);	/* the GPU work has not run */
		stall_fini(&st);
		sync_destroy(h[0]);
		sync_destroy(h[1]);
	}

	igt_subtest("timeline-signal-query") {
		struct stall st;
		uint32_t tl = sync_create(0), tl2 = sync_create(0);
		uint32_t both[2] = { tl, tl2 };
		uint64_t pts[2] = { 2, 7 };

		/* an empty timeline is at point 0 */
		igt_assert_eq_u64(query(tl, 0), 0);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  0);
		tl_signal(tl, 1);
		tl_signal(tl, 3);
		igt_assert_eq_u64(query(tl, 0), 3);
		/* points up to the last are signalled; later ones do not exist */
		igt_assert_eq(tl_wait1(tl, 2, 0, 0), 0);
		igt_assert_eq(tl_wait1(tl, 3, 0, 0), 0);
		igt_assert_eq(tl_wait1(tl, 4, 0, 0), -EINVAL);
		igt_assert_eq(tl_wait1(tl, 4, 50 * MS, WAIT_SUBMIT), -ETIME);
		/* point 0 of a timeline: its last fence */
		igt_assert_eq(tl_wait1(tl, 0, 0, 0), 0);
		/* several syncobjs at once, with their own points */
		igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
					     both, pts, 2, 0), 0);
		igt_assert_eq_u64(query(tl2, 0), 7);
		/* the query answers for every handle */
		pts[0] = pts[1] = ~0ull;
		igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_QUERY, both, pts,
					     2, 0), 0);
		igt_assert_eq_u64(pts[0], 3);
		igt_assert_eq_u64(pts[1], 7);
		/* GPU work at point 10: submitted, not signalled */
		stall_init(&st);
		stall_submit(&st, tl, 10);
		igt_assert_eq_u64(query(tl, 0), 3);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  10);
		igt_assert_eq(tl_wait1(tl, 10, 0, 0), -ETIME);
		/* a point between the two waits for the later one */
		igt_assert_eq(tl_wait1(tl, 6, 0, 0), -ETIME);
		igt_assert_eq(tl_wait1(tl, 3, 0, 0), 0);
		stall_release(&st);
		igt_assert_eq(tl_wait1(tl, 10, 10 * SEC_NS, 0), 0);
		igt_assert_eq(tl_wait1(tl, 6, 0, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 10);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  10);
		stall_fini(&st);
		/* timeline signal with no points array: point 0 (binary) */
		igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
					     &tl2, NULL, 1, 0), 0);
		igt_assert_eq(tl_wait1(tl2, 0, 0, 0), 0);
		sync_destroy(tl);
		sync_destroy(tl2);
	}

	igt_subtest("transfer") {
		struct stall st;
		uint32_t bin = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		uint32_t tl = sync_create(0), bin2 = sync_create(0);

		/* binary -> timeline point */
		igt_assert_eq(transfer(tl, 4, bin, 0, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 4);
		igt_assert_eq(tl_wait1(tl, 4, 0, 0), 0);
		/* timeline point -> binary */
		igt_assert_eq(transfer(bin2, 0, tl, 4, 0), 0);
		igt_assert_eq(wait1(bin2, 0, 0), 0);
		/* a point that does not exist yet */
		igt_assert_eq(transfer(bin2, 0, tl, 9, 0), -EINVAL);
		/* unsignalled GPU work moved into a timeline point */
		stall_init(&st);
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_RESET, &bin, 1, 0),
			      0);
		stall_submit(&st, bin, 0);
		igt_assert_eq(transfer(tl, 8, bin, 0, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 4);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  8);
		igt_assert_eq(tl_wait1(tl, 8, 0, 0), -ETIME);
		/* and from there into another binary syncobj */
		igt_assert_eq(transfer(bin2, 0, tl, 8, 0), 0);
		igt_assert_eq(wait1(bin2, 0, 0), -ETIME);
		stall_release(&st);
		igt_assert_eq(tl_wait1(tl, 8, 10 * SEC_NS, 0), 0);
		igt_assert_eq(wait1(bin2, 10 * SEC_NS, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 8);
		stall_fini(&st);
		sync_destroy(bin);
		sync_destroy(bin2);
		sync_destroy(tl);
	}

	igt_subtest("fd-export-import") {
		uint32_t h = sync_create(0), h2 = 0, h3 = 0;
		int sfd, sfd2, other = qt_reopen(&dev);

		igt_assert_eq(handle_to_fd(dev.fd, h, 0, &sfd), 0);
		igt_assert(sfd >= 0);
		igt_assert(fcntl(sfd, F_GETFD) & FD_CLOEXEC);
		/* into the same file: a second handle to the same syncobj */
		igt_assert_eq(fd_to_handle(dev.fd, sfd, 0, &h2), 0);
		igt_assert_neq(h2, h);
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_SIGNAL, &h2, 1, 0),
			      0);
		igt_assert_eq(wait1(h, 0, 0), 0);
		/* into another file */
		igt_assert_eq(fd_to_handle(other, sfd, 0, &h3), 0);
		{
			struct drm_syncobj_wait w = {
				.handles = (uintptr_t)&h3, .count_handles = 1,
			};

			do_ioctl(other, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		}
		igt_assert_eq(array_ioctl(DRM_IOCTL_SYNCOBJ_RESET, &h, 1, 0), 0);
		{
			struct drm_syncobj_wait w = {
				.handles = (uintptr_t)&h3, .count_handles = 1,
			};

			do_ioctl_err(other, DRM_IOCTL_SYNCOBJ_WAIT, &w, EINVAL);
		}
		/* the fd outlives every handle */
		sync_destroy(h);
		sync_destroy(h2);
		igt_assert_eq(fd_to_handle(dev.fd, sfd, 0, &h), 0);
		/* exported again: another fd for the same syncobj */
		igt_assert_eq(handle_to_fd(dev.fd, h, 0, &sfd2), 0);
		igt_assert_neq(sfd2, sfd);
		close(sfd);
		close(sfd2);
		sync_destroy(h);
		close(other);
	}

	igt_subtest("fd-bad") {
		struct drm_syncobj_handle a;
		uint32_t h = sync_create(0), h2;
		int efd = eventfd(0, EFD_CLOEXEC), fd, dead;

		igt_assert(efd >= 0);
		/* handle -> fd: unknown handle is EINVAL (not ENOENT) */
		igt_assert_eq(handle_to_fd(dev.fd, 0, 0, &fd), -EINVAL);
		igt_assert_eq(handle_to_fd(dev.fd, 0x7ffffff0, 0, &fd), -EINVAL);
		igt_assert_eq(handle_to_fd(dev.fd, h, 2, &fd), -EINVAL);
		igt_assert_eq(handle_to_fd(dev.fd, h, 3, &fd), -EINVAL);
		memset(&a, 0, sizeof(a));
		a.handle = h;
		a.pad = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a, EINVAL);
		/* fd -> handle: not a syncobj fd, not an fd */
		igt_assert_eq(fd_to_handle(dev.fd, efd, 0, &h2), -EINVAL);
		igt_assert_eq(fd_to_handle(dev.fd, dev.fd, 0, &h2), -EINVAL);
		igt_assert_eq(fd_to_handle(dev.fd, -1, 0, &h2), -EINVAL);
		dead = dup(efd);
		close(dead);
		igt_assert_eq(fd_to_handle(dev.fd, dead, 0, &h2), -EINVAL);
		igt_assert_eq(handle_to_fd(dev.fd, h, 0, &fd), 0);
		h2 = 0;
		igt_assert_eq(fd_to_handle(dev.fd, fd, 2, &h2), -EINVAL);
		memset(&a, 0, sizeof(a));
		a.fd = fd;
		a.pad = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a, EINVAL);
		close(fd);
		close(efd);
		sync_destroy(h);
	}

	igt_subtest("sync-file-export-import") {
		struct stall st;
		uint32_t h = sync_create(0), s, bin, tl;
		int sf, sf2;

		/* nothing to export from an empty syncobj */
		igt_assert_eq(handle_to_fd(dev.fd, h, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
					   &sf), -EINVAL);
		igt_assert_eq(handle_to_fd(dev.fd, 0x7ffffff0,
					   DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
					   &sf), -ENOENT);
		/* a signalled one: a signalled sync_file */
		s = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		igt_assert_eq(handle_to_fd(dev.fd, s, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
					   &sf), 0);
		igt_assert(readable(sf, 0));
		close(sf);
		/* GPU work: the sync_file signals when it is done */
		stall_init(&st);
		stall_submit(&st, h, 0);
		igt_assert_eq(handle_to_fd(dev.fd, h, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
					   &sf), 0);
		igt_assert(!readable(sf, 50));
		/* imported into a binary syncobj: it carries that fence */
		bin = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		igt_assert_eq(fd_to_handle(dev.fd, sf, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
					   &bin), 0);
		igt_assert_eq(wait1(bin, 0, 0), -ETIME);
		/* into a timeline point: import into a binary, transfer */
		tl = sync_create(0);
		tl_signal(tl, 1);
		igt_assert_eq(transfer(tl, 2, bin, 0, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 1);
		igt_assert_eq_u64(query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
				  2);
		/* and back out of the timeline as a sync_file */
		igt_assert_eq(handle_to_fd(dev.fd, tl, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
					   &sf2), 0);
		igt_assert(!readable(sf2, 0));
		stall_release(&st);
		igt_assert(readable(sf, 10000));
		igt_assert(readable(sf2, 10000));
		igt_assert_eq(wait1(bin, 10 * SEC_NS, 0), 0);
		igt_assert_eq(tl_wait1(tl, 2, 10 * SEC_NS, 0), 0);
		igt_assert_eq_u64(query(tl, 0), 2);
		close(sf2);
		/* import: unknown handle, not a sync_file */
		{
			uint32_t bad = 0x7ffffff0;

			igt_assert_eq(fd_to_handle(dev.fd, sf, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
						   &bad), -ENOENT);
		}
		{
			int efd = eventfd(0, EFD_CLOEXEC), sofd;

			igt_assert_eq(fd_to_handle(dev.fd, efd, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
						   &bin), -EINVAL);
			igt_assert_eq(handle_to_fd(dev.fd, s, 0, &sofd), 0);
			igt_assert_eq(fd_to_handle(dev.fd, sofd, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
						   &bin), -EINVAL);
			close(sofd);
			close(efd);
		}
		close(sf);
		stall_fini(&st);
		sync_destroy(h);
		sync_destroy(s);
		sync_destroy(bin);
		sync_destroy(tl);
	}

	igt_subtest("eventfd") {
		struct qt_syncobj_eventfd e;
		struct stall st;
		uint32_t h = sync_create(0), tl = sync_create(0), s;
		uint64_t v;
		int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

		igt_assert(efd >= 0 && efd2 >= 0);
		/* already signalled: at once */
		s = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		igt_assert_eq(eventfd_ioctl(s, 0, efd, 0), 0);
		igt_assert(readable(efd, 1000));
		igt_assert_eq(read(efd, &v, 8), 8);
		igt_assert_eq_u64(v, 1);
		/* GPU work: when it is done */
		stall_init(&st);
		stall_submit(&st, h, 0);
		igt_assert_eq(eventfd_ioctl(h, 0, efd, 0), 0);
		/* a timeline point: once available, and once signalled */
		igt_assert_eq(eventfd_ioctl(tl, 3, efd2, WAIT_AVAILABLE), 0);
		igt_assert(!readable(efd2, 50));
		igt_assert_eq(transfer(tl, 3, h, 0, 0), 0);
		igt_assert(readable(efd2, 1000));
		igt_assert_eq(read(efd2, &v, 8), 8);
		igt_assert_eq(eventfd_ioctl(tl, 3, efd2, 0), 0);
		igt_assert(!readable(efd, 50));
		igt_assert(!readable(efd2, 0));
		stall_release(&st);
		igt_assert(readable(efd, 10000));
		igt_assert(readable(efd2, 10000));
		igt_assert_eq(read(efd, &v, 8), 8);
		igt_assert_eq_u64(v, 1);
		/* bad input */
		igt_assert_eq(eventfd_ioctl(h, 0, efd, WAIT_ALL), -EINVAL);
		igt_assert_eq(eventfd_ioctl(h, 0, efd, WAIT_SUBMIT), -EINVAL);
		memset(&e, 0, sizeof(e));
		e.handle = h;
		e.fd = efd;
		e.pad = 1;
		do_ioctl_err(dev.fd, QT_IOCTL_SYNCOBJ_EVENTFD, &e, EINVAL);
		igt_assert_eq(eventfd_ioctl(0x7ffffff0, 0, efd, 0), -ENOENT);
		igt_assert_eq(eventfd_ioctl(h, 0, dev.fd, 0), -EINVAL);
		igt_assert_eq(eventfd_ioctl(h, 0, -1, 0), -EBADF);
		stall_fini(&st);
		close(efd);
		close(efd2);
		sync_destroy(h);
		sync_destroy(s);
		sync_destroy(tl);
	}

	igt_subtest("bad-wait") {
		uint32_t h[2] = { sync_create(DRM_SYNCOBJ_CREATE_SIGNALED), 0 };
		uint64_t pts[2] = { 0, 0 };
		uint32_t bits[] = { WAIT_AVAILABLE, 1u << 4, 0x80000000u };
		char *page;
		unsigned int i;

		/* unknown flags (WAIT_AVAILABLE is for timeline waits) */
		for (i = 0; i < ARRAY_SIZE(bits); i++)
			igt_assert_eq(wait_raw(h, 1, 0, bits[i], NULL), -EINVAL);
		igt_assert_eq(tl_wait_raw(h, pts, 1, 0, 1u << 4, NULL), -EINVAL);
		/* count 0 is a successful no-op, whatever the pointer */
		igt_assert_eq(wait_raw((uint32_t *)16, 0, 0, 0, NULL), 0);
		igt_assert_eq(tl_wait_raw((uint32_t *)16, (uint64_t *)16, 0, 0,
					  0, NULL), 0);
		/* unknown handles */
		h[1] = 0x7ffffff0;
		igt_assert_eq(wait_raw(h, 2, 0, 0, NULL), -ENOENT);
		h[1] = 0;
		igt_assert_eq(wait_raw(h, 2, 0, 0, NULL), -ENOENT);
		igt_assert_eq(tl_wait_raw(h, pts, 2, 0, 0, NULL), -ENOENT);
		/* bad pointers */
		igt_assert_eq(wait_raw((uint32_t *)16, 1, 0, 0, NULL), -EFAULT);
		igt_assert_eq(tl_wait_raw(h, (uint64_t *)16, 1, 0, 0, NULL),
			      -EFAULT);
		/* a huge count with a short array: EFAULT, not a crash */
		page = short_array(h, 4);
		igt_assert_eq(wait_raw((uint32_t *)page, 1u << 20, 0, 0, NULL),
			      -EFAULT);
		igt_assert_eq(tl_wait_raw((uint32_t *)page, pts, 1u << 20, 0, 0,
					  NULL), -EFAULT);
		short_array_free(page);
		sync_destroy(h[0]);
	}

	igt_subtest("bad-array-ioctls") {
		unsigned long reqs[] = { DRM_IOCTL_SYNCOBJ_RESET,
					 DRM_IOCTL_SYNCOBJ_SIGNAL };
		unsigned long treqs[] = { DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
					  DRM_IOCTL_SYNCOBJ_QUERY };
		uint32_t h[2] = { sync_create(0), 0x7ffffff0 };
		uint64_t pts[2] = { 1, 1 };
		char *page;
		unsigned int i;

		page = short_array(h, 4);
		for (i = 0; i < ARRAY_SIZE(reqs); i++) {
			/* count 0, pad, unknown handles, pointers */
			igt_assert_eq(array_ioctl(reqs[i], h, 0, 0), -EINVAL);
			igt_assert_eq(array_ioctl(reqs[i], h, 1, 1), -EINVAL);
			igt_assert_eq(array_ioctl(reqs[i], h, 2, 0), -ENOENT);
			igt_assert_eq(array_ioctl(reqs[i], &h[1], 1, 0),
				      -ENOENT);
			igt_assert_eq(array_ioctl(reqs[i], (uint32_t *)16, 1,
						  0), -EFAULT);
			igt_assert_eq(array_ioctl(reqs[i], (uint32_t *)page,
						  1u << 20, 0), -EFAULT);
		}
		igt_assert(no_fence(h[0]));	/* nothing was signalled */
		for (i = 0; i < ARRAY_SIZE(treqs); i++) {
			igt_assert_eq(tl_array_ioctl(treqs[i], h, pts, 0, 0),
				      -EINVAL);
			igt_assert_eq(tl_array_ioctl(treqs[i], h, pts, 1, 2),
				      -EINVAL);
			igt_assert_eq(tl_array_ioctl(treqs[i], h, pts, 2, 0),
				      -ENOENT);
			igt_assert_eq(tl_array_ioctl(treqs[i], h,
						     (uint64_t *)16, 1, 0),
				      -EFAULT);
			igt_assert_eq(tl_array_ioctl(treqs[i],
						     (uint32_t *)page, pts,
						     1u << 20, 0), -EFAULT);
		}
		/* TIMELINE_SIGNAL takes no flags at all; QUERY one */
		igt_assert_eq(tl_array_ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
					     h, pts, 1,
					     DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED),
			      -EINVAL);
		igt_assert(no_fence(h[0]));
		short_array_free(page);
		sync_destroy(h[0]);
	}

	igt_subtest("bad-transfer") {
		struct drm_syncobj_transfer t;
		uint32_t s = sync_create(DRM_SYNCOBJ_CREATE_SIGNALED);
		uint32_t d = sync_create(0);

		memset(&t, 0, sizeof(t));
		t.src_handle = s;
		t.dst_handle = d;
		t.pad = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t, EINVAL);
		/* flags: only WAIT_FOR_SUBMIT */
		igt_assert_eq(transfer(d, 0, s, 0, WAIT_ALL), -EINVAL);
		igt_assert_eq(transfer(d, 1, s, 0, WAIT_AVAILABLE), -EINVAL);
		/* unknown handles */
		igt_assert_eq(transfer(0x7ffffff0, 0, s, 0, 0), -ENOENT);
		igt_assert_eq(transfer(d, 0, 0x7ffffff0, 0, 0), -ENOENT);
		igt_assert_eq(transfer(0x7ffffff0, 3, s, 0, 0), -ENOENT);
		igt_assert_eq(transfer(d, 3, 0, 0, 0), -ENOENT);
		igt_assert(no_fence(d));
		/* the good one */
		igt_assert_eq(transfer(d, 0, s, 0, 0), 0);
		igt_assert_eq(wait1(d, 0, 0), 0);
		sync_destroy(s);
		sync_destroy(d);
	}

	igt_subtest("no-leaks") {
		/* the context survived everything; nothing is left */
		qt_assert_clean(dev.fd, ctx);
	}

	igt_fixture {
		qgpu_ctx_destroy(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
