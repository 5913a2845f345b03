// SPDX-License-Identifier: MIT
/*
 * qgpu_usage: monitored fences and the user-mode side of "Allocation Usage
 * Tracking" (WDK), through the real ioctls and libqgpu.
 *
 * The GPU is held deterministically by a DMA buffer that WAITs on a value
 * the CPU writes (the blocker); what must not wait is checked by returning
 * while the blocker still holds the engine (it cannot complete before the
 * CPU releases it), what must wait by not having returned before the
 * release and by seeing the GPU's result after it. Blocks stay well below
 * the driver's 2 s job timeout. CPU time is measured only as a bound that
 * separates sleeping from spinning.
 *
 * Monitored fences: read-only mapping, initial value, bad input; a
 * context's fence advances once per submission (physical and virtual);
 * out-sync values written by the GPU, their rules; the wait sleeps until
 * the interrupt (thread CPU time), times out, is interrupted by a signal,
 * ANY/ALL; in-syncs; export to binary and timeline syncobjs; values of
 * one fence beyond 32 bits merged into one sync file keep the later; a submission
 * that is abandoned or never runs still reaches its values, before its
 * out-syncobj signals.
 * Lock2 (libqgpu resources): DISCARD renames and never waits, and every
 * frame's GPU work sees that frame's data; NO_OVERWRITE never waits;
 * DO_NOT_WAIT answers WasStillDrawing while busy and succeeds after; a
 * synchronising lock sleeps until the GPU's write is visible; a read lock
 * waits only for writers.
 */
#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include "qgpu_swsync.h"
#include "qgpu_test.h"

#define BLOCK_NS	(300 * 1000 * 1000ll)	/* how long a blocker holds */

static struct qgpu_dev dev;
static uint32_t vis_ap;

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * SEC_NS + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / SEC_NS, ns % SEC_NS };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------------------ */
/* The blocker                                                               */

struct blocker {
	uint32_t h;
	volatile uint64_t *w;
};

/*
 * In the aperture segment, where nothing moves it: a DMA buffer that uses
 * it reaches the ring at once. In VRAM it could be evicted to the aperture
 * by the tests' pressure and migrate back when used again, and the paging
 * for that would let the next submission of another context overtake it.
 */
static void blocker_init(int fd, struct blocker *b)
{
	b->h = qt_bo(fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
		     QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(fd, b->h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	b->w = qt_map(fd, b->h, 4096);
	memset((void *)b->w, 0, 4096);
}

static void blocker_fini(int fd, struct blocker *b)
{
	qt_unmap(fd, b->h, (void *)b->w, 4096);
	qt_close(fd, b->h);
}

/* Queue the blocker on @c (released by blocker_release(@b, @gen)). */
static void blocker_submit(struct qgpu_context *c, struct blocker *b,
			   uint64_t gen, const struct drm_qgpu_sync_entry *out,
			   uint32_t nout)
{
	struct qgpu_cb *cb = qt_cb(&dev);
	struct drm_qgpu_submit a;

	qgpu_cb_bind(cb, 0, b->h, 0, 4096);
	qgpu_cb_wait(cb, 0, 0, gen);
	qgpu_cb_to_submit(cb, c->id, &a);
	igt_assert_eq(qgpu_context_submit(c, &a, NULL, 0, out, nout), 0);
	qt_cb_free(cb);
}

static void blocker_release(struct blocker *b, uint64_t gen)
{
	__atomic_store_n(&b->w[0], gen, __ATOMIC_SEQ_CST);
}

static void nop_submit(struct qgpu_context *c,
		       const struct drm_qgpu_sync_entry *in, uint32_t nin,
		       const struct drm_qgpu_sync_entry *out, uint32_t nout,
		       int expect)
{
	struct qgpu_cb *cb = qt_cb(&dev);
	struct drm_qgpu_submit a;
	int ret;

	qgpu_cb_nop(cb, 1);
	qgpu_cb_to_submit(cb, c->id, &a);
	ret = qgpu_context_submit(c, &a, in, nin, out, nout);
	igt_assert_f(ret == expect, "submit: %s, want %s\n", strerror(-ret),
		     strerror(-expect));
	qt_cb_free(cb);
}

/* ------------------------------------------------------------------------ */
/* Monitored fences                                                          */

static void mfence_basics(void)
{
	struct drm_qgpu_mfence_create c = { 0 };
	struct drm_qgpu_mfence_destroy d = { 0 };
	struct qgpu_mfence mf;
	long pg = sysconf(_SC_PAGESIZE);
	int fd2, ret;
	void *p;

	igt_assert_eq(qgpu_mfence_create(dev.fd, 42, &mf), 0);
	igt_assert_eq(qgpu_mfence_read(&mf), 42);
	/* the CPU reads it; it never writes it */
	c.initial_value = 7;
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c), 0);
	igt_assert_eq(c.offset % 8, 0);
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd,
		 (off_t)c.mmap_offset);
	igt_assert_f(p == MAP_FAILED && errno == EACCES,
		     "writable mapping: %s\n", strerror(errno));
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, dev.fd,
		 (off_t)c.mmap_offset);
	igt_assert(p != MAP_FAILED);
	igt_assert_eq(*(volatile uint64_t *)((char *)p + c.offset), 7);
	igt_assert_f(mprotect(p, pg, PROT_READ | PROT_WRITE) == -1,
		     "mprotect to writable succeeded\n");
	munmap(p, pg);
	/* two pages, a mapping beyond the pages, a huge one */
	p = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, dev.fd,
		 (off_t)c.mmap_offset);
	igt_assert(p == MAP_FAILED);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, dev.fd,
		 (off_t)(c.mmap_offset + 64 * pg));
	igt_assert(p == MAP_FAILED);
	/* bad input */
	c.flags = 1;
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c), -1);
	igt_assert_eq(errno, EINVAL);
	c.flags = 0;
	c.pad = 1;
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c), -1);
	igt_assert_eq(errno, EINVAL);
	d.handle = c.handle;
	d.pad = 1;
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), -1);
	igt_assert_eq(errno, EINVAL);
	/* another file cannot name it, nor map its page */
	fd2 = qt_reopen(&dev);
	d.pad = 0;
	igt_assert_eq(drmIoctl(fd2, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), -1);
	igt_assert_eq(errno, ENOENT);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd2, (off_t)c.mmap_offset);
	igt_assert_f(p == MAP_FAILED, "another file mapped the fence page\n");
	close(fd2);
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), 0);
	igt_assert_eq(drmIoctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), -1);
	igt_assert_eq(errno, ENOENT);
	ret = qgpu_mfence_destroy(&mf);
	igt_assert_eq(ret, 0);
}

