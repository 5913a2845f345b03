// SPDX-License-Identifier: MIT
/*
 * qgpu_liveness: destruction does not block, CPU access does not wait for
 * rendering (rules L2, L3, L4).
 *
 * The GPU is blocked deterministically by a DMA buffer that WAITs on a
 * value the CPU writes only after the step under test completed. If that
 * step waited for the GPU it could only complete after the engine's job
 * timeout killed the blocked job, which the test sees in the job's fence
 * and the context's state (content, not time). A bound on every step
 * turns a real deadlock into FAIL. With a single render engine, work of
 * another process queues behind the blocked job: only its ioctls are
 * required to return.
 *
 * L2  close-busy-returns: GEM_CLOSE of an allocation with queued work
 *	returns while the work is blocked; meanwhile another process can
 *	create, GEM_RESIDE, create a context and submit (a global lock held
 *	while waiting would block it); the allocation count returns to the
 *	baseline once the work completed.
 *     blocked-gpu-other-process: the same other-process ioctls with the GPU
 *	blocked and nothing being closed (control).
 *     close-busy-memory-kept: the range of a closed busy allocation is not
 *	given to a new allocation before the work completed (the job writes
 *	there after the close: the new allocation must still read zero).
 *     ctx-destroy-gated[-timeline]-returns, fd-close-gated[-timeline]-returns:
 *	CTX_DESTROY and close() of a file whose queued job waits for a
 *	blocked job (its fence, or a timeline point it signals) return
 *	without waiting for it (L2 applied to contexts and files).
 * L3  cpu-write-releases-wait-{touched,first-touch}-SEGMENT: a DMA buffer
 *	that WAITs on a value the CPU writes into the same allocation
 *	completes when the CPU writes it, with the mapping established
 *	before the submit and with the first touch after it (no move
 *	pending), in visible VRAM, the GART aperture and non-visible VRAM.
 * L4  fault-signal-retries: a signal delivered while a thread faults on a
 *	mapping whose allocation is being moved (behind blocked GPU work)
 *	does not kill it with SIGBUS; the access completes after the move.
 *     queued-dma-capped-per-file: behind a blocked job, a file's queued DMA
 *	buffers stop at QGPU_MAX_QUEUED_DMA bytes (the next submit waits,
 *	holding no lock another process needs); all of them run once the
 *	job is released.
 */
#include "qgpu_stress.h"

#include <setjmp.h>
#include <sys/mman.h>

#define PAT1	0x11111111u
#define PAT2	0x22222222u

static struct qgpu_dev dev;
static int obs = -1;
static uint32_t vis_ap;

/* A mapped, touched 4 KiB allocation the CPU writes WAIT values into. */
static uint32_t wait_target(int fd, volatile uint64_t **map)
{
	uint32_t h = qt_bo(fd, 4096, vis_ap, QGPU_GEM_CPU_ACCESS,
			   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));

	qt_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	*map = qt_map(fd, h, 4096);
	memset((void *)*map, 0, 4096);	/* established before any submit */
	return h;
}

static void release(volatile uint64_t *w, uint64_t v)
{
	__atomic_store_n(&w[0], v, __ATOMIC_SEQ_CST);
}

static int ctx_state(int fd, uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	if (qgpu_query_context(fd, ctx, &cs))
		return -1;
	return (int)cs.state;
}

static const char *ctx_state_str(int st)
{
	return st < 0 ? "gone" : qgpu_ctx_state_name((uint32_t)st);
}

static void *gem_close_fn(void *p)
{
	uint32_t *a = p;	/* fd, handle, ret */

	a[2] = (uint32_t)qgpu_bo_destroy((int)a[0], a[1]);
	return NULL;
}

static void *ctx_destroy_fn(void *p)
{
	uint32_t *a = p;	/* fd, ctx, ret */

	a[2] = (uint32_t)qgpu_ctx_destroy((int)a[0], a[1]);
	return NULL;
}

