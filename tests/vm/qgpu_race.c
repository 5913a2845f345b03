// SPDX-License-Identifier: MIT
/*
 * qgpu_race: destroying objects while work on them is in flight is safe
 * (rule L1).
 *
 * Bounded stress, several threads and several processes:
 *  - ctx-destroy-vs-submit: CTX_DESTROY (and re-create) while other threads
 *    SUBMIT on the same context: small buffers, 1 MiB buffers, hundreds of
 *    patch entries, in-syncobjs not yet signalled, and DMA WAITs that block
 *    the GPU until a CPU thread writes the value;
 *  - gem-close-vs-submit: GEM_CLOSE of allocations that queued and
 *    being-prepared submits use;
 *  - fd-close-vs-submit: close() of the whole file, exit of the process and
 *    SIGKILL while its submits are queued and other threads are in ioctls;
 *  - syncobj-destroy-vs-submit: syncobjs destroyed while submits wait on or
 *    signal them;
 *  - all-at-once: everything above together.
 * After each: no bad kernel log line, every out-fence of an accepted submit
 * signals (with or without an error), a fresh file can create a context,
 * FILL and read the right result, and the global allocation counters and
 * per-segment usage are back to the baseline.
 *
 * Deterministic versions with userfaultfd (uffd-POS-ACTION): a SUBMIT is
 * held inside its copy_from_user() of the DMA buffer (dma), the patch list
 * (patches), the in-syncobj array after the allocations and the first
 * in-fence were looked up (insyncs), or the second read of the out-syncobj
 * array after the job was queued (outsyncs); meanwhile the context is
 * destroyed (ctx), the allocation's handle closed (gem) or a syncobj
 * destroyed (sync); then the fault is released. The submit must fail
 * cleanly (ENOENT, ECANCELED) or succeed harmlessly, and nothing may oops;
 * afterwards contexts are churned so that a dangling scheduler entity is
 * touched.
 *
 * Pass/fail never depends on time: bounds only turn a deadlock into FAIL.
 */
#include "qgpu_stress.h"

#include <linux/membarrier.h>
#include <sched.h>

#define POOL_SZ		(256 * 1024)
#define NPOOL		8
#define NRING		8
#define NSYNC		8
#define MAXSUB		4
#define BIG_DMA		QGPU_MAX_DMA_SIZE
#define MANY_BINDS	600

enum {
	F_DESTROY_CTX = 1 << 0,
	F_CLOSE_GEM = 1 << 1,
	F_DESTROY_SYNC = 1 << 2,
	F_MISC = 1 << 3,
};

static struct qgpu_dev dev;
static int obs = -1;		/* observer file for the counters */
static uint32_t seg_mask;	/* VISIBLE | APERTURE */

/* ------------------------------------------------------------------------ */
/* One stress run on one file                                                */

struct rs {
	int fd;
	uint32_t max_slots;
	volatile uint32_t ctx;
	uint32_t ctr_h;
	volatile uint64_t *ctr;		/* WAIT target, the CPU counts up */
	volatile uint32_t pool[NPOOL];
	volatile uint32_t syncs[NSYNC];
	volatile int stop;		/* destroyers and misc stop */
	volatile int stop_release;
	volatile int no_waits;		/* no more WAIT jobs */
	volatile int fd_closed;		/* EBADF ends a thread quietly */
	int iters, nsub, ndestroy;
	unsigned int flags;
	uint64_t seed;
	pthread_mutex_t lock;
	char err[512];
	volatile int nerr;
	volatile long n_ok, n_enoent, n_ecanceled, n_einval, n_destroyed;
	volatile long progress;
};

struct rs_thread {
	struct rs *r;
	int idx;
	uint64_t seed;
	pthread_t th;
};

static void rs_fail(struct rs *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rs_fail(struct rs *r, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->lock);
	if (!r->nerr) {
		va_start(ap, fmt);
		vsnprintf(r->err, sizeof(r->err), fmt, ap);
		va_end(ap);
	}
	r->nerr++;
	pthread_mutex_unlock(&r->lock);
}