static void ctx_fence_advances(uint32_t flags)
{
	struct qgpu_context c;
	uint64_t i;

	igt_assert_eq(qgpu_context_create(dev.fd, flags, &c), 0);
	igt_assert_eq(qgpu_mfence_read(&c.fence), 0);
	for (i = 1; i <= 5; i++) {
		if (flags & QGPU_CTX_CREATE_VIRTUAL) {
			struct qgpu_vcb vcb;
			struct drm_qgpu_submit a;

			igt_assert_eq(qgpu_vcb_init(&vcb), 0);
			qgpu_vcb_nop(&vcb, 1);
			qgpu_vcb_to_submit(&vcb, c.id, &a);
			igt_assert_eq(qgpu_context_submit(&c, &a, NULL, 0,
							  NULL, 0), 0);
			qgpu_vcb_fini(&vcb);
		} else {
			nop_submit(&c, NULL, 0, NULL, 0, 0);
		}
		igt_assert_eq(c.last, i);
	}
	igt_assert_eq(qgpu_mfence_wait(&c.fence, 5, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_mfence_read(&c.fence), 5);
	igt_assert_eq(qgpu_context_destroy(&c), 0);
}

struct waiter {
	const struct qgpu_mfence *mf;
	uint64_t value;
	int64_t deadline;
	bool raw;		/* plain ioctl(): libdrm restarts after signals */
	int ret;
	int64_t cpu_ns;
	int64_t wall_ns;
	int64_t end_ns;		/* qgpu_now_ns() when the wait returned */
	volatile bool done;
};

static void *waiter_fn(void *p)
{
	struct waiter *w = p;
	int64_t c0 = thread_cpu_ns(), t0 = qgpu_now_ns();

	if (w->raw) {
		struct drm_qgpu_mfence_wait a = {
			.handles = (uintptr_t)&w->mf->handle,
			.values = (uintptr_t)&w->value,
			.count = 1,
			.timeout_ns = w->deadline,
		};

		w->ret = ioctl(w->mf->fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &a) ?
			 -errno : 0;
	} else {
		w->ret = qgpu_mfence_wait_many(w->mf->fd, &w->mf->handle,
					       &w->value, 1, 0, w->deadline,
					       NULL);
	}
	w->cpu_ns = thread_cpu_ns() - c0;
	w->end_ns = qgpu_now_ns();
	w->wall_ns = w->end_ns - t0;
	w->done = true;
	return NULL;
}

static void wait_sleeps_until_interrupt(void)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct qgpu_context c;
	struct qgpu_mfence mf;
	struct blocker b;
	struct waiter w = { 0 };
	int64_t rel;
	pthread_t t;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	out.handle = mf.handle;
	out.point = 10;
	blocker_submit(&c, &b, 1, &out, 1);
	w.mf = &mf;
	w.value = 10;
	w.deadline = qgpu_now_ns() + 30 * SEC_NS;
	igt_assert_eq(pthread_create(&t, NULL, waiter_fn, &w), 0);
	sleep_ns(BLOCK_NS);
	igt_assert_f(!w.done, "the wait returned while the GPU was held (%d)\n",
		     w.ret);
	igt_assert_eq(qgpu_mfence_read(&mf), 0);
	rel = qgpu_now_ns();
	blocker_release(&b, 1);
	pthread_join(t, NULL);
	igt_assert_eq(w.ret, 0);
	igt_assert_eq(qgpu_mfence_read(&mf), 10);
	igt_info("waited %.1f ms, %.2f ms of CPU, woke %.2f ms after the release\n",
		 w.wall_ns / 1e6, w.cpu_ns / 1e6, (w.end_ns - rel) / 1e6);
	/* woken by the signal's interrupt, not by the 30 s deadline */
	igt_assert_f(w.end_ns - rel < 5 * SEC_NS,
		     "woke %.1f ms after the release\n", (w.end_ns - rel) / 1e6);
	/* sleeping, not spinning: a small fraction of the time it waited */
	igt_assert_f(w.cpu_ns * 5 < w.wall_ns,
		     "the waiting thread used %.1f ms of CPU in %.1f ms\n",
		     w.cpu_ns / 1e6, w.wall_ns / 1e6);
	igt_assert_eq(qgpu_mfence_wait(&c.fence, c.last, 5 * SEC_NS), 0);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c);
	blocker_fini(dev.fd, &b);
}

/* errno of an ioctl that must fail (0 if it succeeded) */
static int ioctl_errno(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? errno : 0;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void wait_timeout_signal_any_all(void)
{
	struct drm_qgpu_mfence_wait bad;
	struct qgpu_mfence a, b;
	uint32_t h[2], first = 99;
	uint64_t v[2];
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct waiter w = { 0 };
	pthread_t t;

	igt_assert_eq(qgpu_mfence_create(dev.fd, 3, &a), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &b), 0);
	h[0] = a.handle;
	h[1] = b.handle;
	v[0] = 4;
	v[1] = 1;
	/* nothing will write them: the deadline ends the wait */
	igt_assert_eq(qgpu_mfence_wait_many(dev.fd, h, v, 2, 0,
					    qgpu_now_ns() + 50000000, NULL),
		      -ETIME);
	igt_assert_eq(qgpu_mfence_wait_many(dev.fd, h, v, 2, 0, 0, NULL),
		      -ETIME);
	v[0] = 3;
	igt_assert_eq(qgpu_mfence_wait_many(dev.fd, h, v, 2,
					    QGPU_MFENCE_WAIT_ANY, 0, &first),
		      0);
	igt_assert_eq(first, 0);
	igt_assert_eq(qgpu_mfence_wait_many(dev.fd, h, v, 2, 0, 0, NULL),
		      -ETIME);
	v[1] = 0;
	igt_assert_eq(qgpu_mfence_wait_many(dev.fd, h, v, 2, 0, 0, NULL), 0);
	/* a signal ends it cleanly */
	sigaction(SIGUSR1, &sa, NULL);
	w.mf = &b;
	w.raw = true;
	w.value = 100;
	w.deadline = qgpu_now_ns() + 20 * SEC_NS;
	igt_assert_eq(pthread_create(&t, NULL, waiter_fn, &w), 0);
	sleep_ns(100000000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	igt_assert_f(w.ret == -EINTR, "wait after a signal: %s\n",
		     strerror(-w.ret));
	igt_assert_f(w.wall_ns < 10 * SEC_NS, "the signal did not end it\n");
	/* bad input */
	memset(&bad, 0, sizeof(bad));
	bad.handles = (uintptr_t)h;
	bad.values = (uintptr_t)v;
	bad.count = 0;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), EINVAL);
	bad.count = QGPU_MFENCE_WAIT_MAX + 1;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), EINVAL);
	bad.count = 1;
	bad.flags = 2;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), EINVAL);
	bad.flags = 0;
	bad.pad = 1;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), EINVAL);
	bad.pad = 0;
	bad.handles = 8;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), EFAULT);
	bad.handles = (uintptr_t)h;
	h[0] = 0x7fff;
	igt_assert_eq(ioctl_errno(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &bad), ENOENT);
	qgpu_mfence_destroy(&a);
	qgpu_mfence_destroy(&b);
}

static void out_sync_rules(void)
{
	struct drm_qgpu_sync_entry out[2] = {
		{ .flags = QGPU_SYNC_MONITORED },
		{ .flags = QGPU_SYNC_MONITORED },
	};
	struct qgpu_context c;
	struct qgpu_mfence mf;

	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 5, &mf), 0);
	out[0].handle = mf.handle;
	out[1].handle = mf.handle;
	/* not above the value queued (the initial one) */
	out[0].point = 5;
	nop_submit(&c, NULL, 0, out, 1, -EINVAL);
	/* not increasing within one submission */
	out[0].point = 9;
	out[1].point = 8;
	nop_submit(&c, NULL, 0, out, 2, -EINVAL);
	out[1].point = 9;
	nop_submit(&c, NULL, 0, out, 2, -EINVAL);
	/* unknown handle, unknown flag */
	out[1].handle = 0x7fff;
	out[1].point = 10;
	nop_submit(&c, NULL, 0, out, 2, -ENOENT);
	out[1].handle = mf.handle;
	out[1].flags = QGPU_SYNC_MONITORED | 4;
	nop_submit(&c, NULL, 0, out, 2, -EINVAL);
	/* none of the refused submissions advanced anything */
	igt_assert_eq(c.last, 0);
	out[1].flags = QGPU_SYNC_MONITORED;
	nop_submit(&c, NULL, 0, out, 2, 0);
	igt_assert_eq(c.last, 1);
	igt_assert_eq(qgpu_mfence_wait(&mf, 10, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_mfence_read(&mf), 10);
	igt_assert_eq(qgpu_mfence_wait(&c.fence, 1, 5 * SEC_NS), 0);
	/* 10 is queued now: 10 again is refused, 11 is fine */
	out[0].point = 10;
	nop_submit(&c, NULL, 0, out, 1, -EINVAL);
	out[0].point = 11;
	nop_submit(&c, NULL, 0, out, 1, 0);
	igt_assert_eq(qgpu_mfence_wait(&mf, 11, 5 * SEC_NS), 0);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c);
}

/*
 * A context's own fence only grows, by one per submission: a submission
 * that would take it past the largest value (an out-sync on it at
 * UINT64_MAX, or any submission once it is there) is refused, and the
 * value it holds is never written back to 0 by the device.
 */