static void *close_fn(void *p)
{
	int *a = p;		/* fd, ret */

	a[1] = close(a[0]) ? -errno : 0;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Another process                                                           */

struct other {
	pid_t pid;
	int cmd, rep;
};

/*
 * The other process: opens its own file at once, then on 'g' creates an
 * allocation, GEM_RESIDEs it, creates a context and submits a FILL on it,
 * and reports the five results; on 'q' waits for its job (it queued behind
 * the blocked one) and checks the FILL.
 */
static void other_main(int cmd, int rep)
{
	struct drm_qgpu_sync_entry out = { 0 };
	struct drm_qgpu_stats st;
	struct qgpu_dev d;
	struct qgpu_cb cb;
	uint32_t h = 0, ctx = 0, *p = NULL;
	int r[7] = { 0 }, i;
	char c, buf[128];

	if (qgpu_open(&d, QGPU_NODE_RENDER))
		_exit(2);
	if (qgpu_syncobj_create(d.fd, &out.handle) ||
	    qgpu_cb_init(&cb, d.info.max_slots))
		_exit(3);
	if (write(rep, "o", 1) != 1 || read(cmd, &c, 1) != 1)
		_exit(4);
	r[0] = qgpu_bo_create(d.fd, 262144, vis_ap, QGPU_GEM_CPU_ACCESS, 0,
			      &h);
	r[1] = qgpu_bo_reside(d.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	r[2] = qs_ctx_create(d.fd, &ctx);
	qgpu_cb_bind(&cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(&cb, 0, 0, 262144, 0x0d0d0d0d);
	r[3] = qgpu_submit(d.fd, ctx, &cb, NULL, 0, &out, 1, NULL);
	r[4] = qgpu_query_stats(d.fd, &st, NULL, 0, NULL);
	snprintf(buf, sizeof(buf), "%d %d %d %d %d", r[0], r[1], r[2], r[3],
		 r[4]);
	if (write(rep, buf, strlen(buf)) < 0 || read(cmd, &c, 1) != 1)
		_exit(5);
	r[5] = r[3] ? 0 : qgpu_syncobj_wait(d.fd, out.handle, 0,
					   30 * SEC_NS);
	r[6] = qgpu_bo_map(d.fd, h, 262144, (void **)&p);
	if (!r[3] && !r[5] && !r[6])
		for (i = 0; i < 262144 / 4; i += 61)
			if (p[i] != 0x0d0d0d0d)
				r[6] = 1000;
	if (!r[6])
		qgpu_bo_unmap(d.fd, h, p, 262144);
	qgpu_bo_destroy(d.fd, h);
	qgpu_ctx_destroy(d.fd, ctx);
	qgpu_syncobj_destroy(d.fd, out.handle);
	qgpu_cb_fini(&cb);
	qgpu_close(&d);
	_exit(r[5] || r[6] ? 10 : 0);
}

static void other_start(struct other *o)
{
	int c[2], r[2];
	char ch;
	struct pollfd pfd;

	igt_assert_eq(pipe(c), 0);
	igt_assert_eq(pipe(r), 0);
	fflush(stdout);
	o->pid = fork();
	igt_assert(o->pid >= 0);
	if (o->pid == 0) {
		close(c[1]);
		close(r[0]);
		other_main(c[0], r[1]);
	}
	close(c[0]);
	close(r[1]);
	o->cmd = c[1];
	o->rep = r[0];
	pfd = (struct pollfd){ .fd = o->rep, .events = POLLIN };
	igt_assert_f(poll(&pfd, 1, 30000) == 1 && read(o->rep, &ch, 1) == 1,
		     "the other process did not start\n");
}

/* Tell it to go; true when its report came within @secs. */
static bool other_go(struct other *o, char *buf, size_t len, int secs)
{
	struct pollfd pfd = { .fd = o->rep, .events = POLLIN };
	ssize_t n;

	buf[0] = 0;
	if (write(o->cmd, "g", 1) != 1)
		return false;
	if (poll(&pfd, 1, secs * 1000) != 1)
		return false;
	n = read(o->rep, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

/* Let it finish; returns its exit status. */
static int other_finish(struct other *o)
{
	int st, i, ret = -1;

	if (write(o->cmd, "q", 1) != 1)
		kill(o->pid, SIGKILL);
	for (i = 0; i < 6000; i++) {
		pid_t r = waitpid(o->pid, &st, WNOHANG);

		if (r == o->pid) {
			ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		usleep(10000);
	}
	if (ret < 0) {
		kill(o->pid, SIGKILL);
		waitpid(o->pid, &st, 0);
	}
	close(o->cmd);
	close(o->rep);
	return ret;
}

static void check_other_report(const char *rep)
{
	int r[5] = { -1, -1, -1, -1, -1 };

	igt_assert_eq(sscanf(rep, "%d %d %d %d %d", &r[0], &r[1], &r[2], &r[3],
			     &r[4]), 5);
	igt_assert_f(r[0] == 0, "other process GEM_CREATE: %s\n", strerror(-r[0]));
	igt_assert_f(r[1] == 0, "other process GEM_RESIDE: %s\n", strerror(-r[1]));
	igt_assert_f(r[2] == 0, "other process CTX_CREATE: %s\n", strerror(-r[2]));
	igt_assert_f(r[3] == 0, "other process SUBMIT: %s\n", strerror(-r[3]));
	igt_assert_f(r[4] == 0, "other process QUERY: %s\n", strerror(-r[4]));
}

/* ------------------------------------------------------------------------ */
/* L2                                                                        */

/*
 * A job on @ctx that blocks the render engine until the CPU writes 1 at
 * @w (slot 0), writing @busy (slot 1) before and after. Returns its out
 * syncobj.
 */
static uint32_t submit_blocker(int fd, uint32_t ctx, uint32_t w, uint32_t busy,
			       uint64_t busy_size)
{
	struct drm_qgpu_sync_entry out = { 0 };
	struct qgpu_cb *cb = qt_cb(&dev);
	int ret;

	igt_assert_eq(qgpu_syncobj_create(fd, &out.handle), 0);
	qgpu_cb_bind(cb, 0, w, 0, 4096);
	if (busy) {
		qgpu_cb_bind(cb, 1, busy, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 1, 0, (uint32_t)busy_size, PAT1);
	}
	qgpu_cb_wait(cb, 0, 0, 1);
	if (busy)
		qgpu_cb_fill(cb, 1, 0, (uint32_t)busy_size, PAT2);
	qgpu_cb_fence(cb, 0, 8, 0xabc);
	ret = qgpu_submit(fd, ctx, cb, NULL, 0, &out, 1, NULL);
	qt_cb_free(cb);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));
	return out.handle;
}

static void close_busy(bool do_close)
{
	volatile uint64_t *wm;
	struct qs_call cl;
	struct other o;
	struct qs_kmsg k;
	struct qs_base b;
	uint32_t ctx, w, x, s, cargs[3];
	int fd, st_before, cs_before, st;
	bool got, closed = true;
	char rep[128], blocked = '=';

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	other_start(&o);
	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	w = wait_target(fd, &wm);
	x = qt_bo(fd, 1 * MiB, vis_ap, 0, 0);
	qt_reside(fd, x, QGPU_RESIDE_MAKE_RESIDENT, 0);
	s = submit_blocker(fd, ctx, w, x, 1 * MiB);
	st = qs_sync_status(fd, s);
	if (st != 0) {
		release(wm, 1);
		igt_assert_f(0, "the blocked job is not pending: %s\n",
			     qs_status_name(st));
	}

	if (do_close) {
		/* close the busy allocation's only handle */
		qt_untrack(fd, x, NULL);
		cargs[0] = fd;
		cargs[1] = x;
		cargs[2] = 0;
		qs_call_start(&cl, gem_close_fn, cargs);
		blocked = qs_call_wait_blocked(&cl, 2000);
	}
	/* the other process, while the GPU is blocked (and GEM_CLOSE runs) */
	got = other_go(&o, rep, sizeof(rep), 20);
	if (do_close)
		closed = qs_call_wait(&cl, 20);
	/* the CPU has not released the job: it must still be pending */
	st_before = qs_sync_status(fd, s);
	cs_before = ctx_state(fd, ctx);
	release(wm, 1);

	igt_info("GEM_CLOSE %s; other process %s; job before release: %s, context %s\n",
		 !do_close ? "not done" : blocked == '=' ? "returned at once" :
		 blocked == 'D' ? "slept (D)" : blocked == 'S' ? "slept (S)" :
		 "?", got ? rep : "no report", qs_status_name(st_before),
		 ctx_state_str(cs_before));
	igt_assert_f(closed,
		     "GEM_CLOSE of an allocation with queued GPU work did not return within 20 s\n");
	igt_assert_f(got,
		     "another process's GEM_CREATE/GEM_RESIDE/CTX_CREATE/SUBMIT did not return within 20 s while the GPU was blocked\n");
	igt_assert_f(st_before == 0 && cs_before == QGPU_CTX_OK,
		     "the blocked job ended (%s, context %s) before the CPU released it: %s waited for the GPU (until the job timeout)\n",
		     qs_status_name(st_before), ctx_state_str(cs_before),
		     do_close ? "GEM_CLOSE or the other process's ioctls" :
		     "the other process's ioctls");
	if (do_close)
		igt_assert_eq((int)cargs[2], 0);
	check_other_report(rep);

	/* released: the job completes without error */
	igt_assert_eq(qs_wait_sync(fd, s, 20), 0);
	st = qs_sync_status(fd, s);
	igt_assert_f(st == 1, "the released job: %s\n", qs_status_name(st));
	igt_assert_eq_u64(wm[1], 0xabc);
	igt_assert_eq(ctx_state(fd, ctx), QGPU_CTX_OK);
	st = other_finish(&o);
	igt_assert_f(st == 0, "other process: status %d (its job or FILL)\n", st);

	qgpu_syncobj_destroy(fd, s);
	qt_unmap(fd, w, (void *)wm, 4096);
	qt_close(fd, w);
	if (!do_close)
		qt_close(fd, x);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
	close(fd);
	qs_wait_baseline(&b, 30);
	qs_device_works();
	qs_kmsg_end(&k);
}

/*
 * The range of a closed allocation whose work is still queued is not
 * handed out before that work completed. X fills all of visible VRAM; a
 * job gated behind a blocked job will FILL X; X is closed; Y (visible
 * VRAM only, as big) is made resident. If X's range went to Y, the job
 * FILLs Y once released and Y is no longer zero.
 */
static void close_busy_memory_kept(void)
{
	struct drm_qgpu_sync_entry in = { 0 }, out = { 0 };
	const struct drm_qgpu_segment *vs;
	volatile uint64_t *wm;
	struct qgpu_cb *cb;
	struct qs_call cl;
	struct qs_kmsg k;
	struct qs_base b;
	uint32_t ctx, ctx2, w, x, y, p, cargs[3], *ym;
	uint64_t size;
	int fd, st_before, ret, st, i;
	bool closed;

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	vs = qgpu_dev_segment(&dev, QGPU_SEG_VISIBLE);
	igt_require(vs);
	size = vs->size - vs->reserved_size;
	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	ctx2 = qs_ctx(fd);
	/* the WAIT target lives in the aperture, out of X's way */
	w = qt_bo(fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
		  QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(fd, w, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
	wm = qt_map(fd, w, 4096);
	memset((void *)wm, 0, 4096);
	x = qt_bo(fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
	qt_reside(fd, x, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);

	/* P blocks the engine; J (on ctx) waits for P, then FILLs X */
	p = submit_blocker(fd, ctx2, w, 0, 0);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, (uint32_t)size, 0xbadbad00);
	igt_assert_eq(qgpu_syncobj_create(fd, &out.handle), 0);
	in.handle = p;
	ret = qgpu_submit(fd, ctx, cb, &in, 1, &out, 1, NULL);
	qt_cb_free(cb);
	if (ret)
		release(wm, 1);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));

	qt_untrack(fd, x, NULL);
	cargs[0] = fd;
	cargs[1] = x;
	cargs[2] = 0;
	qs_call_start(&cl, gem_close_fn, cargs);
	closed = qs_call_wait(&cl, 20);
	st_before = qs_sync_status(fd, out.handle);
	if (!closed || st_before != 0) {
		release(wm, 1);
		igt_assert_f(closed, "GEM_CLOSE did not return within 20 s\n");
		igt_assert_f(0, "GEM_CLOSE returned only after the gated job ended (%s): it waited for the GPU\n",
			     qs_status_name(st_before));
	}
	igt_assert_eq((int)cargs[2], 0);

	/* as big as all of visible VRAM: only X's range can hold it */
	y = qt_bo(fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE), QGPU_GEM_CPU_ACCESS,
		  0);
	ret = qgpu_bo_reside(fd, y, QGPU_RESIDE_MAKE_RESIDENT,
			     QGPU_SEG_VISIBLE, NULL);
	st_before = qs_sync_status(fd, out.handle);
	release(wm, 1);
	igt_info("new allocation in visible VRAM while the closed one's work is queued: %s\n",
		 ret ? strerror(-ret) : "resident");
	igt_assert_f(ret == 0 || ret == -ENOSPC || ret == -EBUSY,
		     "GEM_RESIDE: %s\n", strerror(-ret));
	igt_assert_f(st_before == 0,
		     "the gated job ended before the CPU released it (%s)\n",
		     qs_status_name(st_before));

	igt_assert_eq(qs_wait_sync(fd, out.handle, 30), 0);
	st = qs_sync_status(fd, out.handle);
	igt_assert_f(st == 1, "the gated job: %s\n", qs_status_name(st));
	igt_assert_eq(qs_wait_sync(fd, p, 30), 0);
	if (ret == 0) {
		ym = qt_map(fd, y, size);
		for (i = 0; i < (int)(size / 4); i += 1021)
			igt_assert_f(ym[i] == 0,
				     "word %d of the new allocation is %#x: the closed allocation's queued job wrote into it (its range was reused before the job completed)\n",
				     i, ym[i]);
		qt_unmap(fd, y, ym, size);
	}
	qt_close(fd, y);
	qgpu_syncobj_destroy(fd, out.handle);
	qgpu_syncobj_destroy(fd, p);
	qt_unmap(fd, w, (void *)wm, 4096);
	qt_close(fd, w);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx2), 0);
	close(fd);
	qs_wait_baseline(&b, 30);
	qs_device_works();
	qs_kmsg_end(&k);
}

/*
 * CTX_DESTROY (ctx_case) or close() of the whole file (!ctx_case) while
 * that context's job is queued behind a blocked job of another file:
 * returns without waiting; the queued job's fence still signals. With
 * @timeline the job waits for a timeline point (a fence the scheduler
 * cannot see through, so the job stays queued in its context until the
 * blocked job finished); else for the blocked job's own fence.
 */
static void gated_destroy(bool ctx_case, bool timeline)
{
	struct drm_qgpu_sync_entry in = { 0 }, out = { 0 }, pout[2];
	volatile uint64_t *wm;
	struct qgpu_cb *cb;
	struct qs_call cl;
	struct qs_kmsg k;
	struct qs_base b;
	uint32_t ctx2, ctx, w, t, p, tl = 0, jout, cargs[3];
	int fd, fd2, sfd, ret, st_p, st_j, cfd[2];
	const char *what = ctx_case ? "CTX_DESTROY" : "close()";
	bool done;

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	fd = qt_reopen(&dev);
	ctx2 = qs_ctx(fd);
	w = wait_target(fd, &wm);
	/* P: blocks the engine; signals p (binary) and tl point 1 */
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, w, 0, 4096);
	qgpu_cb_wait(cb, 0, 0, 1);
	qgpu_cb_fence(cb, 0, 8, 0xabc);
	memset(pout, 0, sizeof(pout));
	igt_assert_eq(qgpu_syncobj_create(fd, &p), 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &tl), 0);
	pout[0].handle = p;
	pout[1].handle = tl;
	pout[1].point = 1;
	ret = qgpu_submit(fd, ctx2, cb, NULL, 0, pout, 2, NULL);
	qt_cb_free(cb);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));

	/* the victim file: a job gated on P */
	fd2 = qt_reopen(&dev);
	ctx = qs_ctx(fd2);
	t = qt_bo(fd2, 65536, vis_ap, 0, 0);
	igt_assert_eq(drmSyncobjHandleToFD(fd, timeline ? tl : p, &sfd), 0);
	igt_assert_eq(drmSyncobjFDToHandle(fd2, sfd, &in.handle), 0);
	close(sfd);
	in.point = timeline ? 1 : 0;
	igt_assert_eq(qgpu_syncobj_create(fd2, &out.handle), 0);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, t, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, 65536, PAT1);
	ret = qgpu_submit(fd2, ctx, cb, &in, 1, &out, 1, NULL);
	qt_cb_free(cb);
	if (ret)
		release(wm, 1);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));
	/* watch its fence from the first file */
	igt_assert_eq(drmSyncobjHandleToFD(fd2, out.handle, &sfd), 0);
	igt_assert_eq(drmSyncobjFDToHandle(fd, sfd, &jout), 0);
	close(sfd);

	if (ctx_case) {
		cargs[0] = fd2;
		cargs[1] = ctx;
		cargs[2] = 0;
		qs_call_start(&cl, ctx_destroy_fn, cargs);
	} else {
		qt_untrack(fd2, t, NULL);
		cfd[0] = fd2;
		cfd[1] = 0;
		qs_call_start(&cl, close_fn, cfd);
	}
	done = qs_call_wait(&cl, 20);
	st_p = qs_sync_status(fd, p);
	st_j = qs_sync_status(fd, jout);
	release(wm, 1);
	igt_info("%s %s; blocked job %s, gated job %s\n", what,
		 done ? "returned" : "did not return within 20 s",
		 qs_status_name(st_p), qs_status_name(st_j));
	igt_assert_f(done, "%s did not return within 20 s\n", what);
	igt_assert_f(st_p == 0,
		     "%s returned only after the blocked job ended (%s): it waited for queued work\n",
		     what, qs_status_name(st_p));
	if (ctx_case)
		igt_assert_eq((int)cargs[2], 0);
	else
		igt_assert_eq(cfd[1], 0);

	/* the destroyed context's job: its fence signals, error or not */
	igt_assert_f(qs_wait_sync(fd, jout, 30) == 0,
		     "the destroyed context's queued job's fence never signalled\n");
	igt_info("gated job after destruction: %s\n",
		 qs_status_name(qs_sync_status(fd, jout)));
	igt_assert_eq(qs_wait_sync(fd, p, 30), 0);
	st_p = qs_sync_status(fd, p);
	igt_assert_f(st_p == 1, "blocked job: %s\n", qs_status_name(st_p));
	if (ctx_case) {
		qgpu_syncobj_destroy(fd2, in.handle);
		qgpu_syncobj_destroy(fd2, out.handle);
		qt_close(fd2, t);
		close(fd2);
	}
	qgpu_syncobj_destroy(fd, jout);
	qgpu_syncobj_destroy(fd, p);
	qgpu_syncobj_destroy(fd, tl);
	qt_unmap(fd, w, (void *)wm, 4096);
	qt_close(fd, w);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx2), 0);
	close(fd);
	qs_wait_baseline(&b, 30);
	qs_device_works();
	qs_kmsg_end(&k);
}