static void rs_count(volatile long *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static int rs_new_pool_bo(struct rs *r, uint32_t *h)
{
	int ret = qgpu_bo_create(r->fd, POOL_SZ, seg_mask, 0, 0, h);

	if (ret)
		return ret;
	ret = qgpu_bo_reside(r->fd, *h, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	return ret == -ENOSPC || ret == -EBUSY ? 0 : ret;
}

/* Set up a file for a run; returns 0 or a negative errno. */
static int rs_init(struct rs *r, int fd, uint32_t max_slots, unsigned int flags,
		   int nsub, int iters, int ndestroy, uint64_t seed)
{
	void *p = NULL;
	uint32_t c;
	int i, ret;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->fd = fd;
	r->max_slots = max_slots;
	r->flags = flags;
	r->nsub = nsub;
	r->iters = iters;
	r->ndestroy = ndestroy;
	r->seed = seed;
	ret = qs_ctx_create(fd, &c);
	if (ret)
		return ret;
	r->ctx = c;
	ret = qgpu_bo_create(fd, 4096, seg_mask, QGPU_GEM_CPU_ACCESS,
			     QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0), &r->ctr_h);
	if (ret)
		return ret;
	ret = qgpu_bo_reside(fd, r->ctr_h, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	if (ret)
		return ret;
	ret = qgpu_bo_map(fd, r->ctr_h, 4096, &p);
	if (ret)
		return ret;
	r->ctr = p;
	r->ctr[0] = 1;		/* touched: the mapping is established */
	for (i = 0; i < NPOOL; i++) {
		uint32_t h;

		ret = rs_new_pool_bo(r, &h);
		if (ret)
			return ret;
		r->pool[i] = h;
	}
	for (i = 0; i < NSYNC; i++) {
		uint32_t h;

		ret = qgpu_syncobj_create(fd, &h);
		if (ret)
			return ret;
		if (i % 2)
			drmSyncobjSignal(fd, &h, 1);
		r->syncs[i] = h;
	}
	return 0;
}

/* The CPU side of the WAIT jobs: count up until told to stop. */
static void *rs_releaser(void *p)
{
	struct rs *r = p;

	while (!r->stop_release) {
		__atomic_add_fetch(&r->ctr[0], 1, __ATOMIC_SEQ_CST);
		usleep(300);
	}
	__atomic_store_n(&r->ctr[0], ~0ull >> 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static uint32_t rs_pick(struct rs *r, uint64_t *seed)
{
	return r->pool[qs_rand(seed) % NPOOL];
}

/* Build one DMA buffer of @kind. */
static void rs_build(struct rs *r, struct qgpu_cb *cb, int kind, uint64_t *seed)
{
	uint32_t i, left;

	qgpu_cb_reset(cb);
	switch (kind) {
	case 0:		/* small; kind 3 is the same with an in-syncobj */
	case 3:
		qgpu_cb_bind(cb, 0, rs_pick(r, seed), 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, 4096, (uint32_t)qs_rand(seed));
		qgpu_cb_fence(cb, 0, 8, qs_rand(seed));
		break;
	case 1:		/* the largest DMA buffer */
		qgpu_cb_bind(cb, 0, rs_pick(r, seed), 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, POOL_SZ, (uint32_t)qs_rand(seed));
		left = BIG_DMA / 4 - cb->ndw;
		while (left) {
			uint32_t n = left > 0xffff ? 0xffff : left;

			qgpu_cb_nop(cb, n);
			left -= n;
		}
		break;
	case 2:		/* many patch entries */
		for (i = 0; i < MANY_BINDS; i++) {
			if (i && i % 100 == 0)
				qgpu_cb_nop(cb, 1);	/* a new split point */
			qgpu_cb_bind(cb, i % r->max_slots, rs_pick(r, seed), 0,
				     QGPU_CB_WHOLE);
		}
		qgpu_cb_fill(cb, 0, 0, 4096, (uint32_t)qs_rand(seed));
		break;
	default:	/* a DMA WAIT the CPU releases */
		qgpu_cb_bind(cb, 0, r->ctr_h, 0, 4096);
		qgpu_cb_bind(cb, 1, rs_pick(r, seed), 0, QGPU_CB_WHOLE);
		qgpu_cb_wait(cb, 0, 0,
			     __atomic_load_n(&r->ctr[0], __ATOMIC_SEQ_CST) + 2);
		qgpu_cb_fill(cb, 1, 0, 8192, (uint32_t)qs_rand(seed));
		break;
	}
}

static void *rs_submitter(void *p)
{
	struct rs_thread *t = p;
	struct rs *r = t->r;
	struct drm_qgpu_sync_entry in[2], out[2];
	struct drm_qgpu_submit a;
	uint32_t ring[NRING], gate = 0;
	bool pending[NRING];
	struct qgpu_cb cb;
	int i, k, prev = -1, ret, kind;

	memset(pending, 0, sizeof(pending));
	memset(ring, 0, sizeof(ring));
	if (qgpu_cb_init(&cb, r->max_slots)) {
		rs_fail(r, "cb init");
		return NULL;
	}
	for (k = 0; k < NRING; k++)
		if (qgpu_syncobj_create(r->fd, &ring[k])) {
			rs_fail(r, "syncobj create: %s", strerror(errno));
			goto out;
		}
	if (qgpu_syncobj_create(r->fd, &gate) ||
	    drmSyncobjSignal(r->fd, &gate, 1)) {
		rs_fail(r, "gate syncobj: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < r->iters && !r->fd_closed; i++) {
		k = i % NRING;
		if (pending[k]) {
			ret = qs_wait_sync(r->fd, ring[k], 30);
			if (ret == -EBADF && r->fd_closed)
				break;
			if (ret) {
				rs_fail(r, "thread %d: the out-fence of an accepted submit did not signal: %s",
					t->idx, strerror(-ret));
				break;
			}
			pending[k] = false;
		}
		kind = qs_rand(&t->seed) % 5;
		if (kind == 4 && r->no_waits)
			kind = 0;
		rs_build(r, &cb, kind, &t->seed);
		if (cb.error) {
			rs_fail(r, "building kind %d: %s", kind,
				strerror(-cb.error));
			break;
		}
		qgpu_cb_to_submit(&cb, r->ctx, &a);
		memset(in, 0, sizeof(in));
		memset(out, 0, sizeof(out));
		out[0].handle = ring[k];
		a.out_syncs = (uintptr_t)out;
		a.num_out_syncs = 1;
		if (kind == 3) {
			/* the previous job's fence: likely not signalled yet */
			in[0].handle = prev >= 0 && pending[prev] ? ring[prev] :
				       gate;
			a.in_syncs = (uintptr_t)in;
			a.num_in_syncs = 1;
		}
		if (r->flags & F_DESTROY_SYNC) {
			/* shared syncobjs that another thread destroys */
			in[a.num_in_syncs].handle =
				r->syncs[qs_rand(&t->seed) % NSYNC];
			a.in_syncs = (uintptr_t)in;
			a.num_in_syncs++;
			out[1].handle = r->syncs[qs_rand(&t->seed) % NSYNC];
			a.num_out_syncs = 2;
		}
		ret = qgpu_submit_raw(r->fd, &a);
		if (ret == 0) {
			rs_count(&r->n_ok);
			__atomic_add_fetch(&r->progress, 1, __ATOMIC_SEQ_CST);
			pending[k] = true;
			prev = k;
		} else if (ret == -ENOENT) {
			rs_count(&r->n_enoent);
		} else if (ret == -ECANCELED) {
			rs_count(&r->n_ecanceled);
		} else if (ret == -EINVAL && (r->flags & F_DESTROY_SYNC)) {
			/* a freshly created in-syncobj without a fence */
			rs_count(&r->n_einval);
		} else if (ret == -EBADF && r->fd_closed) {
			break;
		} else {
			rs_fail(r, "thread %d: submit kind %d on context %u: %s",
				t->idx, kind, a.ctx, strerror(-ret));
			break;
		}
	}
	/* every accepted submit's fence signals */
	for (k = 0; k < NRING && !r->fd_closed; k++)
		if (pending[k]) {
			ret = qs_wait_sync(r->fd, ring[k], 30);
			if (ret && !(ret == -EBADF && r->fd_closed))
				rs_fail(r, "thread %d: the out-fence of an accepted submit did not signal: %s",
					t->idx, strerror(-ret));
		}
out:
	if (!r->fd_closed) {
		for (k = 0; k < NRING; k++)
			if (ring[k])
				qgpu_syncobj_destroy(r->fd, ring[k]);
		if (gate)
			qgpu_syncobj_destroy(r->fd, gate);
	}
	qgpu_cb_fini(&cb);
	return NULL;
}

/* CTX_DESTROY (and re-create) under the submitters' feet. */
static void *rs_ctx_destroyer(void *p)
{
	struct rs_thread *t = p;
	struct rs *r = t->r;
	uint32_t old, nc = 0;
	int i, j, ret, first;

	for (i = 0; i < r->ndestroy && !r->stop; i++) {
		usleep(qs_rand(&t->seed) % 3000);
		old = r->ctx;
		first = qs_rand(&t->seed) % 2;
		if (first) {
			/* destroy first: submitters see a dead id for a while */
			ret = qgpu_ctx_destroy(r->fd, old);
			if (ret == -EBADF && r->fd_closed)
				return NULL;
			if (ret) {
				rs_fail(r, "CTX_DESTROY %u: %s", old,
					strerror(-ret));
				return NULL;
			}
		}
		for (j = 0; j < 1000; j++) {
			ret = qgpu_ctx_create(r->fd, &nc);
			if (ret != -ENOSPC)
				break;
			usleep(1000);	/* all ids in use by other files */
		}
		if (ret == -EBADF && r->fd_closed)
			return NULL;
		if (ret) {
			rs_fail(r, "CTX_CREATE: %s", strerror(-ret));
			return NULL;
		}
		r->ctx = nc;
		if (!first) {
			ret = qgpu_ctx_destroy(r->fd, old);
			if (ret == -EBADF && r->fd_closed)
				return NULL;
			if (ret) {
				rs_fail(r, "CTX_DESTROY %u: %s", old,
					strerror(-ret));
				return NULL;
			}
		}
		rs_count(&r->n_destroyed);
	}
	return NULL;
}

/* GEM_CLOSE of allocations that submits use, replaced by new ones. */
static void *rs_gem_closer(void *p)
{
	struct rs_thread *t = p;
	struct rs *r = t->r;
	uint32_t old, nh;
	int i, ret, idx;

	for (i = 0; i < r->ndestroy && !r->stop; i++) {
		usleep(qs_rand(&t->seed) % 3000);
		idx = qs_rand(&t->seed) % NPOOL;
		ret = rs_new_pool_bo(r, &nh);
		if (ret == -EBADF && r->fd_closed)
			return NULL;
		if (ret) {
			rs_fail(r, "GEM_CREATE/RESIDE: %s", strerror(-ret));
			return NULL;
		}
		old = r->pool[idx];
		r->pool[idx] = nh;
		ret = qgpu_bo_destroy(r->fd, old);
		if (ret == -EBADF && r->fd_closed)
			return NULL;
		if (ret) {
			rs_fail(r, "GEM_CLOSE %u: %s", old, strerror(-ret));
			return NULL;
		}
		rs_count(&r->n_destroyed);
	}
	return NULL;
}

/* Syncobjs destroyed while submits wait on them / signal them. */
static void *rs_sync_destroyer(void *p)
{
	struct rs_thread *t = p;
	struct rs *r = t->r;
	uint32_t old, nh;
	int i, ret, idx;

	for (i = 0; i < r->ndestroy && !r->stop; i++) {
		usleep(qs_rand(&t->seed) % 2000);
		idx = qs_rand(&t->seed) % NSYNC;
		ret = qgpu_syncobj_create(r->fd, &nh);
		if (ret == -EBADF && r->fd_closed)
			return NULL;
		if (ret) {
			rs_fail(r, "SYNCOBJ_CREATE: %s", strerror(-ret));
			return NULL;
		}
		if (qs_rand(&t->seed) % 2)
			drmSyncobjSignal(r->fd, &nh, 1);
		old = r->syncs[idx];
		r->syncs[idx] = nh;
		ret = qgpu_syncobj_destroy(r->fd, old);
		if (ret == -EBADF && r->fd_closed)
			return NULL;
		if (ret) {
			rs_fail(r, "SYNCOBJ_DESTROY %u: %s", old,
				strerror(-ret));
			return NULL;
		}
		rs_count(&r->n_destroyed);
	}
	return NULL;
}

/* Other ioctls on the same objects meanwhile. */
static void *rs_misc(void *p)
{
	struct rs_thread *t = p;
	struct rs *r = t->r;
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_gem_info gi;
	struct drm_qgpu_stats st;
	uint32_t h;
	int ret = 0, op;

	while (!r->stop && !r->fd_closed) {
		op = qs_rand(&t->seed) % 5;
		h = rs_pick(r, &t->seed);
		switch (op) {
		case 0:
			ret = qgpu_bo_info(r->fd, h, &gi);
			break;
		case 1:
			ret = qgpu_bo_reside(r->fd, h, QGPU_RESIDE_EVICT, 0,
					     NULL);
			break;
		case 2:
			ret = qgpu_bo_reside(r->fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT, 0,
					     NULL);
			break;
		case 3:
			ret = qgpu_query_context(r->fd, r->ctx, &cs);
			break;
		default:
			ret = qgpu_query_stats(r->fd, &st, NULL, 0, NULL);
			break;
		}
		if (ret && ret != -ENOENT && ret != -EBUSY &&
		    ret != -ENOSPC && !(ret == -EBADF && r->fd_closed)) {
			rs_fail(r, "misc op %d: %s", op, strerror(-ret));
			break;
		}
		usleep(200);
	}
	return NULL;
}

struct rs_run {
	struct rs r;
	struct rs_thread sub[MAXSUB], d[3], misc;
	pthread_t rel;
	int nd;
};

static void rs_start(struct rs_run *x)
{
	struct rs *r = &x->r;
	int i;

	x->nd = 0;
	pthread_create(&x->rel, NULL, rs_releaser, r);
	for (i = 0; i < r->nsub; i++) {
		x->sub[i] = (struct rs_thread){ r, i, r->seed * 31 + i + 1, 0 };
		pthread_create(&x->sub[i].th, NULL, rs_submitter, &x->sub[i]);
	}
	if (r->flags & F_DESTROY_CTX) {
		x->d[x->nd] = (struct rs_thread){ r, 100, r->seed + 101, 0 };
		pthread_create(&x->d[x->nd].th, NULL, rs_ctx_destroyer,
			       &x->d[x->nd]);
		x->nd++;
	}
	if (r->flags & F_CLOSE_GEM) {
		x->d[x->nd] = (struct rs_thread){ r, 101, r->seed + 202, 0 };
		pthread_create(&x->d[x->nd].th, NULL, rs_gem_closer,
			       &x->d[x->nd]);
		x->nd++;
	}
	if (r->flags & F_DESTROY_SYNC) {
		x->d[x->nd] = (struct rs_thread){ r, 102, r->seed + 303, 0 };
		pthread_create(&x->d[x->nd].th, NULL, rs_sync_destroyer,
			       &x->d[x->nd]);
		x->nd++;
	}
	if (r->flags & F_MISC) {
		x->misc = (struct rs_thread){ r, 103, r->seed + 404, 0 };
		pthread_create(&x->misc.th, NULL, rs_misc, &x->misc);
	}
}

/* Join with a bound; false when a thread did not come back (deadlock). */
static bool rs_join_one(pthread_t th, int secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	return pthread_timedjoin_np(th, NULL, &ts) == 0;
}

static bool rs_join(struct rs_run *x, int secs)
{
	struct rs *r = &x->r;
	bool ok = true;
	int i;

	for (i = 0; i < r->nsub; i++)
		ok &= rs_join_one(x->sub[i].th, secs);
	r->stop = 1;
	for (i = 0; i < x->nd; i++)
		ok &= rs_join_one(x->d[i].th, secs);
	if (r->flags & F_MISC)
		ok &= rs_join_one(x->misc.th, secs);
	r->stop_release = 1;
	ok &= rs_join_one(x->rel, secs);
	return ok;
}

/* Close everything of a run (the file stays open). */
static int rs_fini(struct rs *r)
{
	int i, ret, err = 0;

	if (r->ctr) {
		__atomic_store_n(&r->ctr[0], ~0ull >> 1, __ATOMIC_SEQ_CST);
		qgpu_bo_unmap(r->fd, r->ctr_h, (void *)r->ctr, 4096);
		r->ctr = NULL;
	}
	if (r->ctr_h && (ret = qgpu_bo_destroy(r->fd, r->ctr_h)))
		err = ret;
	for (i = 0; i < NPOOL; i++)
		if (r->pool[i] && (ret = qgpu_bo_destroy(r->fd, r->pool[i])))
			err = ret;
	for (i = 0; i < NSYNC; i++)
		if (r->syncs[i])
			qgpu_syncobj_destroy(r->fd, r->syncs[i]);
	ret = qgpu_ctx_destroy(r->fd, r->ctx);
	if (ret)
		err = ret;
	return err;
}

static void rs_summary(const char *who, struct rs *r)
{
	igt_info("%s: %ld submits accepted, %ld ENOENT, %ld ECANCELED, %ld EINVAL, %ld destroyed\n",
		 who, r->n_ok, r->n_enoent, r->n_ecanceled, r->n_einval,
		 r->n_destroyed);
}

/*
 * A whole run on a new file of this process. Returns NULL or a message.
 * Used by the test process and by its helper child.
 */
static const char *stress_file(unsigned int flags, int nsub, int iters,
			       int ndestroy, uint64_t seed, char *msg,
			       size_t len, const char *who)
{
	static struct rs_run x;
	int fd = open(dev.path, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0) {
		snprintf(msg, len, "%s: open: %s", who, strerror(errno));
		return msg;
	}
	ret = rs_init(&x.r, fd, dev.info.max_slots, flags, nsub, iters,
		      ndestroy, seed);
	if (ret) {
		snprintf(msg, len, "%s: set-up: %s", who, strerror(-ret));
		close(fd);
		return msg;
	}
	rs_start(&x);
	if (!rs_join(&x, 120)) {
		snprintf(msg, len, "%s: a thread did not return within 120 s (deadlock)",
			 who);
		return msg;	/* threads still inside the kernel */
	}
	rs_summary(who, &x.r);
	if (x.r.nerr) {
		snprintf(msg, len, "%s: %s (%d error(s))", who, x.r.err,
			 x.r.nerr);
		rs_fini(&x.r);
		close(fd);
		return msg;
	}
	ret = rs_fini(&x.r);
	close(fd);
	if (ret) {
		snprintf(msg, len, "%s: closing the objects: %s", who,
			 strerror(-ret));
		return msg;
	}
	if (x.r.n_ok == 0) {
		snprintf(msg, len, "%s: not a single submit was accepted", who);
		return msg;
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Several processes                                                         */

struct helper {
	pid_t pid;
	int rfd;
};

/* A child process that runs stress_file() on its own file. */
static void helper_start(struct helper *h, unsigned int flags, int nsub,
			 int iters, int ndestroy, uint64_t seed)
{
	int p[2];

	igt_assert_eq(pipe(p), 0);
	fflush(stdout);
	h->pid = fork();
	igt_assert(h->pid >= 0);
	if (h->pid == 0) {
		char msg[600];
		const char *err;

		close(p[0]);
		err = stress_file(flags, nsub, iters, ndestroy, seed, msg,
				  sizeof(msg), "child");
		if (err && write(p[1], err, strlen(err)) < 0)
			_exit(3);
		_exit(err ? 1 : 0);
	}
	close(p[1]);
	h->rfd = p[0];
}

/* Wait (bounded) for a child; returns its status (128 + signal), or -1. */
static int wait_child_bounded(pid_t pid, int secs)
{
	int st, i;

	for (i = 0; i < secs * 100; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) :
			       WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	return -2;
}

static void helper_finish(struct helper *h)
{
	char msg[600];
	ssize_t n;
	int st = wait_child_bounded(h->pid, 180);

	if (st == -2) {
		kill(h->pid, SIGKILL);
		wait_child_bounded(h->pid, 30);
		close(h->rfd);
		igt_assert_f(0, "helper process did not finish within 180 s\n");
	}
	n = read(h->rfd, msg, sizeof(msg) - 1);
	close(h->rfd);
	msg[n > 0 ? n : 0] = 0;
	igt_assert_f(st == 0, "helper process: status %d: %s\n", st, msg);
}

static void churn_contexts(int rounds);

/*
 * Contexts come and go with work on them on every CPU, after the kernel
 * had the chance to run its deferred (RCU) frees: a context freed while
 * its scheduler entity is still queued has its memory reused by a new
 * context here, so that the corruption shows in this subtest rather than
 * in a later one. (The pauses only give deferred work a chance to run;
 * nothing depends on their length.)
 */
/*
 * Let the kernel run its deferred frees now: kfree_rcu() batches objects
 * for seconds unless its shrinker drains them (drop_caches runs the
 * shrinkers), then frees them after a grace period (membarrier waits for
 * one).
 */
static void settle(void)
{
	int i, fd;

	for (i = 0; i < 2; i++) {
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "2", 1) < 0)
				igt_debug("drop_caches: %s\n", strerror(errno));
			close(fd);
		}
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		usleep(50000);
		syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	}
}

static void settle_and_churn(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set, old;
	int cpu;

	settle();
	sched_getaffinity(0, sizeof(old), &old);
	for (cpu = 0; cpu < n && cpu < 4; cpu++) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
		churn_contexts(4);
	}
	sched_setaffinity(0, sizeof(old), &old);
}

/* The checks after every subtest. */
static void after_all(struct qs_kmsg *k, const struct qs_base *b)
{
	qs_note("churning contexts\n");
	settle_and_churn();
	qs_note("checking the device works\n");
	qs_device_works();
	qs_wait_baseline(b, 30);
	qs_kmsg_end(k);
}

static void stress_subtest(unsigned int flags, int iters, int ndestroy,
			   uint64_t seed)
{
	struct qs_kmsg k;
	struct qs_base b;
	struct helper h;
	char msg[600];
	const char *err;

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	helper_start(&h, flags, 2, iters, ndestroy, seed + 1000);
	err = stress_file(flags, 3, iters, ndestroy, seed, msg, sizeof(msg),
			  "parent");
	helper_finish(&h);
	igt_assert_f(!err, "%s\n", err);
	after_all(&k, &b);
}

/*
 * fd-close / exit / SIGKILL: each child runs a stress on its own file and,
 * once its submitters are going, ends in one of three ways.
 */
static void fd_close_child(int variant, int wfd, uint64_t seed)
{
	static struct rs_run x;
	int fd = open(dev.path, O_RDWR | O_CLOEXEC), i;

	if (fd < 0)
		_exit(2);
	if (rs_init(&x.r, fd, dev.info.max_slots,
		    F_DESTROY_CTX | F_CLOSE_GEM | F_MISC, 3, 1000000, 1000000,
		    seed))
		_exit(3);
	rs_start(&x);
	for (i = 0; i < 3000 && x.r.progress < 30 && !x.r.nerr; i++)
		usleep(10000);
	if (x.r.nerr) {
		if (write(wfd, x.r.err, strlen(x.r.err)) < 0)
			_exit(5);
		_exit(4);
	}
	if (write(wfd, "r", 1) != 1)
		_exit(5);
	switch (variant) {
	case 0:
		/*
		 * close() the file while the other threads are inside
		 * ioctls. The CPU mapping would keep the file open, so
		 * release the WAITs and unmap it first.
		 */
		x.r.no_waits = 1;
		x.r.stop_release = 1;
		pthread_join(x.rel, NULL);
		qgpu_bo_unmap(fd, x.r.ctr_h, (void *)x.r.ctr, 4096);
		x.r.fd_closed = 1;
		close(fd);
		x.r.stop = 1;
		for (i = 0; i < x.r.nsub; i++)
			if (!rs_join_one(x.sub[i].th, 120))
				_exit(6);
		for (i = 0; i < x.nd; i++)
			if (!rs_join_one(x.d[i].th, 120))
				_exit(6);
		if (!rs_join_one(x.misc.th, 120))
			_exit(6);
		if (x.r.nerr) {
			if (write(wfd, x.r.err, strlen(x.r.err)) < 0)
				_exit(5);
			_exit(7);
		}
		_exit(0);
	case 1:
		/* exit with every thread busy */
		_exit(0);
	default:
		/* the parent kills us */
		for (;;)
			pause();
	}
}

static void fd_close_subtest(int rounds)
{
	struct qs_kmsg k;
	struct qs_base b;
	int r, v;

	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	for (r = 0; r < rounds; r++) {
		pid_t pid[3];
		int rfd[3];

		for (v = 0; v < 3; v++) {
			int p[2];

			igt_assert_eq(pipe(p), 0);
			fflush(stdout);
			pid[v] = fork();
			igt_assert(pid[v] >= 0);
			if (pid[v] == 0) {
				close(p[0]);
				fd_close_child(v, p[1], 77 * r + v + 1);
			}
			close(p[1]);
			rfd[v] = p[0];
		}
		for (v = 0; v < 3; v++) {
			static const char *const how[] = { "close()", "exit",
							   "SIGKILL" };
			struct pollfd pfd = { .fd = rfd[v], .events = POLLIN };
			char msg[600];
			ssize_t n = 0, m;
			int st;

			/* 'r': its submitters are going; else an error */
			if (poll(&pfd, 1, 120000) == 1)
				n = read(rfd[v], msg, sizeof(msg) - 1);
			msg[n > 0 ? n : 0] = 0;
			if (v == 2)
				kill(pid[v], SIGKILL);
			st = wait_child_bounded(pid[v], 120);
			if (st == -2) {
				kill(pid[v], SIGKILL);
				wait_child_bounded(pid[v], 30);
			}
			if (n == 1 && msg[0] == 'r') {
				m = read(rfd[v], msg, sizeof(msg) - 1);
				msg[m > 0 ? m : 0] = 0;
			}
			close(rfd[v]);
			igt_assert_f(st != -2,
				     "round %d: child %d (%s) did not end within 120 s\n",
				     r, v, how[v]);
			igt_assert_f(v == 2 ? st == 128 + SIGKILL : st == 0,
				     "round %d: child %d (%s) ended with status %d: %s\n",
				     r, v, how[v], st, msg);
		}
	}
	after_all(&k, &b);
}

/* ------------------------------------------------------------------------ */
/* userfaultfd: a submit held inside a copy_from_user()                      */

enum upos { U_DMA, U_PATCHES, U_INSYNCS, U_OUTSYNCS };
enum uact { A_CTX, A_GEM, A_SYNC };
static const char *const upos_name[] = { "dma", "patches", "insyncs",
					 "outsyncs" };
static const char *const uact_name[] = { "ctx", "gem", "sync" };

struct usubmit {
	int fd;
	struct drm_qgpu_submit a;
	int ret;
};

static void *usubmit_fn(void *p)
{
	struct usubmit *s = p;

	s->ret = qgpu_submit_raw(s->fd, &s->a);
	return NULL;
}

/* Contexts come and go with work on them: a dangling entity would show. */
static void churn_contexts(int rounds)
{
	struct qgpu_cb cb;
	uint32_t c[4], h;
	int fd = qt_reopen(&dev), i, j, ret;

	igt_assert_eq(qgpu_bo_create(fd, 65536, seg_mask, 0, 0, &h), 0);
	igt_assert_eq(qgpu_cb_init(&cb, dev.info.max_slots), 0);
	qgpu_cb_bind(&cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(&cb, 0, 0, 65536, 0x5a5a5a5a);
	for (i = 0; i < rounds; i++) {
		for (j = 0; j < 4; j++)
			c[j] = qs_ctx(fd);
		for (j = 0; j < 4; j++) {
			ret = qgpu_submit_wait(fd, c[j], &cb, 20 * SEC_NS, NULL);
			igt_assert_f(ret == 0, "churn submit: %s\n",
				     strerror(-ret));
		}
		for (j = 0; j < 4; j++)
			igt_assert_eq(qgpu_ctx_destroy(fd, c[j]), 0);
	}
	qgpu_cb_fini(&cb);
	qgpu_bo_destroy(fd, h);
	close(fd);
}

static uint64_t ctx_portions(int fd, uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	if (qgpu_query_context(fd, ctx, &cs))
		return 0;
	return cs.portions;
}

static void *ctx_destroy_fn(void *p)
{
	uint32_t *a = p;	/* fd, ctx, ret */

	a[2] = (uint32_t)qgpu_ctx_destroy((int)a[0], a[1]);
	return NULL;
}

static void *gem_close_fn(void *p)
{
	uint32_t *a = p;	/* fd, handle, ret */

	a[2] = (uint32_t)qgpu_bo_destroy((int)a[0], a[1]);
	return NULL;
}

/*
 * One held submit: returns after everything it made was closed again
 * (the userfaultfd region stays registered for the next round).
 */
static void uffd_once(struct qs_uffd *up, enum upos pos, enum uact act)
{
	struct drm_qgpu_sync_entry in[2], out[2], *inp, *outp;
	struct qgpu_cb *cb;
	struct usubmit s;
	struct qs_call call, dcall;
	uint32_t ctx, t, sa, sb, o1, o2, dargs[3], *map = NULL;
	bool ctx_gone = false, t_gone = false, sa_gone = false;
	bool o1_gone = false, o2_gone = false;
	uint64_t p0;
	int fd, i, st;

	qs_uffd_zap(up);	/* the second page is missing again */
	fd = qt_reopen(&dev);
	ctx = qs_ctx(fd);
	igt_assert_eq(qgpu_bo_create(fd, 65536, seg_mask, QGPU_GEM_CPU_ACCESS,
				     0, &t), 0);
	igt_assert_eq(qgpu_bo_reside(fd, t, QGPU_RESIDE_MAKE_RESIDENT, 0,
				     NULL), 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &sa), 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &sb), 0);
	igt_assert_eq(drmSyncobjSignal(fd, &sa, 1), 0);
	igt_assert_eq(drmSyncobjSignal(fd, &sb, 1), 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &o1), 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &o2), 0);

	cb = qt_cb(&dev);
	if (pos == U_OUTSYNCS) {
		/* a long walk between the two reads of the out-syncobjs */
		for (i = 0; i < 2000; i++)
			qgpu_cb_bind(cb, i % dev.info.max_slots, t, 0,
				     QGPU_CB_WHOLE);
	}
	qgpu_cb_bind(cb, 0, t, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, 65536, 0x77777777);
	qgpu_cb_fence(cb, 0, 8, 0x1234567890ull);
	if (pos == U_DMA) {
		/* 4 KiB: 512 bytes in the first page, the rest held */
		uint32_t left = 1024 - cb->ndw;

		qgpu_cb_nop(cb, left);
	}
	igt_assert_eq(cb->error, 0);

	memset(&s, 0, sizeof(s));
	s.fd = fd;
	qgpu_cb_to_submit(cb, ctx, &s.a);
	memset(in, 0, sizeof(in));
	memset(out, 0, sizeof(out));
	in[0].handle = sa;
	in[1].handle = sb;
	out[0].handle = o1;
	out[1].handle = o2;
	inp = in;
	outp = out;
	s.a.num_in_syncs = 1;
	s.a.num_out_syncs = 1;
	switch (pos) {
	case U_DMA:
		s.a.dma = (uintptr_t)qs_uffd_place(up, cb->dw, cb->ndw * 4, 512);
		break;
	case U_PATCHES:
		s.a.patches = (uintptr_t)qs_uffd_place(up, cb->patches,
						       cb->npatches * sizeof(*cb->patches),
						       16);
		break;
	case U_INSYNCS:
		inp = qs_uffd_place(up, in, sizeof(in), sizeof(in[0]));
		s.a.num_in_syncs = 2;
		break;
	case U_OUTSYNCS:
		outp = qs_uffd_place(up, out, sizeof(out), sizeof(out[0]));
		s.a.num_out_syncs = 2;
		break;
	}
	s.a.in_syncs = (uintptr_t)inp;
	s.a.out_syncs = (uintptr_t)outp;

	if (pos != U_OUTSYNCS) {
		qs_call_start(&call, usubmit_fn, &s);
		igt_assert_f(qs_uffd_wait_fault(up, 20),
			     "the submit did not fault on the held page\n");
	} else {
		/*
		 * Hold the second read: after the first read, drop the page
		 * again; a fault seen once the context counted the portion
		 * is the second read (the job is queued). Dropping the page
		 * can come too late (the second read found it): then the
		 * submit just completes, and the whole thing is tried again.
		 */
		bool held = false;
		int attempt, ev = 0;

		for (attempt = 0; attempt < 40 && !held; attempt++) {
			qs_uffd_zap(up);
			p0 = ctx_portions(fd, ctx);
			qs_call_start(&call, usubmit_fn, &s);
			for (ev = 0; ev < 500; ev++) {
				if (!qs_uffd_wait_fault_or(up, 20, &call.done))
					break;
				if (ctx_portions(fd, ctx) > p0) {
					held = true;
					break;
				}
				igt_assert_eq(qs_uffd_release(up), 0);
				qs_uffd_zap(up);
			}
			if (held)
				break;
			qs_uffd_release(up);
			igt_assert_f(qs_call_wait(&call, 30),
				     "the submit did not return\n");
			igt_assert_f(s.ret == 0, "unheld submit: %s\n",
				     strerror(-s.ret));
			igt_assert_eq(qs_wait_sync(fd, o1, 20), 0);
		}
		qs_note("second read held after %d attempt(s)\n", attempt + 1);
		if (!held) {
			qs_uffd_teardown(up);
			igt_skip("could not hold the submit at its second read of the out-syncobjs (%d attempts)\n",
				 attempt);
		}
	}
	igt_assert_f(!call.done, "the submit returned while held\n");
	qs_note("submit held in its copy of the %s (fault at %#llx)\n",
		 upos_name[pos], (unsigned long long)up->fault_addr);

	/* destroy something the held submit uses */
	switch (act) {
	case A_CTX:
		dargs[0] = fd;
		dargs[1] = ctx;
		dargs[2] = 0;
		qs_call_start(&dcall, ctx_destroy_fn, dargs);
		if (!qs_call_wait(&dcall, 20)) {
			qs_uffd_release(up);
			igt_assert_f(0, "CTX_DESTROY blocked while a submit was held\n");
		}
		igt_assert_eq((int)dargs[2], 0);
		ctx_gone = true;
		break;
	case A_GEM:
		dargs[0] = fd;
		dargs[1] = t;
		dargs[2] = 0;
		qs_call_start(&dcall, gem_close_fn, dargs);
		if (!qs_call_wait(&dcall, 20)) {
			qs_uffd_release(up);
			igt_assert_f(0, "GEM_CLOSE blocked while a submit was held\n");
		}
		igt_assert_eq((int)dargs[2], 0);
		t_gone = true;
		break;
	case A_SYNC:
		if (pos == U_OUTSYNCS) {
			/* the out-syncobj the queued job will signal */
			igt_assert_eq(qgpu_syncobj_destroy(fd, o2), 0);
			o2_gone = true;
		} else if (pos == U_INSYNCS) {
			/* an in-syncobj whose fence the submit already has */
			igt_assert_eq(qgpu_syncobj_destroy(fd, sa), 0);
			sa_gone = true;
		} else {
			/* both, before the submit looks them up */
			igt_assert_eq(qgpu_syncobj_destroy(fd, sa), 0);
			igt_assert_eq(qgpu_syncobj_destroy(fd, o1), 0);
			sa_gone = o1_gone = true;
		}
		break;
	}
	igt_assert_f(!call.done, "the submit returned while held\n");

	qs_note("releasing the fault\n");
	igt_assert_eq(qs_uffd_release(up), 0);
	igt_assert_f(qs_call_wait(&call, 30),
		     "the submit did not return after the fault was released\n");
	igt_info("%s while held in %s: submit returned %d (%s)\n",
		 uact_name[act], upos_name[pos], s.ret,
		 s.ret ? strerror(-s.ret) : "accepted");
	igt_assert_f(s.ret == 0 || s.ret == -ENOENT || s.ret == -ECANCELED,
		     "submit returned %s\n", strerror(-s.ret));
	if (s.ret == 0 && !o1_gone) {
		igt_assert_f(qs_wait_sync(fd, o1, 20) == 0,
			     "the accepted submit's fence did not signal\n");
		st = qs_sync_status(fd, o1);
		igt_info("its fence: %s\n", qs_status_name(st));
		if (!ctx_gone) {
			igt_assert_f(st == 1, "fence: %s\n", qs_status_name(st));
			if (!t_gone) {
				map = qt_map(fd, t, 65536);
				igt_assert_eq_u64(map[2], 0x34567890u);
				igt_assert_eq_u64(map[100], 0x77777777u);
				qt_unmap(fd, t, map, 65536);
			}
		}
	}
	if (!ctx_gone)
		igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
	if (!t_gone) {
		qt_untrack(fd, t, NULL);
		igt_assert_eq(qgpu_bo_destroy(fd, t), 0);
	}
	if (!sa_gone)
		qgpu_syncobj_destroy(fd, sa);
	qgpu_syncobj_destroy(fd, sb);
	if (!o1_gone)
		qgpu_syncobj_destroy(fd, o1);
	if (!o2_gone)
		qgpu_syncobj_destroy(fd, o2);
	close(fd);
	qt_cb_free(cb);
}