static void ctx_fence_no_wrap(uint32_t flags)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct drm_qgpu_submit a;
	struct qgpu_context c;
	struct qgpu_vcb vcb;
	struct qgpu_cb *cb = NULL;
	int i, ret;

	igt_assert_eq(qgpu_context_create(dev.fd, flags, &c), 0);
	out.handle = c.fence.handle;
	for (i = 0; i < 3; i++) {
		/* its own advance would be UINT64_MAX + 1: no room */
		out.point = i == 0 ? UINT64_MAX : UINT64_MAX - 1;
		if (flags & QGPU_CTX_CREATE_VIRTUAL) {
			igt_assert_eq(qgpu_vcb_init(&vcb), 0);
			qgpu_vcb_nop(&vcb, 1);
			qgpu_vcb_to_submit(&vcb, c.id, &a);
		} else {
			cb = qt_cb(&dev);
			qgpu_cb_nop(cb, 1);
			qgpu_cb_to_submit(cb, c.id, &a);
		}
		ret = qgpu_context_submit(&c, &a, NULL, 0, &out,
					  i == 2 ? 0 : 1);
		if (flags & QGPU_CTX_CREATE_VIRTUAL)
			qgpu_vcb_fini(&vcb);
		else
			qt_cb_free(cb);
		if (i == 1) {
			/* UINT64_MAX - 1, then its own advance: UINT64_MAX */
			igt_assert_eq(ret, 0);
			igt_assert(c.last == UINT64_MAX);
			igt_assert_eq(qgpu_mfence_wait(&c.fence, UINT64_MAX,
						       5 * SEC_NS), 0);
			continue;
		}
		igt_assert_f(ret == -EINVAL,
			     "submission %d: %s, fence_value %llu\n", i,
			     strerror(-ret), (unsigned long long)c.last);
	}
	/* nothing the refused submission queued wrote the fence back */
	usleep(200 * 1000);
	igt_assert(qgpu_mfence_read(&c.fence) == UINT64_MAX);
	igt_assert_eq(qgpu_context_destroy(&c), 0);
}

/*
 * Two contexts signal one monitored fence out of order: the submission
 * that writes the lower value runs last (held back by a sw_sync fence).
 * The fence may step back meanwhile, but a value that submissions queued
 * and that was reached is reached again once they are all done: what
 * waits for it (MFENCE_WAIT, an exported syncobj, which the UAPI promises
 * signals in finite time) ends.
 */
static void out_of_order_values_reached(void)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct drm_qgpu_sync_entry in = { 0 };
	struct qgpu_context c1, c2;
	struct qgpu_mfence mf;
	uint32_t bin;
	int tl, ret;

	tl = qt_sw_timeline();
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c1), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c2), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &bin), 0);
	out.handle = mf.handle;
	/* 1, held back; then 2, which runs at once */
	in.handle = qt_sw_syncobj(dev.fd, tl, 1);
	out.point = 1;
	nop_submit(&c1, &in, 1, &out, 1, 0);
	out.point = 2;
	nop_submit(&c2, NULL, 0, &out, 1, 0);
	igt_assert_eq(qgpu_mfence_wait(&mf, 2, 5 * SEC_NS), 0);
	/* now the submission that writes 1 */
	qt_sw_inc(tl, 1);
	igt_assert_eq(qgpu_mfence_wait(&c1.fence, c1.last, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, 2, bin, 0), 0);
	ret = qgpu_syncobj_wait(dev.fd, bin, 0, 5 * SEC_NS);
	igt_assert_f(ret == 0,
		     "\"reached 2\" exported after both submissions were done: %s (the fence reads %llu)\n",
		     strerror(-ret),
		     (unsigned long long)qgpu_mfence_read(&mf));
	igt_assert_eq(qgpu_mfence_wait(&mf, 2, 5 * SEC_NS), 0);
	close(tl);
	qgpu_syncobj_destroy(dev.fd, in.handle);
	qgpu_syncobj_destroy(dev.fd, bin);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c1);
	qgpu_context_destroy(&c2);
}

static void in_sync_and_export(void)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct drm_qgpu_sync_entry in = { .flags = QGPU_SYNC_MONITORED };
	struct qgpu_context c1, c2;
	struct qgpu_mfence mf;
	struct blocker b;
	uint32_t bin, tl;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c1), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c2), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &bin), 0);
	igt_assert_eq(drmSyncobjCreate(dev.fd, 0, &tl), 0);
	/* a value nobody queued: refused, for export and for an in-sync */
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, 1, bin, 0),
		      -EINVAL);
	in.handle = mf.handle;
	in.point = 1;
	nop_submit(&c2, &in, 1, NULL, 0, -EINVAL);
	out.handle = mf.handle;
	out.point = 1;
	blocker_submit(&c1, &b, 1, &out, 1);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, 1, bin, 0), 0);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, 1, tl, 3), 0);
	nop_submit(&c2, &in, 1, NULL, 0, 0);
	/* bad export input */
	igt_assert_eq(qgpu_mfence_export(dev.fd, 0x7fff, 1, bin, 0), -ENOENT);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, 1, 0x7fff, 0),
		      -ENOENT);
	/* held: neither the syncobjs nor the waiting submission are done */
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, bin, 0, 0), -ETIME);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, tl, 3, 0), -ETIME);
	igt_assert_eq(qgpu_mfence_read(&c2.fence), 0);
	sleep_ns(BLOCK_NS / 3);
	igt_assert_eq(qgpu_mfence_read(&c2.fence), 0);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, bin, 0, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, tl, 3, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_mfence_wait(&c2.fence, 1, 5 * SEC_NS), 0);
	/* a value reached already: an in-sync that is satisfied at once */
	nop_submit(&c2, &in, 1, NULL, 0, 0);
	igt_assert_eq(qgpu_mfence_wait(&c2.fence, 2, 5 * SEC_NS), 0);
	qgpu_syncobj_destroy(dev.fd, bin);
	qgpu_syncobj_destroy(dev.fd, tl);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c1);
	qgpu_context_destroy(&c2);
	blocker_fini(dev.fd, &b);
}

/*
 * "Value reached" fences exported out of order, of two monitored fences,
 * each signalled by the interrupt when its value is written, not before
 * and not later: a reader context's submission waits for each pair (A and
 * B at value v, in-syncs, so only the interrupt's signal lets it run, not
 * a waiter's own look at the value), and the writer's submissions, held
 * back by a sw_sync timeline, write the values one step at a time.
 */
#define EXPORT_VALUES 48
static void exported_values_signal_by_value(void)
{
	struct drm_qgpu_sync_entry out[2] = {
		{ .flags = QGPU_SYNC_MONITORED }, { .flags = QGPU_SYNC_MONITORED },
	};
	const uint32_t steps[] = { 1, 2, 7, 8, 30, EXPORT_VALUES };
	uint32_t a[EXPORT_VALUES + 1], b[EXPORT_VALUES + 1];
	uint32_t ran[EXPORT_VALUES + 1], order[EXPORT_VALUES];
	struct drm_qgpu_sync_entry in[2] = { 0 }, done = { 0 };
	struct qgpu_mfence ma, mb;
	struct qgpu_context w, r;
	uint32_t i, v, t, k = 0;
	int tl, ret;

	tl = qt_sw_timeline();
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &w), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &r), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &ma), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mb), 0);
	out[0].handle = ma.handle;
	out[1].handle = mb.handle;
	for (v = 1; v <= EXPORT_VALUES; v++) {
		in[0].handle = qt_sw_syncobj(dev.fd, tl, v);
		out[0].point = v;
		out[1].point = v;
		nop_submit(&w, in, 1, out, 2, 0);
		qgpu_syncobj_destroy(dev.fd, in[0].handle);
		order[v - 1] = v;
	}
	/* exported in an order of their own: 48 is coprime with 29 */
	for (i = 0; i < EXPORT_VALUES; i++) {
		t = order[i];
		order[i] = order[(i * 29 + 5) % EXPORT_VALUES];
		order[(i * 29 + 5) % EXPORT_VALUES] = t;
	}
	for (i = 0; i < EXPORT_VALUES; i++) {
		v = order[i];
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &a[v]), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &b[v]), 0);
		igt_assert_eq(qgpu_mfence_export(dev.fd, ma.handle, v, a[v], 0),
			      0);
		igt_assert_eq(qgpu_mfence_export(dev.fd, mb.handle, v, b[v], 0),
			      0);
	}
	for (v = 1; v <= EXPORT_VALUES; v++) {
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &ran[v]), 0);
		in[0].handle = a[v];
		in[1].handle = b[v];
		done.handle = ran[v];
		nop_submit(&r, in, 2, &done, 1, 0);
	}
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		qt_sw_inc(tl, steps[i] - k);
		k = steps[i];
		igt_assert_eq(qgpu_mfence_wait(&ma, k, 5 * SEC_NS), 0);
		ret = qgpu_syncobj_wait(dev.fd, ran[k], 0, 5 * SEC_NS);
		igt_assert_f(ret == 0,
			     "values reached %u, the reader of %u did not run: %s\n",
			     k, k, strerror(-ret));
		for (v = 1; v <= EXPORT_VALUES; v++) {
			ret = qgpu_syncobj_wait(dev.fd, a[v], 0, 0);
			igt_assert_f(ret == (v <= k ? 0 : -ETIME),
				     "value %u of A with %u reached: %s\n",
				     v, k, strerror(-ret));
		}
		if (k < EXPORT_VALUES)
			igt_assert_eq(qgpu_syncobj_wait(dev.fd, ran[k + 1], 0,
							0), -ETIME);
	}
	for (v = 1; v <= EXPORT_VALUES; v++) {
		qgpu_syncobj_destroy(dev.fd, a[v]);
		qgpu_syncobj_destroy(dev.fd, b[v]);
		qgpu_syncobj_destroy(dev.fd, ran[v]);
	}
	close(tl);
	qgpu_mfence_destroy(&ma);
	qgpu_mfence_destroy(&mb);
	qgpu_context_destroy(&w);
	qgpu_context_destroy(&r);
}