/* ------------------------------------------------------------------------ */
/* L3                                                                        */

struct cpu_write {
	volatile uint64_t *p;
	uint64_t v;
};

static void *cpu_write_fn(void *arg)
{
	struct cpu_write *c = arg;

	__atomic_store_n(&c->p[0], c->v, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Allocation of 64 KiB resident in @seg, its last move completed. */
static uint32_t resident_in(int fd, uint32_t ctx, uint32_t seg)
{
	uint32_t mask, h;
	struct qgpu_cb *cb;

	switch (seg) {
	case QGPU_SEG_VISIBLE:
		mask = vis_ap;
		break;
	case QGPU_SEG_LOCAL:
		mask = QGPU_SEGBIT(QGPU_SEG_LOCAL) |
		       QGPU_SEGBIT(QGPU_SEG_APERTURE);
		break;
	default:
		mask = QGPU_SEGBIT(QGPU_SEG_APERTURE);
		break;
	}
	h = qt_bo(fd, 65536, mask, QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	/* a job after the move: when it is done, so is the move */
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fence(cb, 0, 16, 1);
	qt_run(fd, ctx, cb, 20);
	qt_cb_free(cb);
	igt_assert_eq(qt_info(fd, h).segment, seg);
	return h;
}

static void cpu_write_releases_wait(uint32_t seg, bool touched)
{
	struct drm_qgpu_sync_entry out = { 0 };
	struct cpu_write cw;
	volatile uint64_t *m;
	struct qgpu_cb *cb;
	struct qs_call wr;
	struct qs_kmsg k;
	struct qs_base b;
	uint32_t ctx, h;
	int fd, st, cs, ret, wst;
	bool wrote;

	if (seg == QGPU_SEG_LOCAL)
		igt_require_f(qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) &&
			      dev.info.host_aperture_size,
			      "no non-visible VRAM or no host aperture\n");
	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	h = resident_in(fd, ctx, seg);
	m = qt_map(fd, h, 65536);
	if (touched)
		igt_assert_eq_u64(m[0], 0);	/* the mapping exists now */

	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_wait(cb, 0, 0, 5);
	qgpu_cb_fence(cb, 0, 8, 0xfeed);
	igt_assert_eq(qgpu_syncobj_create(fd, &out.handle), 0);
	ret = qgpu_submit(fd, ctx, cb, NULL, 0, &out, 1, NULL);
	qt_cb_free(cb);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));
	st = qs_sync_status(fd, out.handle);
	igt_assert_f(st == 0, "the WAIT job is not pending: %s\n",
		     qs_status_name(st));

	/* the CPU writes the value the GPU waits for */
	cw.p = m;
	cw.v = 5;
	qs_call_start(&wr, cpu_write_fn, &cw);
	wrote = qs_call_wait(&wr, 30);
	igt_assert_f(wrote, "the CPU write did not complete within 30 s\n");
	ret = qs_wait_sync(fd, out.handle, 30);
	st = qs_sync_status(fd, out.handle);
	cs = ctx_state(fd, ctx);
	igt_info("%s mapping, %s: job %s, context %s\n",
		 touched ? "established" : "first touch after the submit",
		 qgpu_segment_name(seg), qs_status_name(st),
		 ctx_state_str(cs));
	igt_assert_f(ret == 0, "the WAIT job did not complete: %s\n",
		     strerror(-ret));
	igt_assert_f(st == 1 && cs == QGPU_CTX_OK,
		     "the job waiting for the CPU's write ended %s, context %s: the CPU access waited for the GPU job (deadlock broken by the job timeout)\n",
		     qs_status_name(st), ctx_state_str(cs));
	wst = (int)m[1];
	igt_assert_eq(wst, 0xfeed);
	qgpu_syncobj_destroy(fd, out.handle);
	qt_unmap(fd, h, (void *)m, 65536);
	qt_close(fd, h);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
	close(fd);
	qs_wait_baseline(&b, 30);
	qs_kmsg_end(&k);
}