/*
 * Several rounds: a context freed while its entity stays queued (or any
 * other damage) is then much more likely to show within the subtest.
 */
static void uffd_subtest(enum upos pos, enum uact act)
{
	static struct qs_uffd u;
	struct qs_kmsg k;
	struct qs_base b;
	const char *why;
	int r;

	why = qs_uffd_setup(&u);
	igt_require_f(!why, "%s\n", why);
	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);
	for (r = 0; r < 6; r++)
		uffd_once(&u, pos, act);
	qs_uffd_teardown(&u);
	after_all(&k, &b);
}

/* ------------------------------------------------------------------------ */
/* A monitored fence destroyed by handle while it is being created          */

struct fence_race {
	int fd;
	volatile int stop;
	unsigned long destroyed;	/* MFENCE_DESTROY that found one */
	int bad;			/* an errno no ioctl may give */
};

/*
 * Handles are the lowest free ones: destroy 1 to 4 in turn, all along.
 * A fence created meanwhile (a context's, or MFENCE_CREATE's) may be
 * destroyed through its handle as soon as the handle exists; its creator
 * must already hold its own reference by then.
 */
static void *fence_destroyer(void *arg)
{
	struct fence_race *r = arg;
	struct drm_qgpu_mfence_destroy d = { 0 };
	uint32_t h = 0;

	while (!r->stop) {
		d.handle = 1 + (h++ & 3);
		if (!drmIoctl(r->fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d))
			r->destroyed++;
		else if (errno != ENOENT)
			r->bad = errno;
	}
	return NULL;
}