/* Whether the sync file @fd has signalled, waiting up to @ms */
static bool sync_file_signalled(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/*
 * Two values of one monitored fence that differ only above bit 31 (2^32,
 * 2^33), exported as sync files and merged: one fence of a context is
 * kept, the later one (dma_fence_is_later() on 64-bit values). The merged
 * file must wait for 2^33 whichever way round the two were merged; with
 * 32-bit sequence numbers the two compare equal and the merge may keep
 * 2^32, signalling early.
 */
static void merged_values_keep_the_later(void)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct sync_merge_data m[2] = { { .name = "ab" }, { .name = "ba" } };
	const uint64_t lo = 1ull << 32, hi = 1ull << 33;
	struct qgpu_context c1, c2;
	struct qgpu_mfence mf;
	struct blocker b1, b2;
	uint32_t s1, s2;
	int f1, f2, i;

	blocker_init(dev.fd, &b1);
	blocker_init(dev.fd, &b2);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c1), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c2), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &s1), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &s2), 0);
	out.handle = mf.handle;
	out.point = lo;
	blocker_submit(&c1, &b1, 1, &out, 1);
	out.point = hi;
	blocker_submit(&c2, &b2, 1, &out, 1);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, lo, s1, 0), 0);
	igt_assert_eq(qgpu_mfence_export(dev.fd, mf.handle, hi, s2, 0), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(dev.fd, s1, &f1), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(dev.fd, s2, &f2), 0);
	m[0].fd2 = f2;
	igt_assert_eq(ioctl(f1, SYNC_IOC_MERGE, &m[0]), 0);
	m[1].fd2 = f1;
	igt_assert_eq(ioctl(f2, SYNC_IOC_MERGE, &m[1]), 0);
	/* 2^32 reached, 2^33 not */
	blocker_release(&b1, 1);
	igt_assert_eq(qgpu_mfence_wait(&mf, lo, 5 * SEC_NS), 0);
	igt_assert(sync_file_signalled(f1, 5000));
	igt_assert(!sync_file_signalled(f2, 0));
	for (i = 0; i < 2; i++)
		igt_assert_f(!sync_file_signalled(m[i].fence, 100),
			     "merged %s signalled at %#llx, before %#llx\n",
			     m[i].name,
			     (unsigned long long)qgpu_mfence_read(&mf),
			     (unsigned long long)hi);
	blocker_release(&b2, 1);
	igt_assert_eq(qgpu_mfence_wait(&mf, hi, 5 * SEC_NS), 0);
	for (i = 0; i < 2; i++) {
		igt_assert(sync_file_signalled(m[i].fence, 5000));
		close(m[i].fence);
	}
	close(f1);
	close(f2);
	qgpu_syncobj_destroy(dev.fd, s1);
	qgpu_syncobj_destroy(dev.fd, s2);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c1);
	qgpu_context_destroy(&c2);
	blocker_fini(dev.fd, &b1);
	blocker_fini(dev.fd, &b2);
}

/*
 * A submission whose context is destroyed before it runs, and one that
 * faults, still bring their monitored fences to the promised values.
 */
static void abandoned_reaches_value(void)
{
	struct drm_qgpu_sync_entry out = { .flags = QGPU_SYNC_MONITORED };
	struct qgpu_context c1, c2, c3;
	struct qgpu_mfence mf;
	struct qgpu_cb *cb;
	struct drm_qgpu_submit a;
	struct blocker b;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c1), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c2), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c3), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	blocker_submit(&c1, &b, 1, NULL, 0);
	out.handle = mf.handle;
	out.point = 5;
	nop_submit(&c2, NULL, 0, &out, 1, 0);
	/* c2 goes while its submission waits behind the blocker */
	qgpu_context_destroy(&c2);
	sleep_ns(BLOCK_NS / 3);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_mfence_wait(&mf, 5, 5 * SEC_NS), 0);
	/* a faulting buffer: a slot that was never bound */
	cb = qt_cb(&dev);
	qgpu_cb_fill(cb, 3, 0, 4096, 1);
	qgpu_cb_to_submit(cb, c3.id, &a);
	out.point = 6;
	igt_assert_eq(qgpu_context_submit(&c3, &a, NULL, 0, &out, 1), 0);
	qt_cb_free(cb);
	igt_assert_eq(qgpu_mfence_wait(&mf, 6, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_mfence_wait(&c3.fence, c3.last, 5 * SEC_NS), 0);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c1);
	qgpu_context_destroy(&c3);
	blocker_fini(dev.fd, &b);
}

#define UNRUN		8
#define UNRUN_ROUNDS	40	/* the race this guards took ~1 round in 15 */

/*
 * A submission that never runs (its context was lost while it waited for
 * another context's work) signals its out-syncobj only once its values are
 * reached: a waiter woken by the syncobj reads the context's fence and its
 * monitored out-sync at their promised values, never one short. Context c
 * faults (F) behind a blocker; its next submissions each wait for J, on
 * another context and behind F on the ring, so that c is lost before any
 * of them reaches run_job.
 */
static void unrun_round(struct qgpu_context *d, struct qgpu_context *e,
			struct blocker *b, uint64_t gen)
{
	struct drm_qgpu_sync_entry in = { 0 }, out[2] = {
		{ 0 }, { .flags = QGPU_SYNC_MONITORED } };
	struct drm_qgpu_context_status st;
	uint64_t want[UNRUN], mfv, cv;
	uint32_t sj, so[UNRUN];
	struct drm_qgpu_submit a;
	struct qgpu_context c;
	struct qgpu_mfence mf;
	struct qgpu_cb *cb;
	unsigned int k;

	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &sj), 0);
	blocker_submit(d, b, gen, NULL, 0);
	/* F: a slot that was never bound */
	cb = qt_cb(&dev);
	qgpu_cb_fill(cb, 3, 0, 4096, 1);
	qgpu_cb_to_submit(cb, c.id, &a);
	igt_assert_eq(qgpu_context_submit(&c, &a, NULL, 0, NULL, 0), 0);
	qt_cb_free(cb);
	out[0].handle = sj;
	nop_submit(e, NULL, 0, out, 1, 0);
	in.handle = sj;
	out[1].handle = mf.handle;
	for (k = 0; k < UNRUN; k++) {
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &so[k]), 0);
		out[0].handle = so[k];
		out[1].point = k + 1;
		nop_submit(&c, &in, 1, out, 2, 0);
		want[k] = c.last;
	}
	blocker_release(b, gen);
	for (k = 0; k < UNRUN; k++) {
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, so[k], 0, 5 * SEC_NS),
			      0);
		cv = qgpu_mfence_read(&c.fence);
		mfv = qgpu_mfence_read(&mf);
		igt_assert_f(cv >= want[k] && mfv >= k + 1,
			     "round %llu: submission %u signalled with the context fence at %llu (promised %llu), the out-sync at %llu (promised %u)\n",
			     (unsigned long long)gen, k,
			     (unsigned long long)cv,
			     (unsigned long long)want[k],
			     (unsigned long long)mfv, k + 1);
	}
	/* the context was lost by F, so none of them ran */
	igt_assert_eq(qgpu_query_context(dev.fd, c.id, &st), 0);
	igt_assert_neq(st.state, QGPU_CTX_OK);
	for (k = 0; k < UNRUN; k++)
		qgpu_syncobj_destroy(dev.fd, so[k]);
	qgpu_syncobj_destroy(dev.fd, sj);
	qgpu_mfence_destroy(&mf);
	qgpu_context_destroy(&c);
}