/* ------------------------------------------------------------------------ */
/* L4                                                                        */

static __thread sigjmp_buf bus_jmp;
static __thread volatile int in_probe;
static volatile int got_sigbus, got_usr1;

static void on_sigbus(int sig)
{
	(void)sig;
	if (in_probe) {
		got_sigbus = 1;
		siglongjmp(bus_jmp, 1);
	}
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&got_usr1, 1, __ATOMIC_SEQ_CST);
}

struct prober {
	volatile uint64_t *p;
	volatile int ready;
	volatile uint64_t val;
	volatile int sigbus;
};

static void *probe_fn(void *arg)
{
	struct prober *pr = arg;

	in_probe = 1;
	if (!sigsetjmp(bus_jmp, 1)) {
		__atomic_store_n(&pr->ready, 1, __ATOMIC_SEQ_CST);
		pr->val = pr->p[1];	/* faults: the allocation is moving */
	} else {
		pr->sigbus = 1;
	}
	in_probe = 0;
	return NULL;
}

static void fault_signal_retries(void)
{
	struct sigaction sa, obus, ousr;
	volatile uint64_t *wm, *am;
	struct prober pr;
	struct qs_call pc;
	struct qs_kmsg k;
	struct qs_base b;
	struct qgpu_cb *cb;
	uint32_t ctx, w, a, s;
	int fd, ret, i, sent = 0, st;
	char state = '?', wchan[64] = "?";

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	w = wait_target(fd, &wm);
	a = resident_in(fd, ctx, QGPU_SEG_VISIBLE);
	am = qt_map(fd, a, 65536);
	igt_assert_eq_u64(am[1], 0);

	/* a blocked job that uses A, then a move of A queued behind it */
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, w, 0, 4096);
	qgpu_cb_bind(cb, 1, a, 0, QGPU_CB_WHOLE);
	qgpu_cb_wait(cb, 0, 0, 1);
	qgpu_cb_fence(cb, 1, 8, 0x42);
	igt_assert_eq(qgpu_syncobj_create(fd, &s), 0);
	{
		struct drm_qgpu_sync_entry out = { .handle = s };

		ret = qgpu_submit(fd, ctx, cb, NULL, 0, &out, 1, NULL);
	}
	qt_cb_free(cb);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));
	ret = qgpu_bo_reside(fd, a, QGPU_RESIDE_EVICT, 0, NULL);
	if (ret) {
		release(wm, 1);
		igt_skip("cannot queue a move of an allocation behind GPU work (EVICT: %s)\n",
			 strerror(-ret));
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sa.sa_handler = on_usr1;	/* no SA_RESTART on purpose */
	sigaction(SIGUSR1, &sa, &ousr);
	got_sigbus = got_usr1 = 0;
	memset(&pr, 0, sizeof(pr));
	pr.p = am;
	qs_call_start(&pc, probe_fn, &pr);
	for (i = 0; i < 5000 && !pr.ready; i++)
		usleep(1000);
	/* interrupt the fault while it waits for the move, several times */
	for (i = 0; i < 3000 && sent < 4 && !pc.done; i++) {
		state = qs_task_state(pc.tid);
		if (state == 'S' || state == 'D') {
			if (!sent)
				qs_task_wchan(pc.tid, wchan, sizeof(wchan));
			pthread_kill(pc.th, SIGUSR1);
			sent++;
		}
		usleep(2000);
	}
	release(wm, 1);
	ret = qs_call_wait(&pc, 30);
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGUSR1, &ousr, NULL);
	igt_info("faulting thread: state %c in %s, %d signal(s) sent, %d handled, %s\n",
		 state, wchan, sent, got_usr1,
		 pr.sigbus ? "SIGBUS" : ret ? "access completed" : "stuck");
	igt_assert_f(ret, "the faulting access did not complete within 30 s\n");
	igt_assert_f(!pr.sigbus,
		     "a signal during the fault's wait for the move killed the access with SIGBUS\n");
	igt_assert_eq(qs_wait_sync(fd, s, 30), 0);
	st = qs_sync_status(fd, s);
	igt_assert_f(st == 1, "the blocked job: %s\n", qs_status_name(st));
	igt_assert_eq_u64(pr.val, 0x42);
	if (!sent)
		igt_info("the fault never slept: nothing was interrupted\n");

	qgpu_syncobj_destroy(fd, s);
	qt_unmap(fd, a, (void *)am, 65536);
	qt_close(fd, a);
	qt_unmap(fd, w, (void *)wm, 4096);
	qt_close(fd, w);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
	close(fd);
	qs_wait_baseline(&b, 30);
	qs_kmsg_end(&k);
	igt_require_f(sent, "the fault did not wait for the move; nothing to interrupt\n");
}