static void fence_create_vs_destroy(void)
{
	struct fence_race r = { 0 };
	struct drm_qgpu_ctx_create c;
	struct drm_qgpu_ctx_destroy cd = { 0 };
	struct drm_qgpu_mfence_create m;
	struct drm_qgpu_mfence_destroy md = { 0 };
	unsigned long rounds = 0;
	pthread_t th;
	double end;

	r.fd = qt_reopen(&dev);
	pthread_create(&th, NULL, fence_destroyer, &r);
	end = igt__elapsed() + 3;
	while (igt__elapsed() < end) {
		memset(&c, 0, sizeof(c));
		/* ids of contexts just destroyed may all be taken still */
		if (drmIoctl(r.fd, DRM_IOCTL_QGPU_CTX_CREATE, &c)) {
			igt_assert_eq(errno, ENOSPC);
			c.ctx = 0;
		}
		memset(&m, 0, sizeof(m));
		igt_assert_eq(drmIoctl(r.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &m),
			      0);
		/* the file's fences stay few: its own, if still there */
		md.handle = m.handle;
		if (drmIoctl(r.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &md))
			igt_assert_eq(errno, ENOENT);
		cd.ctx = c.ctx;
		if (c.ctx)
			igt_assert_eq(drmIoctl(r.fd, DRM_IOCTL_QGPU_CTX_DESTROY,
					       &cd), 0);
		else
			usleep(1000);
		rounds++;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	igt_info("%lu rounds, %lu fences destroyed by the other thread\n",
		 rounds, r.destroyed);
	igt_assert_f(!r.bad, "MFENCE_DESTROY: %s\n", strerror(r.bad));
	igt_assert(r.destroyed > 0);
	close(r.fd);
}

/* ------------------------------------------------------------------------ */

igt_main
{
	static int p, a;

	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		obs = qt_reopen(&dev);
		seg_mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE);
	}

	igt_subtest("ctx-destroy-vs-submit")
		stress_subtest(F_DESTROY_CTX | F_MISC, 150, 60, 1);

	igt_subtest("gem-close-vs-submit")
		stress_subtest(F_CLOSE_GEM | F_MISC, 150, 60, 2);

	igt_subtest("syncobj-destroy-vs-submit")
		stress_subtest(F_DESTROY_SYNC | F_MISC, 150, 100, 3);

	igt_subtest("fd-close-vs-submit")
		fd_close_subtest(2);

	igt_subtest("mfence-create-vs-destroy-by-handle")
		fence_create_vs_destroy();

	igt_subtest("all-at-once")
		stress_subtest(F_DESTROY_CTX | F_CLOSE_GEM | F_DESTROY_SYNC |
			       F_MISC, 150, 60, 4);

	for (p = U_DMA; p <= U_OUTSYNCS; p++)
		for (a = A_CTX; a <= A_SYNC; a++)
			igt_subtest_f("uffd-%s-%s", upos_name[p], uact_name[a])
				uffd_subtest(p, a);

	igt_fixture {
		close(obs);
		qgpu_close(&dev);
	}
}