static void unrun_values_before_syncobj(void)
{
	struct qgpu_context d, e;
	struct blocker b;
	uint64_t gen;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &d), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &e), 0);
	for (gen = 1; gen <= UNRUN_ROUNDS; gen++)
		unrun_round(&d, &e, &b, gen);
	qgpu_context_destroy(&d);
	qgpu_context_destroy(&e);
	blocker_fini(dev.fd, &b);
}

#define KILLED		4

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC_NS + ts.tv_nsec;
}

/*
 * Wait (up to @ns) until context id @id is given out again: the destroyed
 * context it was has ended its entity and has nothing left on the device
 * (&drm_qgpu_ctx_destroy), so whatever of it still waits is cancelled.
 * Ids are probed by creating contexts; lower ones that are free are held
 * meanwhile, so that the probe can reach @id.
 */
static bool ctx_id_given_out_again(uint32_t id, int64_t ns)
{
	struct qgpu_context held[64], p;
	int64_t end = mono_ns() + ns;
	unsigned int n = 0, i;
	bool found = false;

	while (!found && mono_ns() < end) {
		igt_assert_eq(qgpu_context_create(dev.fd, 0, &p), 0);
		found = p.id == id;
		if (p.id < id && n < ARRAY_SIZE(held)) {
			held[n++] = p;
			continue;
		}
		qgpu_context_destroy(&p);
		if (!found)
			sleep_ns(SEC_NS / 10);
	}
	for (i = 0; i < n; i++)
		qgpu_context_destroy(&held[i]);
	return found;
}

/*
 * Submissions still waiting for a fence from elsewhere (sw_sync) when
 * their context is destroyed are cancelled once its grace period is over
 * (drm_sched kills them with the entity, run_job never sees them): their
 * fills never run, and each reaches its monitored value before its
 * out-syncobj signals, once the fence they waited for is there.
 */
static void killed_values_before_syncobj(void)
{
	struct drm_qgpu_sync_entry in = { 0 }, out[2] = {
		{ 0 }, { .flags = QGPU_SYNC_MONITORED } };
	struct drm_qgpu_submit a;
	struct qgpu_context c;
	struct qgpu_mfence mf;
	uint32_t so[KILLED], h, *p, id;
	struct qgpu_cb *cb;
	unsigned int k;
	uint64_t v;
	int tl;

	tl = qt_sw_timeline();
	h = qt_result_buf(dev.fd, 4096, &p);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	out[1].handle = mf.handle;
	for (k = 0; k < KILLED; k++) {
		in.handle = qt_sw_syncobj(dev.fd, tl, 1);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &so[k]), 0);
		out[0].handle = so[k];
		out[1].point = k + 1;
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, 4096, 0xdead0000 + k);
		qgpu_cb_to_submit(cb, c.id, &a);
		igt_assert_eq(qgpu_context_submit(&c, &a, &in, 1, out, 2), 0);
		qt_cb_free(cb);
		qgpu_syncobj_destroy(dev.fd, in.handle);
	}
	id = c.id;
	igt_assert_eq(qgpu_context_destroy(&c), 0);
	/* the grace period (8 s) passes; then the entity ends */
	igt_assert_f(ctx_id_given_out_again(id, 60 * SEC_NS),
		     "the destroyed context's id %u was not given out again\n",
		     id);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, so[0], 0, 0), -ETIME);
	qt_sw_inc(tl, 1);
	for (k = 0; k < KILLED; k++) {
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, so[k], 0, 10 * SEC_NS),
			      0);
		v = qgpu_mfence_read(&mf);
		igt_assert_f(v >= k + 1,
			     "killed submission %u signalled with its out-sync at %llu (promised %u)\n",
			     k, (unsigned long long)v, k + 1);
	}
	/* cancelled, never run */
	for (k = 0; k < 1024; k++)
		igt_assert_eq(p[k], 0);
	for (k = 0; k < KILLED; k++)
		qgpu_syncobj_destroy(dev.fd, so[k]);
	qgpu_mfence_destroy(&mf);
	close(tl);
}

/* ------------------------------------------------------------------------ */
/* Lock2 through libqgpu's usage tracking                                    */

#define RES_SIZE	(64 * 1024)

static void res_create(struct qgpu_resource *r, uint32_t backings)
{
	igt_assert_eq(qgpu_resource_create(dev.fd, RES_SIZE, vis_ap, 0,
					   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0),
					   backings, r), 0);
}

/* On @c: checksum the resource into @out[@i]; optionally then fill it. */
static void res_use(struct qgpu_context *c, struct qgpu_resource *r,
		    uint32_t out, uint32_t i, bool fill, uint32_t pat)
{
	struct qgpu_cb *cb = qt_cb(&dev);
	struct drm_qgpu_submit a;

	qgpu_cb_bind(cb, 0, qgpu_resource_handle(r), 0, RES_SIZE);
	qgpu_cb_bind(cb, 1, out, 0, 4096);
	qgpu_cb_checksum(cb, 0, 0, RES_SIZE, 1, i * 4);
	if (fill)
		qgpu_cb_fill(cb, 0, 0, RES_SIZE, pat);
	qgpu_cb_to_submit(cb, c->id, &a);
	igt_assert_eq(qgpu_context_submit(c, &a, NULL, 0, NULL, 0), 0);
	igt_assert_eq(qgpu_resource_used(r, c, fill), 0);
	qt_cb_free(cb);
}

static void fill_words(void *p, uint32_t w)
{
	uint32_t *q = p, i;

	for (i = 0; i < RES_SIZE / 4; i++)
		q[i] = w;
}

static bool all_words(const void *p, uint32_t w)
{
	const uint32_t *q = p;
	uint32_t i;

	for (i = 0; i < RES_SIZE / 4; i++)
		if (q[i] != w)
			return false;
	return true;
}

static void lock_discard_renames(void)
{
	struct qgpu_context c;
	struct qgpu_resource r;
	struct blocker b;
	uint32_t *res, out, f, frames = 4;
	void *p;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	out = qt_result_buf(dev.fd, 4096, &res);
	res_create(&r, frames);
	blocker_submit(&c, &b, 1, NULL, 0);
	for (f = 0; f < frames; f++) {
		/* returns with the GPU held: it did not wait */
		igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DISCARD, &p), 0);
		/* never the GPU's pending write of an earlier frame */
		igt_assert_f(f == 0 || !all_words(p, 0xd0d0d0d0u + f - 1),
			     "frame %u: the GPU's pending data\n", f);
		fill_words(p, 0x1000 + f);
		igt_assert_eq(qgpu_resource_unlock(&r), 0);
		/* the GPU reads this frame's data, then overwrites it */
		res_use(&c, &r, out, f, true, 0xd0d0d0d0u + f);
	}
	igt_assert_eq(r.renames, frames - 1);
	igt_assert_eq(r.waits, 0);
	igt_assert(qgpu_resource_busy(&r, true));
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_mfence_wait(&c.fence, c.last, 5 * SEC_NS), 0);
	for (f = 0; f < frames; f++)
		igt_assert_f(res[f] == qt_csum_const(0x1000 + f, RES_SIZE / 4),
			     "frame %u: the GPU saw other data\n", f);
	/* the ring is reused once its fences passed: no new allocation */
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DISCARD, &p), 0);
	qgpu_resource_unlock(&r);
	igt_assert_eq(r.nbackings, frames);
	qgpu_resource_destroy(&r);
	qt_unmap(dev.fd, out, res, 4096);
	qt_close(dev.fd, out);
	qgpu_context_destroy(&c);
	blocker_fini(dev.fd, &b);
}