/* ------------------------------------------------------------------------ */

/*
 * A file's DMA buffers queued behind a blocked job: 1 MiB of NOPs each,
 * submitted by a child on the same file. With the blocker's 4 KiB, 63 fit
 * in QGPU_MAX_QUEUED_DMA; the 64th submit waits (another process still
 * submits meanwhile) until the blocker is released, and then all of them
 * run. Without the limit the child queued all of them, each holding 1 MiB
 * of the kernel's DMA memory for as long as the blocker blocks.
 */
static void queued_dma_capped(void)
{
	const uint32_t want = 70, fit = QGPU_MAX_QUEUED_DMA / MiB - 1;
	volatile uint32_t *done;
	volatile uint64_t *wm;
	uint32_t ctx, w, s, got, i;
	struct other o;
	char rep[128];
	int fd, st;
	bool ok;
	pid_t pid;

	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	w = wait_target(fd, &wm);
	s = submit_blocker(fd, ctx, w, 0, 0);
	done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(done != MAP_FAILED);
	done[0] = 0;
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		struct qgpu_cb cb;

		if (qgpu_cb_init(&cb, dev.info.max_slots))
			_exit(2);
		for (i = 0; i < 4; i++)
			qgpu_cb_nop(&cb, 0xffff);
		qgpu_cb_nop(&cb, 4);
		if (cb.error || cb.ndw * 4 != QGPU_MAX_DMA_SIZE)
			_exit(3);
		for (i = 0; i < want; i++) {
			if (qgpu_submit(fd, ctx, &cb, NULL, 0, NULL, 0, NULL))
				_exit(4);
			done[0] = i + 1;
		}
		_exit(0);
	}
	/* the child stops at the limit: give it time to go past it */
	for (i = 0; i < 500 && done[0] < fit; i++)
		usleep(2000);
	usleep(200000);
	got = done[0];
	/* another process is not held back meanwhile */
	other_start(&o);
	ok = other_go(&o, rep, sizeof(rep), 20);
	release(wm, 1);
	st = qt_wait_child(pid);
	igt_assert_f(ok, "the other process's ioctls did not return\n");
	check_other_report(rep);
	igt_assert_eq(other_finish(&o), 0);
	igt_assert_f(got == fit, "%u DMA buffers of 1 MiB queued behind the blocked job, the limit allows %u\n",
		     got, fit);
	igt_assert_f(st == 0, "child: status %d after %u submits\n", st,
		     done[0]);
	igt_assert_eq(done[0], want);
	igt_assert_eq(qs_sync_status(fd, s), 1);
	munmap((void *)done, 4096);
	close(fd);
}