static void lock_no_overwrite_and_do_not_wait(void)
{
	struct qgpu_context c;
	struct qgpu_resource r;
	struct blocker b;
	uint32_t *res, out;
	void *p;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	out = qt_result_buf(dev.fd, 4096, &res);
	res_create(&r, 1);
	igt_assert_eq(qgpu_resource_lock(&r, 0, &p), 0);
	fill_words(p, 0x77);
	qgpu_resource_unlock(&r);
	blocker_submit(&c, &b, 1, NULL, 0);
	res_use(&c, &r, out, 0, true, 0x99);
	igt_assert(qgpu_resource_busy(&r, true));
	/* WasStillDrawing, for writing and for reading (a GPU write pends) */
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DO_NOT_WAIT, &p),
		      QGPU_WAS_STILL_DRAWING);
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DO_NOT_WAIT |
					 QGPU_LOCK_READ_ONLY, &p),
		      QGPU_WAS_STILL_DRAWING);
	igt_assert_eq(r.still_drawing, 2);
	/* no-overwrite maps at once, the old data still there */
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_NO_OVERWRITE, &p), 0);
	igt_assert(all_words(p, 0x77));
	qgpu_resource_unlock(&r);
	/* bad flag combinations */
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DISCARD |
					 QGPU_LOCK_NO_OVERWRITE, &p), -EINVAL);
	igt_assert_eq(qgpu_resource_lock(&r, 1u << 7, &p), -EINVAL);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_mfence_wait(&c.fence, c.last, 5 * SEC_NS), 0);
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DO_NOT_WAIT, &p), 0);
	igt_assert(all_words(p, 0x99));
	qgpu_resource_unlock(&r);
	igt_assert_eq(res[0], qt_csum_const(0x77, RES_SIZE / 4));
	qgpu_resource_destroy(&r);
	qt_unmap(dev.fd, out, res, 4096);
	qt_close(dev.fd, out);
	qgpu_context_destroy(&c);
	blocker_fini(dev.fd, &b);
}

struct locker {
	struct qgpu_resource *r;
	uint32_t flags;
	int ret;
	bool saw_gpu_write;
	int64_t cpu_ns, wall_ns;
	volatile bool done;
};

static void *locker_fn(void *p)
{
	struct locker *l = p;
	int64_t c0 = thread_cpu_ns(), t0 = qgpu_now_ns();
	void *m;

	l->ret = qgpu_resource_lock(l->r, l->flags, &m);
	l->cpu_ns = thread_cpu_ns() - c0;
	l->wall_ns = qgpu_now_ns() - t0;
	if (!l->ret) {
		l->saw_gpu_write = all_words(m, 0x99);
		qgpu_resource_unlock(l->r);
	}
	l->done = true;
	return NULL;
}

static void lock_sync_sleeps(void)
{
	struct locker l = { 0 };
	struct qgpu_context c;
	struct qgpu_resource r;
	struct blocker b;
	uint32_t *res, out;
	pthread_t t;
	void *p;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	out = qt_result_buf(dev.fd, 4096, &res);
	res_create(&r, 1);
	blocker_submit(&c, &b, 1, NULL, 0);
	res_use(&c, &r, out, 0, false, 0);
	/* only read by the GPU: a read lock does not wait, a write lock does */
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_READ_ONLY |
					 QGPU_LOCK_DO_NOT_WAIT, &p), 0);
	qgpu_resource_unlock(&r);
	igt_assert_eq(qgpu_resource_lock(&r, QGPU_LOCK_DO_NOT_WAIT, &p),
		      QGPU_WAS_STILL_DRAWING);
	res_use(&c, &r, out, 1, true, 0x99);
	l.r = &r;
	l.flags = QGPU_LOCK_READ_ONLY;
	igt_assert_eq(pthread_create(&t, NULL, locker_fn, &l), 0);
	sleep_ns(BLOCK_NS);
	igt_assert_f(!l.done, "the lock returned while the GPU was held\n");
	blocker_release(&b, 1);
	pthread_join(t, NULL);
	igt_assert_eq(l.ret, 0);
	igt_assert_f(l.saw_gpu_write, "the lock returned before the GPU's write\n");
	igt_info("lock waited %.1f ms, %.2f ms of CPU\n", l.wall_ns / 1e6,
		 l.cpu_ns / 1e6);
	igt_assert_f(l.cpu_ns * 5 < l.wall_ns,
		     "the locking thread used %.1f ms of CPU in %.1f ms\n",
		     l.cpu_ns / 1e6, l.wall_ns / 1e6);
	igt_assert_eq(r.waits, 1);
	qgpu_resource_destroy(&r);
	qt_unmap(dev.fd, out, res, 4096);
	qt_close(dev.fd, out);
	qgpu_context_destroy(&c);
	blocker_fini(dev.fd, &b);
}

/* ------------------------------------------------------------------------ */
/* Deferred destruction (DestroyAllocation2, AssumeNotInUse)                 */

#define DZ	(1024 * 1024)
#define DPAT	0xdeadf111u

static void ctx_healthy(uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(dev.fd, ctx, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_OK, "context lost: %s\n",
		     qgpu_fault_name(cs.fault_reason));
}

/* A CPU-visible VRAM allocation of DZ bytes, resident, mappable */
static uint32_t vis_bo(int fd)
{
	uint32_t h = qt_bo(fd, DZ, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_GEM_CPU_ACCESS,
			   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));

	qt_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	return h;
}

/*
 * Fill visible VRAM with DZ allocations so that one destroyed is the only
 * room left for the next; returns how many (all closed by the caller).
 */
static uint32_t fill_visible(int fd, uint32_t *h, uint32_t max)
{
	uint64_t room = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
	uint32_t n = 0;

	while (n < max && (n + 2) * (uint64_t)DZ <= room)
		h[n++] = vis_bo(fd);
	return n;
}

/* Is all of @h zero (read through a mapping)? */
static bool bo_zero(int fd, uint32_t h)
{
	uint32_t *p = qt_map(fd, h, DZ), i;
	bool z = true;

	for (i = 0; i < DZ / 4 && z; i++)
		z = !p[i];
	qt_unmap(fd, h, p, DZ);
	return z;
}

/* X mapped at the start of a new 2 * DZ reservation, resident: its address */
static uint64_t map_resident(uint32_t x)
{
	uint64_t va = 0, fence = 0;

	igt_assert_eq(qgpu_vm_reserve(dev.fd, 0, 2 * DZ, 0, &va), 0);
	igt_assert_eq(qgpu_vm_map(dev.fd, x, va, 0, DZ, 0), 0);
	igt_assert_eq(qgpu_make_resident(dev.fd, &x, 1, &fence), 0);
	igt_assert_eq(qgpu_paging_fence_wait(dev.fd, fence, 10 * SEC_NS), 0);
	return va;
}

/*
 * A fill of DZ bytes at @va on @vc, queued behind a blocker on @pc; @done
 * (a new syncobj) signals when it has run.
 */
static void blocked_fill(struct qgpu_context *pc, struct qgpu_context *vc,
			 struct blocker *b, uint64_t va,
			 struct drm_qgpu_sync_entry *done)
{
	struct drm_qgpu_submit a;
	struct qgpu_vcb vcb;

	blocker_submit(pc, b, 1, NULL, 0);
	igt_assert_eq(qgpu_vcb_init(&vcb), 0);
	qgpu_vcb_fill(&vcb, va, DZ, DPAT);
	qgpu_vcb_to_submit(&vcb, vc->id, &a);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &done->handle), 0);
	igt_assert_eq(qgpu_context_submit(vc, &a, NULL, 0, done, 1), 0);
	qgpu_vcb_fini(&vcb);
}

/*
 * A virtual DMA buffer that fills X is queued behind the blocker; X is
 * destroyed while it waits; a new allocation Y takes X's room in visible
 * VRAM. By default the fill runs (no fault: the mapping stays until the
 * work queued before the destroy is done) and Y is zero; with
 * AssumeNotInUse the VA is free at once, the fill faults its own context,
 * and Y is still zero: the liar hurt only itself.
 */
static void destroy_virtual(bool assume)
{
	uint32_t flags = assume ? QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE : 0;
	struct drm_qgpu_sync_entry done = { 0 };
	struct qgpu_context pc, vc;
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_gem_info gi;
	struct blocker b;
	uint32_t x, y, z, fillers[64], nf, i;
	uint64_t va;
	int64_t t0, dt;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &pc), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, QGPU_CTX_CREATE_VIRTUAL,
					  &vc), 0);
	nf = fill_visible(dev.fd, fillers, 64);
	x = vis_bo(dev.fd);
	va = map_resident(x);
	blocked_fill(&pc, &vc, &b, va, &done);
	/* returns with the GPU held: destruction never waits */
	t0 = qgpu_now_ns();
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, x, flags), 0);
	dt = qgpu_now_ns() - t0;
	qt_untrack(dev.fd, x, NULL);
	igt_info("destroy returned in %.1f us\n", dt / 1e3);
	igt_assert_eq(qgpu_bo_info(dev.fd, x, &gi), -ENOENT);
	/* the VA: free at once only with AssumeNotInUse */
	z = qt_bo(dev.fd, DZ, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
	igt_assert_eq(qgpu_vm_map(dev.fd, z, va, 0, DZ, 0),
		      assume ? 0 : -EEXIST);
	/* (not left there: the late fill would then write z, not fault) */
	if (assume) {
		uint64_t pf;

		igt_assert_eq(qgpu_vm_unmap(dev.fd, va, DZ), 0);
		/*
		 * The unmap's page-table rewrite runs on the paging engine,
		 * the fill on the render engine once released: wait for the
		 * rewrite (a paging fence signals once everything queued on
		 * the paging engine before it is done), or a busy host may
		 * run the fill first, through z's entries still there.
		 */
		igt_assert_eq(qgpu_make_resident(dev.fd, &z, 1, &pf), 0);
		igt_assert_eq(qgpu_paging_fence_wait(dev.fd, pf, 10 * SEC_NS),
			      0);
	}
	/* the room X leaves: Y may have it only behind X's work */
	y = vis_bo(dev.fd);
	igt_assert_eq(qgpu_mfence_read(&vc.fence), 0);
	blocker_release(&b, 1);
	/*
	 * The job's own fence: signalled after the driver took in the fault
	 * (the monitored fence may be read before the interrupt is handled)
	 */
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, done.handle, 0, 10 * SEC_NS),
		      0);
	qgpu_syncobj_destroy(dev.fd, done.handle);
	igt_assert_eq(qgpu_query_context(dev.fd, vc.id, &cs), 0);
	if (assume)
		igt_assert_f(cs.state != QGPU_CTX_OK &&
			     cs.fault_reason == QGPU_FAULT_PAGE_NOT_PRESENT,
			     "the liar's late fill did not fault (state %s)\n",
			     qgpu_ctx_state_name(cs.state));
	else
		igt_assert_f(cs.state == QGPU_CTX_OK,
			     "work queued before the destroy faulted: %s\n",
			     qgpu_fault_name(cs.fault_reason));
	igt_assert_f(bo_zero(dev.fd, y),
		     "the destroyed allocation's queued fill reached a new allocation\n");
	/* default: once the work is done the range is unmapped */
	if (!assume) {
		for (i = 0; i < 200; i++) {
			if (!qgpu_vm_map(dev.fd, z, va, 0, DZ, 0))
				break;
			sleep_ns(10000000);
		}
		igt_assert_f(i < 200, "the mapping of a destroyed allocation stayed\n");
	}
	igt_assert_eq(qgpu_vm_free(dev.fd, va, 2 * DZ), 0);
	qt_close(dev.fd, z);
	qt_close(dev.fd, y);
	for (i = 0; i < nf; i++)
		qt_close(dev.fd, fillers[i]);
	qgpu_context_destroy(&vc);
	qgpu_context_destroy(&pc);
	blocker_fini(dev.fd, &b);
}

/*
 * A destroy (without AssumeNotInUse) unmaps the destroyed handle's mappings
 * once the work queued before it is done; not a mapping made after it: X,
 * destroyed while a fill through its mapping waits, comes back through its
 * dma-buf and is mapped again at a second address before the fill runs.
 * Once the first mapping is gone, the second must still be there.
 */
static void destroy_then_remapped(void)
{
	struct drm_qgpu_sync_entry done = { 0 };
	struct qgpu_context pc, vc;
	struct drm_qgpu_context_status cs;
	struct blocker b;
	uint32_t x, x2, z, i;
	uint64_t va;
	int dmabuf;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &pc), 0);
	igt_assert_eq(qgpu_context_create(dev.fd, QGPU_CTX_CREATE_VIRTUAL,
					  &vc), 0);
	x = vis_bo(dev.fd);
	va = map_resident(x);
	igt_assert_eq(drmPrimeHandleToFD(dev.fd, x, DRM_CLOEXEC, &dmabuf), 0);
	blocked_fill(&pc, &vc, &b, va, &done);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, x, 0), 0);
	qt_untrack(dev.fd, x, NULL);
	/* X again, mapped at the second address while the fill waits */
	igt_assert_eq(drmPrimeFDToHandle(dev.fd, dmabuf, &x2), 0);
	close(dmabuf);
	igt_assert_eq(qgpu_vm_map(dev.fd, x2, va + DZ, 0, DZ, 0), 0);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, done.handle, 0, 10 * SEC_NS),
		      0);
	qgpu_syncobj_destroy(dev.fd, done.handle);
	igt_assert_eq(qgpu_query_context(dev.fd, vc.id, &cs), 0);
	igt_assert_eq(cs.state, QGPU_CTX_OK);
	/* the destroyed handle's mapping goes once the fill is done */
	z = qt_bo(dev.fd, DZ, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
	for (i = 0; i < 200; i++) {
		if (!qgpu_vm_map(dev.fd, z, va, 0, DZ, 0))
			break;
		sleep_ns(10000000);
	}
	igt_assert_f(i < 200, "the mapping of a destroyed allocation stayed\n");
	/* the one made after the destroy stays */
	igt_assert_eq(qgpu_vm_map(dev.fd, z, va + DZ, 0, DZ, 0), -EEXIST);
	igt_assert_eq(qgpu_vm_free(dev.fd, va, 2 * DZ), 0);
	qt_close(dev.fd, z);
	qt_close(dev.fd, x2);
	qgpu_context_destroy(&vc);
	qgpu_context_destroy(&pc);
	blocker_fini(dev.fd, &b);
}

/*
 * The physical model: a queued DMA buffer lists X; X is destroyed with
 * AssumeNotInUse while it waits. The kernel still keeps X's memory until
 * the buffer is done: it runs without a fault and Y stays zero.
 */
static void destroy_physical_assume(void)
{
	struct qgpu_context c;
	struct qgpu_cb *cb;
	struct drm_qgpu_submit a;
	struct blocker b;
	uint32_t x, y, fillers[64], nf, i;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &c), 0);
	nf = fill_visible(dev.fd, fillers, 64);
	x = vis_bo(dev.fd);
	blocker_submit(&c, &b, 1, NULL, 0);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, x, 0, DZ);
	qgpu_cb_fill(cb, 0, 0, DZ, DPAT);
	qgpu_cb_to_submit(cb, c.id, &a);
	igt_assert_eq(qgpu_context_submit(&c, &a, NULL, 0, NULL, 0), 0);
	qt_cb_free(cb);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, x,
					    QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE),
		      0);
	qt_untrack(dev.fd, x, NULL);
	y = vis_bo(dev.fd);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_mfence_wait(&c.fence, c.last, 10 * SEC_NS), 0);
	ctx_healthy(c.id);
	igt_assert_f(bo_zero(dev.fd, y),
		     "a listed allocation's memory was reused before its work\n");
	qt_close(dev.fd, y);
	for (i = 0; i < nf; i++)
		qt_close(dev.fd, fillers[i]);
	qgpu_context_destroy(&c);
	blocker_fini(dev.fd, &b);
}