igt_main
{
	static const struct { const char *name; uint32_t seg; } segs[] = {
		{ "visible", QGPU_SEG_VISIBLE },
		{ "aperture", QGPU_SEG_APERTURE },
		{ "local", QGPU_SEG_LOCAL },
	};
	static unsigned int i;

	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		obs = qt_reopen(&dev);
		vis_ap = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			 QGPU_SEGBIT(QGPU_SEG_APERTURE);
	}

	igt_subtest("blocked-gpu-other-process")
		close_busy(false);
	igt_subtest("close-busy-returns")
		close_busy(true);
	igt_subtest("close-busy-memory-kept")
		close_busy_memory_kept();
	igt_subtest("ctx-destroy-gated-returns")
		gated_destroy(true, false);
	igt_subtest("ctx-destroy-gated-timeline-returns")
		gated_destroy(true, true);
	igt_subtest("fd-close-gated-returns")
		gated_destroy(false, false);
	igt_subtest("fd-close-gated-timeline-returns")
		gated_destroy(false, true);

	for (i = 0; i < ARRAY_SIZE(segs); i++) {
		igt_subtest_f("cpu-write-releases-wait-touched-%s", segs[i].name)
			cpu_write_releases_wait(segs[i].seg, true);
		igt_subtest_f("cpu-write-releases-wait-first-touch-%s",
			      segs[i].name)
			cpu_write_releases_wait(segs[i].seg, false);
	}

	igt_subtest("fault-signal-retries")
		fault_signal_retries();

	igt_subtest("queued-dma-capped-per-file")
		queued_dma_capped();

	igt_fixture {
		close(obs);
		qgpu_close(&dev);
	}
}