/*
 * AssumeNotInUse promises that the client's virtual DMA buffers queued
 * before the destroy will not touch X, so the release does not wait for
 * them: they could reach X only through mappings the destroy unmapped.
 * A client that gets X back (its own dma-buf imported again) and maps it
 * anew is using X again, and those buffers reach it through the new
 * mapping: here a fill queued behind the blocker, then the file closed,
 * which removes the mapping without rewriting its entries. X's memory
 * must stay until the fill is done, so Y, which wants X's room, stays
 * zero.
 */
static void destroy_assume_then_remapped(void)
{
	struct drm_qgpu_sync_entry done = { 0 };
	struct qgpu_context pc;
	struct qgpu_vcb vcb;
	struct blocker b;
	struct drm_qgpu_segment_stats ss;
	struct drm_qgpu_gem_info gi;
	uint32_t x, x2, y, vc, sobj, fillers[64], nf, i;
	uint64_t va = 0, fence = 0, xaddr;
	int fd, dmabuf, sfd;

	blocker_init(dev.fd, &b);
	igt_assert_eq(qgpu_context_create(dev.fd, 0, &pc), 0);
	nf = fill_visible(dev.fd, fillers, 64);
	/* the liar: a file of its own, closed below */
	fd = qt_reopen(&dev);
	/* (no qgpu_context: its fence mapping would keep the file open) */
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &vc), 0);
	x = vis_bo(fd);
	igt_assert_eq(qgpu_bo_info(fd, x, &gi), 0);
	xaddr = gi.gpu_addr;
	/* X's room is the only one left */
	for (;;) {
		qt_seg_stats(dev.fd, QGPU_SEG_VISIBLE, &ss);
		if (nf == 64 || ss.size - ss.used < DZ)
			break;
		fillers[nf++] = vis_bo(dev.fd);
	}
	igt_assert_eq(drmPrimeHandleToFD(fd, x, DRM_CLOEXEC, &dmabuf), 0);
	igt_assert_eq(qgpu_bo_destroy_flags(fd, x,
					    QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE),
		      0);
	qt_untrack(fd, x, NULL);
	/* X again, through its dma-buf, mapped anew */
	igt_assert_eq(drmPrimeFDToHandle(fd, dmabuf, &x2), 0);
	close(dmabuf);
	igt_assert_eq(qgpu_vm_reserve(fd, 0, DZ, 0, &va), 0);
	igt_assert_eq(qgpu_vm_map(fd, x2, va, 0, DZ, 0), 0);
	igt_assert_eq(qgpu_make_resident(fd, &x2, 1, &fence), 0);
	igt_assert_eq(qgpu_paging_fence_wait(fd, fence, 10 * SEC_NS), 0);
	/* its fill waits behind the blocker; the test keeps its syncobj */
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &sobj), 0);
	igt_assert_eq(drmSyncobjHandleToFD(dev.fd, sobj, &sfd), 0);
	igt_assert_eq(drmSyncobjFDToHandle(fd, sfd, &done.handle), 0);
	close(sfd);
	blocker_submit(&pc, &b, 1, NULL, 0);
	igt_assert_eq(qgpu_vcb_init(&vcb), 0);
	qgpu_vcb_fill(&vcb, va, DZ, DPAT);
	igt_assert_eq(qgpu_vcb_submit(fd, vc, &vcb, NULL, 0, &done, 1), 0);
	qgpu_vcb_fini(&vcb);
	/* the liar goes: its handles, its mapping, its file */
	close(fd);
	/* the room X leaves: Y may have it only behind the fill */
	y = vis_bo(dev.fd);
	igt_assert_eq(qgpu_bo_info(dev.fd, y, &gi), 0);
	igt_info("X was at %#llx, Y is at %#llx\n",
		 (unsigned long long)xaddr, (unsigned long long)gi.gpu_addr);
	blocker_release(&b, 1);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sobj, 0, 20 * SEC_NS), 0);
	qgpu_syncobj_destroy(dev.fd, sobj);
	igt_assert_f(bo_zero(dev.fd, y),
		     "a fill through a mapping made after an AssumeNotInUse destroy reached a new allocation of another file\n");
	qt_close(dev.fd, y);
	for (i = 0; i < nf; i++)
		qt_close(dev.fd, fillers[i]);
	qgpu_context_destroy(&pc);
	blocker_fini(dev.fd, &b);
}

static void destroy_bad_input(void)
{
	uint32_t h = qt_bo(dev.fd, 4096, vis_ap, 0, 0);

	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, h, 2), -EINVAL);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, h, ~0u), -EINVAL);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, 0, 0), -ENOENT);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, 0x7fffff, 0), -ENOENT);
	/* still there after the refusals; gone after the destroy */
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, h, 0), 0);
	igt_assert_eq(qgpu_bo_destroy_flags(dev.fd, h, 0), -ENOENT);
	qt_untrack(dev.fd, h, NULL);
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		vis_ap = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			 QGPU_SEGBIT(QGPU_SEG_APERTURE);
	}

	igt_subtest("mfence-read-only-mapping-and-bad-input")
		mfence_basics();
	igt_subtest("ctx-fence-advances-per-submit")
		ctx_fence_advances(0);
	igt_subtest("ctx-fence-advances-per-virtual-submit") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		ctx_fence_advances(QGPU_CTX_CREATE_VIRTUAL);
	}
	igt_subtest("wait-sleeps-until-the-interrupt")
		wait_sleeps_until_interrupt();
	igt_subtest("wait-timeout-signal-any-all")
		wait_timeout_signal_any_all();
	igt_subtest("out-sync-values-rules")
		out_sync_rules();
	igt_subtest("ctx-fence-never-wraps")
		ctx_fence_no_wrap(0);
	igt_subtest("ctx-fence-never-wraps-virtual") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		ctx_fence_no_wrap(QGPU_CTX_CREATE_VIRTUAL);
	}
	igt_subtest("out-of-order-values-reached-again")
		out_of_order_values_reached();
	igt_subtest("in-sync-and-export-to-syncobj")
		in_sync_and_export();
	igt_subtest("exported-values-signal-by-value")
		exported_values_signal_by_value();
	igt_subtest("merged-values-beyond-32-bits-keep-the-later")
		merged_values_keep_the_later();
	igt_subtest("abandoned-submission-reaches-its-value")
		abandoned_reaches_value();
	igt_subtest("unrun-submission-values-reached-when-syncobj-signals")
		unrun_values_before_syncobj();
	igt_subtest("killed-submission-values-reached-when-syncobj-signals")
		killed_values_before_syncobj();
	igt_subtest("lock-discard-renames-never-waits")
		lock_discard_renames();
	igt_subtest("lock-no-overwrite-and-do-not-wait")
		lock_no_overwrite_and_do_not_wait();
	igt_subtest("lock-sync-sleeps-until-gpu-write")
		lock_sync_sleeps();
	igt_subtest("destroy-bad-input")
		destroy_bad_input();
	igt_subtest("destroy-returns-at-once-work-finishes") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		destroy_virtual(false);
	}
	igt_subtest("destroy-assume-not-in-use-liar-faults-itself") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		destroy_virtual(true);
	}
	igt_subtest("destroy-then-remapped-mapping-kept") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		destroy_then_remapped();
	}
	igt_subtest("destroy-assume-not-in-use-physical-memory-kept")
		destroy_physical_assume();
	igt_subtest("destroy-assume-not-in-use-then-remapped-memory-kept") {
		igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
		destroy_assume_then_remapped();
	}
	igt_subtest("nothing-left")
		qt_assert_no_allocations(dev.fd);
}
