// SPDX-License-Identifier: MIT
/*
 * qgpu_fuzz: an ioctl fuzzer (rule L5).
 *
 * For every DRM_IOCTL_QGPU_* plus GEM_CLOSE, the PRIME handle ioctls, the
 * syncobj ioctls (create, destroy, wait, signal, timeline wait/signal,
 * query, reset, transfer, handle<->fd) and MODE_CREATE/MAP/DESTROY_DUMB, a
 * few thousand calls each with
 *  - boundary values (0, 1, max, max + 1, ~0, misaligned, huge counts),
 *  - pointers to NULL, unmapped pages, PROT_NONE and read-only pages,
 *    kernel and non-canonical addresses, arrays that run into an unmapped
 *    page, overlapping in/out arrays, the argument struct itself,
 *  - random values, and
 *  - hostile structured values: a valid call with one field wrong (every
 *    pad, every flag bit, every index one past the end); where the UAPI
 *    documents the answer (pad/flags -> EINVAL, ...) that errno is required
 *    and the call must have had no effect;
 *  - valid calls (contexts, allocations, DMA buffers with random but
 *    well-formed commands and patch lists) so that deeper paths run.
 * Every call must return 0 or a documented errno. Afterwards every handle
 * and context is closed and the global counters (allocations,
 * allocated_bytes, per-segment usage) must be back to the baseline taken at
 * the start; a summary line is printed.
 *
 * Subtests: render-node and primary-node (the same run on each node).
 * Arguments: seed=N (default 0x5eed), iters=N (calls per ioctl, default
 * 3000).
 */
#include "qgpu_stress.h"

#include <dirent.h>
#include <sys/time.h>

/* ------------------------------------------------------------------------ */
/* The ioctls                                                                */

enum {
	OP_QUERY, OP_GEM_CREATE, OP_GEM_LOCK, OP_GEM_UNLOCK, OP_GEM_RESIDE,
	OP_GEM_INFO, OP_SUBMIT, OP_CTX_CREATE, OP_CTX_DESTROY, OP_GEM_CLOSE,
	OP_PRIME_H2FD, OP_PRIME_FD2H, OP_SYNC_CREATE, OP_SYNC_DESTROY,
	OP_SYNC_WAIT, OP_SYNC_SIGNAL, OP_SYNC_TL_WAIT, OP_SYNC_TL_SIGNAL,
	OP_SYNC_QUERY, OP_SYNC_RESET, OP_SYNC_TRANSFER, OP_SYNC_H2FD,
	OP_SYNC_FD2H, OP_DUMB_CREATE, OP_DUMB_MAP, OP_DUMB_DESTROY, OP_RAW,
	NUM_OPS
};

static const char *const op_name[NUM_OPS] = {
	"QGPU_QUERY", "QGPU_GEM_CREATE", "QGPU_GEM_LOCK", "QGPU_GEM_UNLOCK",
	"QGPU_GEM_RESIDE", "QGPU_GEM_INFO", "QGPU_SUBMIT", "QGPU_CTX_CREATE",
	"QGPU_CTX_DESTROY", "GEM_CLOSE", "PRIME_HANDLE_TO_FD",
	"PRIME_FD_TO_HANDLE", "SYNCOBJ_CREATE", "SYNCOBJ_DESTROY",
	"SYNCOBJ_WAIT", "SYNCOBJ_SIGNAL", "SYNCOBJ_TIMELINE_WAIT",
	"SYNCOBJ_TIMELINE_SIGNAL", "SYNCOBJ_QUERY", "SYNCOBJ_RESET",
	"SYNCOBJ_TRANSFER", "SYNCOBJ_HANDLE_TO_FD", "SYNCOBJ_FD_TO_HANDLE",
	"MODE_CREATE_DUMB", "MODE_MAP_DUMB", "MODE_DESTROY_DUMB",
	"raw driver ioctl numbers",
};

/* errnos every ioctl may return (the UAPI's and the DRM core's) */
static const int base_errnos[] = {
	EINVAL, ENOENT, EFAULT, ENOSPC, EBUSY, ENOMEM, ECANCELED, EOVERFLOW,
	E2BIG, EPERM, EACCES, ENOTTY,
};

static bool errno_allowed(int op, int e)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(base_errnos); i++)
		if (e == base_errnos[i])
			return true;
	switch (op) {
	case OP_SYNC_WAIT:
	case OP_SYNC_TL_WAIT:
	case OP_SYNC_TRANSFER:	/* waits for a submit with WAIT_FOR_SUBMIT */
		/* timed out; interrupted by the fuzzer's own watchdog */
		return e == ETIME || e == EINTR;
	case OP_PRIME_H2FD:
	case OP_PRIME_FD2H:
		/* a file descriptor that is no dma-buf, or none at all */
		return e == ENOSYS || e == EBADF || e == EOPNOTSUPP;
	case OP_SYNC_H2FD:
	case OP_SYNC_FD2H:
		return e == EBADF;
	default:
		return false;
	}
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */

#define MAXBO	48
#define MAXCTX	6
#define MAXSYNC	24
#define SCRATCH	(2 * MiB)

struct fz {
	int fd;
	const struct qgpu_dev *dev;
	uint64_t seed;
	uint64_t max_alloc;
	/* live objects */
	uint32_t bo[MAXBO];
	uint64_t bo_size[MAXBO];
	int nbo;
	uint32_t ctx[MAXCTX];
	int nctx;
	uint32_t sync[MAXSYNC];
	bool sync_fence[MAXSYNC];
	int nsync;
	/* objects that were destroyed (for use-after-destroy values) */
	uint32_t dead_bo, dead_ctx, dead_sync;
	/* anchors for hostile calls: re-created when fuzzing destroyed them */
	uint32_t abo, actx;
	/* memory */
	uint8_t *rw;		/* SCRATCH bytes */
	uint8_t *ro;		/* 64 KiB, read-only */
	uint8_t *none;		/* PROT_NONE page */
	uint8_t *strad;		/* page followed by an unmapped page */
	uint8_t *gone;		/* an unmapped page */
	/* results */
	long calls[NUM_OPS], ok[NUM_OPS], err[NUM_OPS];
	long by_errno[160];
	int failures;
	char first[512];
};

static void fz_failf(struct fz *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fz_failf(struct fz *f, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (f->failures < 20)
		igt_warn("%s\n", buf);
	if (!f->failures)
		snprintf(f->first, sizeof(f->first), "%s", buf);
	f->failures++;
}

static uint64_t R(struct fz *f)
{
	return qs_rand(&f->seed);
}

static uint32_t R32(struct fz *f)
{
	return (uint32_t)R(f);
}

/* true with probability 1/n */
static bool one_in(struct fz *f, unsigned int n)
{
	return R(f) % n == 0;
}

static uint64_t pick64(struct fz *f, const uint64_t *v, size_t n)
{
	return v[R(f) % n];
}

/* Boundary-flavoured random 32-bit value around @max. */
static uint32_t b32(struct fz *f, uint32_t max)
{
	switch (R(f) % 10) {
	case 0: return 0;
	case 1: return 1;
	case 2: return max;
	case 3: return max + 1;
	case 4: return ~0u;
	case 5: return max ? max - 1 : 0;
	case 6: return 1u << (R(f) % 32);
	case 7: return (uint32_t)R(f);
	case 8: return max ? (uint32_t)(R(f) % (max + 1ull)) : 0;
	default: return 0x80000000u;
	}
}

static uint64_t b64(struct fz *f, uint64_t max)
{
	switch (R(f) % 10) {
	case 0: return 0;
	case 1: return 1;
	case 2: return max;
	case 3: return max + 1;
	case 4: return ~0ull;
	case 5: return max ? max - 1 : 0;
	case 6: return 1ull << (R(f) % 64);
	case 7: return R(f);
	case 8: return max ? R(f) % max : 0;
	default: return 1ull << 63;
	}
}

/* ------------------------------------------------------------------------ */
/* Pointers                                                                  */

enum { P_GOOD, P_NULL, P_SMALL, P_GONE, P_NONE, P_RO, P_KERNEL,
       P_NONCANON, P_MAX, P_MISALIGNED, P_STRAD, NUM_P };

/*
 * A user pointer of kind @k for @len bytes of @data (copied where the kind
 * has readable memory). P_GOOD and P_MISALIGNED hold the data in the
 * scratch buffer at @off.
 */
static uint64_t fz_ptr(struct fz *f, int k, const void *data, size_t len,
		       size_t off)
{
	uint8_t *p;

	switch (k) {
	case P_GOOD:
	case P_MISALIGNED:
		p = f->rw + off + (k == P_MISALIGNED ? 1 + R(f) % 3 : 0);
		if (len > SCRATCH - off - 4)
			len = SCRATCH - off - 4;
		if (data && len && p != data)
			memmove(p, data, len);
		return (uintptr_t)p;
	case P_NULL:
		return 0;
	case P_SMALL:
		return 16 + R(f) % 4096;
	case P_GONE:
		return (uintptr_t)f->gone;
	case P_NONE:
		return (uintptr_t)f->none;
	case P_RO:
		mprotect(f->ro, 65536, PROT_READ | PROT_WRITE);
		if (data && len)
			memcpy(f->ro, data, len < 65536 ? len : 65536);
		mprotect(f->ro, 65536, PROT_READ);
		return (uintptr_t)f->ro;
	case P_KERNEL:
		return one_in(f, 2) ? 0xffff888000000000ull :
		       0xffffffff81000000ull;
	case P_NONCANON:
		return 0x8000000000000000ull | (R(f) & 0xfffff000);
	case P_MAX:
		return ~0ull - (R(f) % 64);
	default:	/* the start in the last bytes before an unmapped page */
		p = f->strad + 4096 - (len > 1 ? 1 + R(f) % (len < 4096 ? len - 1 : 4095) : 1);
		if (data && len)
			memcpy(p, data, (size_t)(f->strad + 4096 - p));
		return (uintptr_t)p;
	}
}

/* Mostly good pointers, sometimes any kind. */
static int ptr_kind(struct fz *f, unsigned int bad_one_in)
{
	return one_in(f, bad_one_in) ? (int)(R(f) % NUM_P) : P_GOOD;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                     */

#define EXPECT_ANY	0		/* 0 or an allowed errno */
#define EXPECT_FAIL	(-1)		/* an allowed errno, not 0 */

static volatile sig_atomic_t alarmed;
static volatile int cur_op = -1;

/* The fuzzer itself crashed: say where, then die as before. */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "fuzzer crashed (signal %d, address %p) in op %d (%s)\n",
		     sig, si->si_addr, cur_op,
		     cur_op >= 0 && cur_op < NUM_OPS ? op_name[cur_op] : "-");
	if (n > 0 && write(STDOUT_FILENO, buf, (size_t)n) < 0)
		n = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

/*
 * One ioctl. @expect: EXPECT_ANY, EXPECT_FAIL or a specific errno.
 * Returns 0 or the errno.
 */
static int fz_call(struct fz *f, int op, unsigned long req, uint64_t arg,
		   int expect, const char *what)
{
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	struct itimerval off = { 0 };
	bool wait = op == OP_SYNC_WAIT || op == OP_SYNC_TL_WAIT ||
		    op == OP_SYNC_TRANSFER;
	int ret, e;

	if (wait)
		setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	ret = ioctl(f->fd, req, (void *)(uintptr_t)arg);
	e = ret ? errno : 0;
	if (wait)
		setitimer(ITIMER_REAL, &off, NULL);
	f->calls[op]++;
	if (e) {
		f->err[op]++;
		if (e > 0 && e < (int)ARRAY_SIZE(f->by_errno))
			f->by_errno[e]++;
	} else {
		f->ok[op]++;
	}
	if (ret != 0 && ret != -1)
		fz_failf(f, "%s (%s): returned %d", op_name[op], what, ret);
	else if (e && !errno_allowed(op, e))
		fz_failf(f, "%s (%s): undocumented errno %d (%s)", op_name[op],
			 what, e, strerror(e));
	else if (expect == EXPECT_FAIL && !e)
		fz_failf(f, "%s (%s): accepted, must fail", op_name[op], what);
	else if (expect > 0 && e != expect &&
		 !(op == OP_SUBMIT && e == ECANCELED))
		/* (a context can be lost by an earlier job at any time) */
		fz_failf(f, "%s (%s): returned %s, must be %s", op_name[op],
			 what, e ? strerror(e) : "success", strerror(expect));
	return e;
}

/* The argument struct itself: mostly good, sometimes a bad pointer. */
static uint64_t argp(struct fz *f, void *arg, size_t len, int *kind)
{
	int k = one_in(f, 12) ? (int)(R(f) % NUM_P) : P_GOOD;

	*kind = k;
	if (k == P_GOOD)
		return (uintptr_t)arg;
	if (k == P_MISALIGNED) {
		/* the same struct at an odd address */
		uint8_t *p = f->rw + SCRATCH - 4096 + 1;

		memcpy(p, arg, len);
		return (uintptr_t)p;
	}
	return fz_ptr(f, k, arg, len, 0);
}

/* Expectation for a call whose argument pointer is of kind @k. */
static int arg_expect(int k, int expect)
{
	switch (k) {
	case P_GOOD:
	case P_MISALIGNED:
		return expect;
	case P_RO:
	case P_STRAD:
		return EXPECT_ANY;	/* maybe done, then EFAULT */
	default:
		return EFAULT;
	}
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                     */

static uint32_t any_bo(struct fz *f)
{
	switch (R(f) % 12) {
	case 0: return 0;
	case 1: return f->dead_bo;
	case 2: return ~0u;
	case 3: return R32(f);
	case 4: return 1 + R(f) % 64;
	default: return f->nbo ? f->bo[R(f) % f->nbo] : f->abo;
	}
}

static uint32_t any_ctx(struct fz *f)
{
	switch (R(f) % 12) {
	case 0: return 0;
	case 1: return f->dead_ctx;
	case 2: return ~0u;
	case 3: return f->dev->info.max_contexts;
	case 4: return R32(f);
	case 5: return 1 + R(f) % f->dev->info.max_contexts;
	default: return f->nctx ? f->ctx[R(f) % f->nctx] : f->actx;
	}
}

static uint32_t any_sync(struct fz *f)
{
	switch (R(f) % 10) {
	case 0: return 0;
	case 1: return f->dead_sync;
	case 2: return ~0u;
	case 3: return R32(f);
	default: return f->nsync ? f->sync[R(f) % f->nsync] : 0;
	}
}

static void forget_bo(struct fz *f, uint32_t h)
{
	int i;

	for (i = 0; i < f->nbo; i++)
		if (f->bo[i] == h) {
			f->bo[i] = f->bo[--f->nbo];
			f->bo_size[i] = f->bo_size[f->nbo];
			f->dead_bo = h;
			return;
		}
}

static void forget_ctx(struct fz *f, uint32_t c)
{
	int i;

	for (i = 0; i < f->nctx; i++)
		if (f->ctx[i] == c) {
			f->ctx[i] = f->ctx[--f->nctx];
			f->dead_ctx = c;
			return;
		}
}

static void forget_sync(struct fz *f, uint32_t s)
{
	int i;

	for (i = 0; i < f->nsync; i++)
		if (f->sync[i] == s) {
			f->sync[i] = f->sync[--f->nsync];
			f->sync_fence[i] = f->sync_fence[f->nsync];
			f->dead_sync = s;
			return;
		}
}

static bool bo_alive(struct fz *f, uint32_t h)
{
	struct drm_qgpu_gem_info gi;

	return h && qgpu_bo_info(f->fd, h, &gi) == 0;
}

static bool sync_alive(struct fz *f, uint32_t h)
{
	return h && !(drmSyncobjQuery(f->fd, &h, (uint64_t[]){ 0 }, 1) &&
		      errno == ENOENT);
}

/*
 * Values that name no object of this file right now (raw ioctls can create
 * objects the pools do not know, and ids are reused): checked, not assumed.
 */
static uint32_t dead_bo(struct fz *f)
{
	return f->dead_bo && !bo_alive(f, f->dead_bo) ? f->dead_bo : 0x7fffffff;
}

static uint32_t dead_ctx(struct fz *f)
{
	struct drm_qgpu_context_status cs;

	return f->dead_ctx && qgpu_query_context(f->fd, f->dead_ctx, &cs) ==
	       -ENOENT ? f->dead_ctx : ~0u;
}

static uint32_t dead_sync(struct fz *f)
{
	uint32_t h = f->dead_sync;

	return h && drmSyncobjQuery(f->fd, &h, (uint64_t[]){ 0 }, 1) &&
	       errno == ENOENT ? h : 0x7ffffff0;
}

static void add_bo(struct fz *f, uint32_t h, uint64_t size)
{
	forget_bo(f, h);	/* a handle number can come back */
	if (size > 4 * MiB || f->nbo == MAXBO) {
		/* keep the pool small: close big ones and the overflow */
		if (f->nbo == MAXBO && size <= 4 * MiB) {
			uint32_t old = f->bo[0];

			forget_bo(f, old);
			qgpu_bo_destroy(f->fd, old);
		} else {
			qgpu_bo_destroy(f->fd, h);
			f->dead_bo = h;
			return;
		}
	}
	f->bo[f->nbo] = h;
	f->bo_size[f->nbo] = size;
	f->nbo++;
}

static void add_ctx(struct fz *f, uint32_t c)
{
	forget_ctx(f, c);
	if (f->nctx == MAXCTX) {
		uint32_t old = f->ctx[0];

		forget_ctx(f, old);
		qgpu_ctx_destroy(f->fd, old);
	}
	f->ctx[f->nctx++] = c;
}

static void add_sync(struct fz *f, uint32_t s, bool fence)
{
	forget_sync(f, s);
	if (f->nsync == MAXSYNC) {
		uint32_t old = f->sync[0];

		forget_sync(f, old);
		qgpu_syncobj_destroy(f->fd, old);
	}
	f->sync_fence[f->nsync] = fence;
	f->sync[f->nsync++] = s;
}

static uint64_t size_of_bo(struct fz *f, uint32_t h)
{
	struct drm_qgpu_gem_info gi;

	return qgpu_bo_info(f->fd, h, &gi) ? 0 : gi.size;
}

/* The anchors hostile calls start from exist (fuzzing may destroy them). */
static void anchors(struct fz *f)
{
	struct drm_qgpu_context_status cs;

	if (!bo_alive(f, f->abo)) {
		f->abo = 0;
		qgpu_bo_create(f->fd, 65536, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			       QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0, &f->abo);
		qgpu_bo_reside(f->fd, f->abo, QGPU_RESIDE_MAKE_RESIDENT, 0,
			       NULL);
	}
	if (!f->actx || qgpu_query_context(f->fd, f->actx, &cs) ||
	    cs.state != QGPU_CTX_OK) {
		if (f->actx)
			qgpu_ctx_destroy(f->fd, f->actx);
		f->actx = 0;
		if (qs_ctx_create(f->fd, &f->actx)) {
			/* all context ids taken: free ours */
			while (f->nctx) {
				uint32_t c = f->ctx[0];

				forget_ctx(f, c);
				qgpu_ctx_destroy(f->fd, c);
			}
			qs_ctx_create(f->fd, &f->actx);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* QGPU_QUERY                                                                */

static uint32_t query_need(struct fz *f, uint32_t type)
{
	switch (type) {
	case QGPU_QUERY_DEVICE:
		return sizeof(struct drm_qgpu_device_info);
	case QGPU_QUERY_SEGMENTS:
		return f->dev->nsegs * sizeof(struct drm_qgpu_segment);
	case QGPU_QUERY_STATS:
		return sizeof(struct drm_qgpu_stats) +
		       f->dev->nsegs * sizeof(struct drm_qgpu_segment_stats);
	case QGPU_QUERY_FILE_STATS:
		return sizeof(struct drm_qgpu_stats);
	default:
		return sizeof(struct drm_qgpu_context_status);
	}
}

static void fz_query(struct fz *f)
{
	struct drm_qgpu_query q;
	int mode = R(f) % 4, k, expect = EXPECT_ANY;
	uint32_t type = 1 + R(f) % 5, need = query_need(f, type);
	const char *what = "random";
	uint64_t a;

	memset(&q, 0, sizeof(q));
	if (mode == 0) {
		/* valid two-call pattern, must succeed */
		q.type = type;
		q.arg = type == QGPU_QUERY_CONTEXT ? f->actx : 0;
		q.size = need + (R(f) % 2) * (R(f) % 64);
		q.ptr = (uintptr_t)f->rw;
		expect = type == QGPU_QUERY_CONTEXT ? EXPECT_ANY : 0;
		what = "valid";
		if (one_in(f, 3)) {
			q.ptr = 0;
			q.size = 0;
		}
	} else if (mode == 1) {
		/* hostile: one field wrong */
		q.type = type;
		q.arg = type == QGPU_QUERY_CONTEXT ? f->actx : 0;
		q.size = need;
		q.ptr = (uintptr_t)f->rw;
		switch (R(f) % 6) {
		case 0:
			q.type = pick64(f, (const uint64_t[]){ 0, 9, 10, 0xff, ~0u }, 5);
			expect = EINVAL;
			what = "bad type";
			break;
		case 1:
			if (type == QGPU_QUERY_CONTEXT) {
				q.arg = dead_ctx(f);
				expect = ENOENT;
				what = "dead context";
			} else {
				q.arg = 1u << (R(f) % 32);
				expect = EINVAL;
				what = "arg not zero";
			}
			break;
		case 2:
			q.size = need - 1 - (uint32_t)(R(f) % need);
			expect = ENOSPC;
			what = "size too small";
			break;
		case 3:
			/* (a NULL ptr asks for the size only) */
			k = 2 + (int)(R(f) % (NUM_P - 2));
			q.ptr = fz_ptr(f, k, NULL, need, 0);
			expect = k == P_MISALIGNED ? EXPECT_ANY :
				 type == QGPU_QUERY_CONTEXT ? EXPECT_ANY : EFAULT;
			what = "bad ptr";
			break;
		case 4:
			/* the answer written over the query struct itself */
			q.ptr = (uintptr_t)f->rw;
			memcpy(f->rw, &q, sizeof(q));
			a = (uintptr_t)f->rw;
			fz_call(f, OP_QUERY, DRM_IOCTL_QGPU_QUERY, a,
				EXPECT_ANY, "ptr == the argument");
			return;
		default:
			q.size = ~0u;
			what = "huge size";
			expect = type == QGPU_QUERY_CONTEXT ? EXPECT_ANY : 0;
			break;
		}
	} else {
		q.type = one_in(f, 2) ? type : b32(f, 5);
		q.arg = one_in(f, 2) ? 0 : b32(f, f->dev->info.max_contexts);
		q.size = b32(f, need);
		q.ptr = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 4096, 0);
	}
	a = argp(f, &q, sizeof(q), &k);
	fz_call(f, OP_QUERY, DRM_IOCTL_QGPU_QUERY, a, arg_expect(k, expect),
		what);
}

/* ------------------------------------------------------------------------ */
/* Allocations                                                               */

static uint32_t valid_mask(struct fz *f)
{
	uint32_t m = 0;

	while (!m) {
		m = R32(f) & QGPU_SEG_MASK_ALL;
		if (!qgpu_dev_segment(f->dev, QGPU_SEG_LOCAL))
			m &= ~QGPU_SEGBIT(QGPU_SEG_LOCAL);
	}
	return m;
}

static void fz_gem_create(struct fz *f)
{
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, 65536,
					  262144, 1048576 };
	struct drm_qgpu_gem_create c;
	int mode = R(f) % 4, k, expect = EXPECT_ANY, e;
	const char *what = "random";
	uint64_t a;

	memset(&c, 0, sizeof(c));
	c.size = pick64(f, sizes, ARRAY_SIZE(sizes));
	c.segment_mask = valid_mask(f);
	c.flags = R(f) % 2 ? QGPU_GEM_CPU_ACCESS : 0;
	if (c.flags && (c.segment_mask & QGPU_SEGBIT(QGPU_SEG_LOCAL)))
		c.segment_mask |= QGPU_SEGBIT(QGPU_SEG_APERTURE);
	if (mode == 0) {
		what = "valid";
		if (one_in(f, 2)) {
			/* a preferred order within the set */
			uint32_t id;

			for (id = 1; id <= QGPU_SEG_MAX; id++)
				if (c.segment_mask & QGPU_SEGBIT(id)) {
					c.preferred = id;
					break;
				}
		}
	} else if (mode == 1) {
		expect = EINVAL;
		switch (R(f) % 7) {
		case 0: {
			/* a bit that is not one of QGPU_GEM_CREATE_FLAGS */
			uint32_t bit;

			do
				bit = 1u << (R(f) % 32);
			while (bit & QGPU_GEM_CREATE_FLAGS);
			c.flags |= bit;
			what = "unknown flag";
			break;
		}
		case 1:
			c.size = 0;
			what = "size 0";
			break;
		case 2:
			c.size = pick64(f, (const uint64_t[]){ f->max_alloc + 1,
				~0ull, 1ull << 63, ~0ull - 4095 }, 4);
			what = "size too big";
			break;
		case 3:
			c.segment_mask = pick64(f, (const uint64_t[]){ 0, 1, 1u << 4,
				1u << 31, ~0u }, 5);
			what = "bad segment mask";
			break;
		case 4:
			c.handle = 1 + R32(f) % 1000;
			what = "handle not zero";
			break;
		case 5:
			/* an id outside the set, or after the terminator */
			c.segment_mask = QGPU_SEGBIT(QGPU_SEG_APERTURE);
			c.flags = 0;
			c.preferred = one_in(f, 2) ? QGPU_SEG_VISIBLE :
				      QGPU_SEG_APERTURE << 8;
			what = "bad preferred";
			break;
		default:
			c.preferred = 4 + R32(f) % 250;
			what = "preferred id > max";
			break;
		}
	} else {
		c.size = b64(f, f->max_alloc);
		c.segment_mask = b32(f, QGPU_SEG_MASK_ALL);
		c.flags = b32(f, QGPU_GEM_CREATE_FLAGS);
		c.preferred = one_in(f, 2) ? 0 : R32(f);
		if (one_in(f, 4))
			c.handle = R32(f);
	}
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_GEM_CREATE, DRM_IOCTL_QGPU_GEM_CREATE, a,
		    arg_expect(k, expect), what);
	if (!e && (k == P_GOOD || k == P_MISALIGNED)) {
		struct drm_qgpu_gem_create *r = (void *)(uintptr_t)a;

		add_bo(f, r->handle, size_of_bo(f, r->handle));
		if (one_in(f, 2))
			qgpu_bo_reside(f->fd, r->handle,
				       QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	}
}

static void fz_gem_lock(struct fz *f, bool unlock)
{
	struct drm_qgpu_gem_lock l;
	struct drm_qgpu_gem_info before, after;
	int mode = R(f) % 3, k, expect = EXPECT_ANY, op;
	const char *what = "random";
	bool check = false;
	uint64_t a;

	op = unlock ? OP_GEM_UNLOCK : OP_GEM_LOCK;
	memset(&l, 0, sizeof(l));
	l.handle = any_bo(f);
	if (mode == 1) {
		anchors(f);
		l.handle = f->abo;
		l.flags = 1u << (R(f) % 32);
		expect = EINVAL;
		what = "flag bit";
		check = qgpu_bo_info(f->fd, f->abo, &before) == 0;
	} else if (mode == 2) {
		l.flags = b32(f, 0);
		l.offset = R(f);
	} else {
		what = "valid";
	}
	a = argp(f, &l, unlock ? sizeof(struct drm_qgpu_gem_unlock) :
		 sizeof(l), &k);
	fz_call(f, op, unlock ? DRM_IOCTL_QGPU_GEM_UNLOCK :
		DRM_IOCTL_QGPU_GEM_LOCK, a, arg_expect(k, expect), what);
	/* a rejected call changed nothing */
	if (check && (k == P_GOOD || k == P_MISALIGNED) &&
	    qgpu_bo_info(f->fd, f->abo, &after) == 0 &&
	    after.lock_count != before.lock_count)
		fz_failf(f, "%s with a bad flag changed the lock count %u -> %u",
			 op_name[op], before.lock_count, after.lock_count);
}

static void fz_gem_reside(struct fz *f)
{
	struct drm_qgpu_gem_reside r;
	int mode = R(f) % 3, k, expect = EXPECT_ANY;
	const char *what = "random";
	uint64_t a;

	memset(&r, 0, sizeof(r));
	r.handle = any_bo(f);
	r.op = 1 + R(f) % 3;
	r.segment = r.op == QGPU_RESIDE_MAKE_RESIDENT ? R(f) % 4 : 0;
	if (r.segment == QGPU_SEG_LOCAL &&
	    !qgpu_dev_segment(f->dev, QGPU_SEG_LOCAL))
		r.segment = 0;
	if (mode == 0) {
		what = "valid";
	} else if (mode == 1) {
		anchors(f);
		r.handle = f->abo;
		expect = EINVAL;
		switch (R(f) % 4) {
		case 0:
			r.flags = 1u << (R(f) % 32);
			what = "flag bit";
			break;
		case 1:
			r.op = pick64(f, (const uint64_t[]){ 0, 4, 5, ~0u, 0x80000001u }, 5);
			what = "bad op";
			break;
		case 2:
			r.op = QGPU_RESIDE_MAKE_RESIDENT;
			r.segment = QGPU_SEG_MAX + 1 + R32(f) % 1000;
			what = "segment > max";
			break;
		default:
			r.op = 2 + R(f) % 2;
			r.segment = 1 + R(f) % 3;
			what = "segment with EVICT";
			break;
		}
	} else {
		r.op = b32(f, 3);
		r.segment = b32(f, 3);
		r.flags = one_in(f, 3) ? R32(f) : 0;
	}
	a = argp(f, &r, sizeof(r), &k);
	fz_call(f, OP_GEM_RESIDE, DRM_IOCTL_QGPU_GEM_RESIDE, a,
		arg_expect(k, expect), what);
}

static void fz_gem_info(struct fz *f)
{
	struct drm_qgpu_gem_info gi;
	int k;
	uint64_t a;

	memset(&gi, 0, sizeof(gi));
	gi.handle = any_bo(f);
	if (one_in(f, 3)) {
		/* output fields hold garbage on input */
		gi.segment = R32(f);
		gi.size = R(f);
		gi.flags = R32(f);
	}
	a = argp(f, &gi, sizeof(gi), &k);
	fz_call(f, OP_GEM_INFO, DRM_IOCTL_QGPU_GEM_INFO, a,
		arg_expect(k, EXPECT_ANY), "info");
}

static void fz_gem_close(struct fz *f)
{
	struct drm_gem_close c;
	int k, e;
	uint64_t a;

	memset(&c, 0, sizeof(c));
	c.handle = one_in(f, 3) ? any_bo(f) :
		   f->nbo > 8 ? f->bo[R(f) % f->nbo] : f->dead_bo;
	if (one_in(f, 4))
		c.pad = R32(f);
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_GEM_CLOSE, DRM_IOCTL_GEM_CLOSE, a,
		    arg_expect(k, EXPECT_ANY), "close");
	if (!e || !bo_alive(f, c.handle))
		forget_bo(f, c.handle);
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */

static void fz_ctx_create(struct fz *f)
{
	struct drm_qgpu_ctx_create c;
	int k, e, expect = EXPECT_ANY;
	const char *what = "valid";
	uint64_t a;

	memset(&c, 0, sizeof(c));
	if (one_in(f, 2)) {
		/* bit 0 (QGPU_CTX_CREATE_VIRTUAL) is the one known flag */
		c.flags = 1u << (1 + R(f) % 31);
		expect = EINVAL;
		what = "flag bit";
	} else if (one_in(f, 4)) {
		c.ctx = R32(f);		/* an output: ignored on input */
	}
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_CTX_CREATE, DRM_IOCTL_QGPU_CTX_CREATE, a,
		    arg_expect(k, expect), what);
	if (!e && (k == P_GOOD || k == P_MISALIGNED))
		add_ctx(f, ((struct drm_qgpu_ctx_create *)(uintptr_t)a)->ctx);
	if (e == ENOSPC && f->nctx) {
		/* all ids taken: give some back */
		uint32_t old = f->ctx[0];

		forget_ctx(f, old);
		qgpu_ctx_destroy(f->fd, old);
	}
}

static void fz_ctx_destroy(struct fz *f)
{
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_ctx_destroy d;
	int k, e, expect = EXPECT_ANY;
	const char *what = "random";
	uint64_t a;
	bool hostile = one_in(f, 2);

	memset(&d, 0, sizeof(d));
	d.ctx = any_ctx(f);
	if (hostile) {
		anchors(f);
		d.ctx = f->actx;
		d.pad = 1u << (R(f) % 32);
		expect = EINVAL;
		what = "pad not zero";
	}
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_CTX_DESTROY, DRM_IOCTL_QGPU_CTX_DESTROY, a,
		    arg_expect(k, expect), what);
	if (hostile && (k == P_GOOD || k == P_MISALIGNED) &&
	    qgpu_query_context(f->fd, f->actx, &cs))
		fz_failf(f, "CTX_DESTROY with a non-zero pad destroyed the context");
	if (!e)
		forget_ctx(f, d.ctx);
	if (!e && d.ctx == f->actx)
		f->actx = 0;
}

/* ------------------------------------------------------------------------ */
/* Submit                                                                    */

/* Random well-formed commands on slots bound to pool allocations. */
static void build_valid(struct fz *f, struct qgpu_cb *cb, uint32_t *bound_size,
			int ncmd)
{
	uint32_t slots = f->dev->info.max_slots, s, s2, n, sz;
	int c;

	memset(bound_size, 0, sizeof(uint32_t) * slots);
	for (c = 0; c < ncmd; c++) {
		s = R32(f) % slots;
		s2 = R32(f) % slots;
		switch (R(f) % 11) {
		case 0:
		case 1: {
			uint32_t h = f->nbo && !one_in(f, 4) ?
				     f->bo[R(f) % f->nbo] : f->abo;
			uint64_t size = size_of_bo(f, h);

			if (!size)
				break;
			if (one_in(f, 8)) {
				qgpu_cb_unbind(cb, s);
				bound_size[s] = 0;
				break;
			}
			qgpu_cb_bind_flags(cb, s, h, 0, QGPU_CB_WHOLE,
					   R(f) % 4 ? QGPU_ALLOC_WRITE : 0);
			bound_size[s] = size > 0xffffffffull ? 0xfffff000u :
					(uint32_t)size;
			break;
		}
		case 2:
			sz = bound_size[s] ? (R32(f) % bound_size[s]) & ~3u : 4;
			qgpu_cb_fill(cb, s, 0, sz, R32(f));
			break;
		case 3:
			sz = bound_size[s] < bound_size[s2] ? bound_size[s] :
			     bound_size[s2];
			sz = sz ? R32(f) % sz : 4;
			qgpu_cb_copy(cb, s, 0, s2, 0, sz);
			break;
		case 4:
			n = (bound_size[s] < bound_size[s2] ? bound_size[s] :
			     bound_size[s2]) / 4;
			n = n ? R32(f) % n : 1;
			if (R(f) % 2)
				qgpu_cb_add(cb, s, 0, s2, 0, s, 0, n);
			else
				qgpu_cb_xor(cb, s, 0, s2, 0, s2, 0, n);
			break;
		case 5:
			sz = bound_size[s] > 8 ? (R32(f) % (bound_size[s] - 8)) & ~3u : 0;
			qgpu_cb_checksum(cb, s, 0, sz, s, sz & ~7u);
			break;
		case 6:
			qgpu_cb_fence(cb, s, bound_size[s] > 8 ?
				      (R32(f) % (bound_size[s] - 8)) & ~7u :
				      8 * (R32(f) % 4), R(f));
			break;
		case 7:
			/* satisfied at once: never blocks the engine */
			qgpu_cb_wait(cb, s, 0, 0);
			break;
		case 8:
			qgpu_cb_timestamp(cb, s, bound_size[s] > 8 ?
					  (R32(f) % (bound_size[s] - 8)) & ~7u : 0);
			break;
		case 9:
			qgpu_cb_nop(cb, 1 + R32(f) % 8);
			break;
		default:
			qgpu_cb_split_point(cb);
			break;
		}
	}
}

static int fill_syncs(struct fz *f, struct drm_qgpu_sync_entry *e, int max,
		      bool in)
{
	int n = (int)(R(f) % (max + 1)), i, j;

	for (i = 0; i < n; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		if (!f->nsync)
			return i;
		j = (int)(R(f) % f->nsync);
		if (in && !f->sync_fence[j] && !one_in(f, 8))
			return i;
		e[i].handle = f->sync[j];
	}
	return n;
}

static void fz_submit(struct fz *f)
{
	struct drm_qgpu_sync_entry ins[8], outs[8];
	static uint32_t bound[4096];
	struct drm_qgpu_submit s;
	struct qgpu_cb cb;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, i;
	const char *what = "valid";
	uint64_t a;
	size_t off;

	anchors(f);
	igt_assert_eq(qgpu_cb_init(&cb, f->dev->info.max_slots), 0);
	if (mode == 3) {
		/* random bytes everywhere */
		memset(&s, 0, sizeof(s));
		s.dma = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 4096, 0);
		s.dma_size = b32(f, QGPU_MAX_DMA_SIZE);
		s.ctx = any_ctx(f);
		s.allocs = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 4096, 65536);
		s.num_allocs = b32(f, QGPU_MAX_ALLOCS);
		s.num_patches = b32(f, QGPU_MAX_PATCHES);
		s.patches = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 4096, 131072);
		s.in_syncs = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 1024, 196608);
		s.out_syncs = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 1024, 200704);
		s.num_in_syncs = b32(f, QGPU_MAX_SYNCS);
		s.num_out_syncs = b32(f, QGPU_MAX_SYNCS);
		s.flags = one_in(f, 4) ? R32(f) : 0;
		for (off = 0; off < 262144; off += 8)
			*(uint64_t *)(f->rw + off) = one_in(f, 4) ? R(f) :
				R(f) % 64;
		what = "random";
		goto call;
	}
	build_valid(f, &cb, bound, 1 + (int)(R(f) % 24));
	if (one_in(f, 16)) {
		/* a big buffer */
		uint32_t left = (R32(f) % (QGPU_MAX_DMA_SIZE / 4 - cb.ndw));

		while (left) {
			uint32_t n = left > 0xffff ? 0xffff : left;

			qgpu_cb_nop(&cb, n);
			left -= n;
		}
	}
	if (!cb.ndw)
		qgpu_cb_nop(&cb, 1);
	if (cb.error) {
		qgpu_cb_fini(&cb);
		return;
	}
	qgpu_cb_to_submit(&cb, f->nctx && one_in(f, 2) ?
			  f->ctx[R(f) % f->nctx] : f->actx, &s);
	s.num_in_syncs = fill_syncs(f, ins, 4, true);
	s.num_out_syncs = fill_syncs(f, outs, 4, false);
	s.in_syncs = (uintptr_t)ins;
	s.out_syncs = (uintptr_t)outs;
	if (mode == 1) {
		/* hostile: one field wrong (on a live context) */
		s.ctx = f->actx;
		expect = EXPECT_FAIL;
		switch (R(f) % 20) {
		case 0:
			s.flags = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "flag bit";
			break;
		case 1:
			s.dma_size = pick64(f, (const uint64_t[]){ 0, 2, 1, 3,
				QGPU_MAX_DMA_SIZE + 4, 0xfffffffcu,
				s.dma_size + 2 }, 7);
			expect = EINVAL;
			what = "bad dma_size";
			break;
		case 2:
			s.ctx = pick64(f, (const uint64_t[]){ 0, ~0u,
				f->dev->info.max_contexts, dead_ctx(f) }, 4);
			expect = ENOENT;
			what = "bad ctx";
			break;
		case 3:
			s.num_allocs = one_in(f, 2) ? QGPU_MAX_ALLOCS + 1 : ~0u;
			expect = EINVAL;
			what = "num_allocs > max";
			break;
		case 4:
			s.num_patches = one_in(f, 2) ? QGPU_MAX_PATCHES + 1 :
					s.dma_size / 4 + 1;
			expect = EINVAL;
			what = "num_patches > max";
			break;
		case 5:
			s.num_in_syncs = QGPU_MAX_SYNCS + 1;
			s.in_syncs = (uintptr_t)f->rw;
			expect = EINVAL;
			what = "num_in_syncs > max";
			break;
		case 6:
			s.num_out_syncs = QGPU_MAX_SYNCS + 1;
			s.out_syncs = (uintptr_t)f->rw;
			expect = EINVAL;
			what = "num_out_syncs > max";
			break;
		case 7:
			if (!cb.nallocs)
				goto overlap;
			cb.allocs[R(f) % cb.nallocs].flags |= 1u << (1 + R(f) % 31);
			expect = EINVAL;
			what = "alloc entry flag";
			break;
		case 8:
			if (!cb.npatches)
				goto overlap;
			i = (int)(R(f) % cb.npatches);
			if (one_in(f, 2))
				cb.patches[i].pad[0] = 1u << (R(f) % 32);
			else
				cb.patches[i].pad[1] = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "patch pad";
			break;
		case 9:
			if (!cb.npatches)
				goto overlap;
			cb.patches[R(f) % cb.npatches].alloc_index = s.num_allocs;
			expect = EINVAL;
			what = "alloc_index one past the end";
			break;
		case 10:
			if (!cb.npatches)
				goto overlap;
			cb.patches[R(f) % cb.npatches].slot =
				f->dev->info.max_slots;
			expect = EINVAL;
			what = "slot one past the end";
			break;
		case 11:
			if (!cb.npatches)
				goto overlap;
			i = (int)(R(f) % cb.npatches);
			cb.patches[i].patch_offset += pick64(f,
				(const uint64_t[]){ 1, 2, 4, (uint64_t)s.dma_size,
					0x80000000u }, 5);
			expect = EINVAL;
			what = "patch_offset off its BIND";
			break;
		case 12:
			if (!cb.npatches)
				goto overlap;
			i = (int)(R(f) % cb.npatches);
			cb.patches[i].split_offset = cb.patches[i].patch_offset -
				(one_in(f, 2) ? 4 : 6);
			expect = EINVAL;
			what = "split_offset inside its BIND";
			break;
		case 13:
			if (!s.num_in_syncs)
				goto overlap;
			/* bit 0 is QGPU_SYNC_MONITORED: the unknown ones */
			ins[R(f) % s.num_in_syncs].flags = 2u << (R(f) % 31);
			expect = EINVAL;
			what = "in-sync flag";
			break;
		case 14:
			if (!s.num_out_syncs)
				goto overlap;
			outs[R(f) % s.num_out_syncs].flags = 2u << (R(f) % 31);
			expect = EINVAL;
			what = "out-sync flag";
			break;
		case 15:
			if (!s.num_out_syncs)
				goto overlap;
			outs[R(f) % s.num_out_syncs].handle =
				one_in(f, 2) ? 0 : dead_sync(f);
			expect = EXPECT_FAIL;
			what = "dead out-sync";
			break;
		case 16:
			if (!cb.nallocs)
				goto overlap;
			cb.allocs[R(f) % cb.nallocs].handle = dead_bo(f);
			expect = EXPECT_FAIL;
			what = "dead allocation";
			break;
		case 17:
			/* a bad pointer for one array */
			k = 1 + (int)(R(f) % (NUM_P - 1));
			expect = k == P_MISALIGNED || k == P_RO ? EXPECT_ANY :
				 EXPECT_FAIL;
			what = "bad array pointer";
			switch (R(f) % 3) {
			case 0:
				s.dma = fz_ptr(f, k, cb.dw, s.dma_size, 262144);
				break;
			case 1:
				if (!s.num_allocs)
					expect = EXPECT_ANY;
				s.allocs = fz_ptr(f, k, cb.allocs, s.num_allocs *
						  sizeof(*cb.allocs), 524288);
				break;
			default:
				if (!s.num_patches)
					expect = EXPECT_ANY;
				s.patches = fz_ptr(f, k, cb.patches, s.num_patches *
						   sizeof(*cb.patches), 786432);
				break;
			}
			break;
		default:
overlap:
			/* overlapping arrays: in == out, argument in the DMA */
			expect = EXPECT_ANY;
			what = "overlapping arrays";
			s.out_syncs = s.in_syncs;
			s.num_out_syncs = s.num_in_syncs;
			break;
		}
	} else if (mode == 2) {
		/* valid structure, boundary counts */
		what = "boundary counts";
		s.num_allocs = b32(f, s.num_allocs);
		s.num_patches = b32(f, s.num_patches);
		s.dma_size = one_in(f, 2) ? b32(f, s.dma_size) : s.dma_size;
		if (one_in(f, 3))
			s.num_in_syncs = b32(f, QGPU_MAX_SYNCS);
	}
call:
	a = argp(f, &s, sizeof(s), &k);
	e = fz_call(f, OP_SUBMIT, DRM_IOCTL_QGPU_SUBMIT, a, arg_expect(k, expect),
		    what);
	if (!e) {
		/* the out-syncobjs have fences now */
		for (i = 0; mode != 3 && i < (int)s.num_out_syncs && i < 8; i++) {
			int j;

			for (j = 0; j < f->nsync; j++)
				if (f->sync[j] == outs[i].handle)
					f->sync_fence[j] = true;
		}
	}
	if (e == ECANCELED)
		anchors(f);
	qgpu_cb_fini(&cb);
}

/* ------------------------------------------------------------------------ */
/* PRIME, dumb buffers                                                       */

static void close_new_fd(int fd, int own)
{
	if (fd > 2 && fd != own)
		close(fd);
}

static void close_dmabufs(void)
{
	char path[300], target[64];
	struct dirent *d;
	DIR *dir;
	ssize_t n;

	dir = opendir("/proc/self/fd");
	igt_assert(dir);
	while ((d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strstr(target, "dmabuf"))
			close(atoi(d->d_name));
	}
	closedir(dir);
}

static void fz_prime(struct fz *f, bool to_fd)
{
	struct drm_prime_handle p;
	int k, e;
	uint64_t a;

	memset(&p, 0, sizeof(p));
	if (to_fd) {
		p.handle = any_bo(f);
		p.flags = pick64(f, (const uint64_t[]){ 0, DRM_CLOEXEC, DRM_RDWR,
			DRM_CLOEXEC | DRM_RDWR, 1, R32(f), ~0u }, 7);
		p.fd = -1;
	} else {
		p.fd = (int)pick64(f, (const uint64_t[]){ (uint64_t)f->fd, 0, 1,
			(uint64_t)-1, 9999, 0x7fffffff }, 6);
		p.flags = one_in(f, 4) ? R32(f) : 0;
	}
	a = argp(f, &p, sizeof(p), &k);
	e = fz_call(f, to_fd ? OP_PRIME_H2FD : OP_PRIME_FD2H,
		    to_fd ? DRM_IOCTL_PRIME_HANDLE_TO_FD :
		    DRM_IOCTL_PRIME_FD_TO_HANDLE, a, arg_expect(k, EXPECT_ANY),
		    "prime");
	if (!e && to_fd && (k == P_GOOD || k == P_MISALIGNED))
		close_new_fd(((struct drm_prime_handle *)(uintptr_t)a)->fd,
			     f->fd);
}

static void fz_dumb_create(struct fz *f)
{
	struct drm_mode_create_dumb d;
	int k, e;
	uint64_t a;

	memset(&d, 0, sizeof(d));
	if (one_in(f, 2)) {
		d.width = 1 + R32(f) % 512;
		d.height = 1 + R32(f) % 512;
		d.bpp = pick64(f, (const uint64_t[]){ 8, 16, 24, 32 }, 4);
	} else {
		d.width = b32(f, 16384);
		d.height = b32(f, 16384);
		d.bpp = b32(f, 32);
		d.flags = one_in(f, 3) ? R32(f) : 0;
		d.handle = one_in(f, 3) ? R32(f) : 0;
		d.size = one_in(f, 3) ? R(f) : 0;
	}
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_DUMB_CREATE, DRM_IOCTL_MODE_CREATE_DUMB, a,
		    arg_expect(k, EXPECT_ANY), "dumb create");
	if (!e && (k == P_GOOD || k == P_MISALIGNED)) {
		struct drm_mode_create_dumb *r = (void *)(uintptr_t)a;

		add_bo(f, r->handle, r->size);
	}
}

static void fz_dumb_map(struct fz *f)
{
	struct drm_mode_map_dumb m;
	int k;
	uint64_t a;

	memset(&m, 0, sizeof(m));
	m.handle = any_bo(f);
	if (one_in(f, 4))
		m.pad = R32(f);
	if (one_in(f, 4))
		m.offset = R(f);
	a = argp(f, &m, sizeof(m), &k);
	fz_call(f, OP_DUMB_MAP, DRM_IOCTL_MODE_MAP_DUMB, a,
		arg_expect(k, EXPECT_ANY), "dumb map");
}

static void fz_dumb_destroy(struct fz *f)
{
	struct drm_mode_destroy_dumb d;
	int k, e;
	uint64_t a;

	d.handle = one_in(f, 3) ? any_bo(f) :
		   f->nbo > 8 ? f->bo[R(f) % f->nbo] : f->dead_bo;
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_DUMB_DESTROY, DRM_IOCTL_MODE_DESTROY_DUMB, a,
		    arg_expect(k, EXPECT_ANY), "dumb destroy");
	if (!e || !bo_alive(f, d.handle))
		forget_bo(f, d.handle);
}

/* ------------------------------------------------------------------------ */
/* Syncobjs                                                                  */

static void fz_sync_create(struct fz *f)
{
	struct drm_syncobj_create c;
	int k, e, expect = EXPECT_ANY;
	uint64_t a;

	memset(&c, 0, sizeof(c));
	c.flags = pick64(f, (const uint64_t[]){ 0, 0, DRM_SYNCOBJ_CREATE_SIGNALED,
		2, 1u << 31, ~0u }, 6);
	if (c.flags & ~DRM_SYNCOBJ_CREATE_SIGNALED)
		expect = EINVAL;
	if (one_in(f, 4))
		c.handle = R32(f);
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_SYNC_CREATE, DRM_IOCTL_SYNCOBJ_CREATE, a,
		    arg_expect(k, expect), "create");
	if (!e && (k == P_GOOD || k == P_MISALIGNED))
		add_sync(f, ((struct drm_syncobj_create *)(uintptr_t)a)->handle,
			 c.flags & DRM_SYNCOBJ_CREATE_SIGNALED);
}

static void fz_sync_destroy(struct fz *f)
{
	struct drm_syncobj_destroy d;
	int k, e;
	uint64_t a;

	memset(&d, 0, sizeof(d));
	d.handle = any_sync(f);
	if (one_in(f, 4))
		d.pad = R32(f);
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_SYNC_DESTROY, DRM_IOCTL_SYNCOBJ_DESTROY, a,
		    arg_expect(k, EXPECT_ANY), "destroy");
	/*
	 * An IOWR: with the struct in read-only memory the syncobj is
	 * destroyed and then the copy back fails (EFAULT). Checked, as for
	 * dumb buffers, so that the pool never holds a dead handle.
	 */
	if (!e || !sync_alive(f, d.handle))
		forget_sync(f, d.handle);
}

/* An array of handles (and points) in the scratch buffer. */
static uint64_t handles_arg(struct fz *f, __u32 *count, __u64 *points_ptr)
{
	uint32_t *h = (uint32_t *)(f->rw + 1048576);
	uint64_t *pt = (uint64_t *)(f->rw + 1310720);
	uint32_t n = R(f) % 4 == 0 ? b32(f, 8) : 1 + R32(f) % 4, i;

	/*
	 * The DRM core (not qgpu) kmallocs count_handles entries without
	 * __GFP_NOWARN: 2^21 and more WARN in the page allocator. Keep the
	 * huge counts below that so that the log stays about qgpu.
	 */
	if (n > (1u << 18))
		n = (1u << 18) + (n & 0xff);
	int k = ptr_kind(f, 6);

	for (i = 0; i < 8; i++) {
		h[i] = any_sync(f);
		pt[i] = one_in(f, 2) ? 0 : b64(f, 4);
	}
	*count = n;
	if (points_ptr)
		*points_ptr = one_in(f, 8) ? fz_ptr(f, (int)(R(f) % NUM_P), pt,
						     64, 1310720) :
			      (uintptr_t)pt;
	return k == P_GOOD ? (uintptr_t)h : fz_ptr(f, k, h, 32, 1048576);
}

static int64_t wait_timeout(struct fz *f)
{
	int64_t now = qgpu_now_ns();

	switch (R(f) % 7) {
	case 0: return 0;
	case 1: return now;
	case 2: return now - 1000000000ll;
	case 3: return now + 1000000;
	case 4: return INT64_MIN;
	case 5: return now + 10000000;
	default: return one_in(f, 8) ? INT64_MAX : -1;
	}
}

static void fz_sync_wait(struct fz *f, bool timeline)
{
	struct drm_syncobj_timeline_wait tw;
	struct drm_syncobj_wait w;
	int k;
	uint64_t a;

	if (!timeline) {
		memset(&w, 0, sizeof(w));
		w.handles = handles_arg(f, &w.count_handles, NULL);
		w.timeout_nsec = wait_timeout(f);
		w.flags = pick64(f, (const uint64_t[]){ 0, 1, 2, 3, 4, 8,
			1u << 31, ~0u }, 8);
		if (one_in(f, 4))
			w.pad = R32(f);
		if (one_in(f, 4))
			w.first_signaled = R32(f);
		a = argp(f, &w, sizeof(w), &k);
		fz_call(f, OP_SYNC_WAIT, DRM_IOCTL_SYNCOBJ_WAIT, a,
			arg_expect(k, EXPECT_ANY), "wait");
	} else {
		memset(&tw, 0, sizeof(tw));
		tw.handles = handles_arg(f, &tw.count_handles, &tw.points);
		tw.timeout_nsec = wait_timeout(f);
		tw.flags = pick64(f, (const uint64_t[]){ 0, 1, 2, 3, 4, 7, 8,
			~0u }, 8);
		if (one_in(f, 4))
			tw.pad = R32(f);
		a = argp(f, &tw, sizeof(tw), &k);
		fz_call(f, OP_SYNC_TL_WAIT, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, a,
			arg_expect(k, EXPECT_ANY), "timeline wait");
	}
}

static void mark_fenced(struct fz *f, uint64_t handles, uint32_t n)
{
	uint32_t *h = (uint32_t *)(f->rw + 1048576), i;
	int j;

	if (handles != (uintptr_t)h)
		return;
	for (i = 0; i < n && i < 8; i++)
		for (j = 0; j < f->nsync; j++)
			if (f->sync[j] == h[i])
				f->sync_fence[j] = true;
}

static void fz_sync_signal(struct fz *f, bool timeline)
{
	struct drm_syncobj_timeline_array ta;
	struct drm_syncobj_array sa;
	int k, e;
	uint64_t a;

	if (!timeline) {
		memset(&sa, 0, sizeof(sa));
		sa.handles = handles_arg(f, &sa.count_handles, NULL);
		if (one_in(f, 4))
			sa.pad = R32(f);
		a = argp(f, &sa, sizeof(sa), &k);
		e = fz_call(f, OP_SYNC_SIGNAL, DRM_IOCTL_SYNCOBJ_SIGNAL, a,
			    arg_expect(k, EXPECT_ANY), "signal");
		if (!e)
			mark_fenced(f, sa.handles, sa.count_handles);
	} else {
		memset(&ta, 0, sizeof(ta));
		ta.handles = handles_arg(f, &ta.count_handles, &ta.points);
		if (one_in(f, 4))
			ta.flags = R32(f);
		a = argp(f, &ta, sizeof(ta), &k);
		e = fz_call(f, OP_SYNC_TL_SIGNAL,
			    DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, a,
			    arg_expect(k, EXPECT_ANY), "timeline signal");
		if (!e)
			mark_fenced(f, ta.handles, ta.count_handles);
	}
}

static void fz_sync_misc(struct fz *f, int op)
{
	struct drm_syncobj_timeline_array ta;
	struct drm_syncobj_transfer t;
	struct drm_syncobj_array sa;
	int k;
	uint64_t a;

	if (op == OP_SYNC_QUERY) {
		memset(&ta, 0, sizeof(ta));
		ta.handles = handles_arg(f, &ta.count_handles, &ta.points);
		ta.flags = pick64(f, (const uint64_t[]){ 0, 1, 2, ~0u }, 4);
		a = argp(f, &ta, sizeof(ta), &k);
		fz_call(f, op, DRM_IOCTL_SYNCOBJ_QUERY, a,
			arg_expect(k, EXPECT_ANY), "query");
	} else if (op == OP_SYNC_RESET) {
		memset(&sa, 0, sizeof(sa));
		sa.handles = handles_arg(f, &sa.count_handles, NULL);
		if (one_in(f, 4))
			sa.pad = R32(f);
		a = argp(f, &sa, sizeof(sa), &k);
		if (!fz_call(f, op, DRM_IOCTL_SYNCOBJ_RESET, a,
			     arg_expect(k, EXPECT_ANY), "reset")) {
			/* be conservative: forget their fences */
			int j;

			for (j = 0; j < f->nsync; j++)
				f->sync_fence[j] = false;
		}
	} else {
		memset(&t, 0, sizeof(t));
		t.src_handle = any_sync(f);
		t.dst_handle = any_sync(f);
		t.src_point = one_in(f, 2) ? 0 : b64(f, 4);
		t.dst_point = one_in(f, 2) ? 0 : b64(f, 4);
		t.flags = pick64(f, (const uint64_t[]){ 0, 0, 4, 1, ~0u }, 5);
		if (one_in(f, 4))
			t.pad = R32(f);
		a = argp(f, &t, sizeof(t), &k);
		fz_call(f, op, DRM_IOCTL_SYNCOBJ_TRANSFER, a,
			arg_expect(k, EXPECT_ANY), "transfer");
	}
}

static void fz_sync_fd(struct fz *f, bool to_fd)
{
	struct drm_syncobj_handle h;
	int k, e, sfd = -1;
	uint64_t a;

	memset(&h, 0, sizeof(h));
	h.handle = any_sync(f);
	h.flags = pick64(f, (const uint64_t[]){ 0, 1, 2, ~0u }, 4);
	if (to_fd) {
		h.fd = one_in(f, 4) ? (int)R32(f) : -1;
	} else {
		/* a sync file, the DRM fd itself, or junk */
		if (f->nsync && one_in(f, 2))
			drmSyncobjExportSyncFile(f->fd, f->sync[R(f) % f->nsync],
						 &sfd);
		h.fd = sfd >= 0 ? sfd : (int)pick64(f, (const uint64_t[]){
			(uint64_t)f->fd, (uint64_t)-1, 0, 9999 }, 4);
		if (one_in(f, 4))
			h.handle = 0;
	}
	if (one_in(f, 4))
		h.pad = R32(f);
	a = argp(f, &h, sizeof(h), &k);
	e = fz_call(f, to_fd ? OP_SYNC_H2FD : OP_SYNC_FD2H,
		    to_fd ? DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD :
		    DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, a, arg_expect(k, EXPECT_ANY),
		    to_fd ? "handle to fd" : "fd to handle");
	if (!e && (k == P_GOOD || k == P_MISALIGNED)) {
		struct drm_syncobj_handle *r = (void *)(uintptr_t)a;

		if (to_fd)
			close_new_fd(r->fd, f->fd);
		else if (!(h.flags & 1))
			add_sync(f, r->handle, false);
	}
	if (sfd >= 0)
		close(sfd);
}

/* Driver ioctl numbers with random directions, sizes and contents. */
static void fz_raw(struct fz *f)
{
	uint32_t nr = DRM_COMMAND_BASE + R32(f) % 0x20, size, dir, i;
	unsigned long req;
	uint64_t a;

	size = pick64(f, (const uint64_t[]){ 0, 1, 4, 8, 16, 24, 32, 64, 72,
		128, 255, 1024, 4096, 16383 }, 14);
	dir = R32(f) % 4;
	req = _IOC(dir, DRM_IOCTL_BASE, nr, size);
	/* the DRM core copies back as many bytes as the number says */
	for (i = 0; i < 16384; i += 8)
		*(uint64_t *)(f->rw + SCRATCH - 16384 + i) =
			one_in(f, 3) ? R(f) : R(f) % 16;
	a = one_in(f, 8) ? fz_ptr(f, (int)(R(f) % NUM_P), NULL, size, 0) :
	    (uintptr_t)(f->rw + SCRATCH - 16384);
	fz_call(f, OP_RAW, req, a, EXPECT_ANY, "raw");
	/* whatever it created lives until the file is closed */
}

/* ------------------------------------------------------------------------ */

static void one_call(struct fz *f, int op)
{
	cur_op = op;
	switch (op) {
	case OP_QUERY: fz_query(f); break;
	case OP_GEM_CREATE: fz_gem_create(f); break;
	case OP_GEM_LOCK: fz_gem_lock(f, false); break;
	case OP_GEM_UNLOCK: fz_gem_lock(f, true); break;
	case OP_GEM_RESIDE: fz_gem_reside(f); break;
	case OP_GEM_INFO: fz_gem_info(f); break;
	case OP_SUBMIT: fz_submit(f); break;
	case OP_CTX_CREATE: fz_ctx_create(f); break;
	case OP_CTX_DESTROY: fz_ctx_destroy(f); break;
	case OP_GEM_CLOSE: fz_gem_close(f); break;
	case OP_PRIME_H2FD: fz_prime(f, true); break;
	case OP_PRIME_FD2H: fz_prime(f, false); break;
	case OP_SYNC_CREATE: fz_sync_create(f); break;
	case OP_SYNC_DESTROY: fz_sync_destroy(f); break;
	case OP_SYNC_WAIT: fz_sync_wait(f, false); break;
	case OP_SYNC_SIGNAL: fz_sync_signal(f, false); break;
	case OP_SYNC_TL_WAIT: fz_sync_wait(f, true); break;
	case OP_SYNC_TL_SIGNAL: fz_sync_signal(f, true); break;
	case OP_SYNC_QUERY:
	case OP_SYNC_RESET:
	case OP_SYNC_TRANSFER: fz_sync_misc(f, op); break;
	case OP_SYNC_H2FD: fz_sync_fd(f, true); break;
	case OP_SYNC_FD2H: fz_sync_fd(f, false); break;
	case OP_DUMB_CREATE: fz_dumb_create(f); break;
	case OP_DUMB_MAP: fz_dumb_map(f); break;
	case OP_DUMB_DESTROY: fz_dumb_destroy(f); break;
	default: fz_raw(f); break;
	}
}

/* Keep the pools populated so that deeper paths run. */
static void replenish(struct fz *f)
{
	uint32_t h;
	int i;

	anchors(f);
	for (i = f->nbo; i < 6; i++) {
		if (qgpu_bo_create(f->fd, 4096 << (i % 5),
				   QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
				   QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   i % 2 ? QGPU_GEM_CPU_ACCESS : 0, 0, &h))
			break;
		add_bo(f, h, 4096 << (i % 5));
		qgpu_bo_reside(f->fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	}
	for (i = f->nsync; i < 6; i++) {
		if (qgpu_syncobj_create(f->fd, &h))
			break;
		drmSyncobjSignal(f->fd, &h, 1);
		add_sync(f, h, true);
	}
	for (i = f->nctx; i < 2; i++) {
		if (qgpu_ctx_create(f->fd, &h))
			break;
		add_ctx(f, h);
	}
}

static uint64_t arg_u64(const char *key, uint64_t def)
{
	char buf[4096], *s;
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY);
	size_t kl = strlen(key);

	if (fd < 0)
		return def;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return def;
	buf[n] = 0;
	for (s = buf; s < buf + n; s += strlen(s) + 1)
		if (!strncmp(s, key, kl) && s[kl] == '=')
			return strtoull(s + kl + 1, NULL, 0);
	return def;
}

static void fuzz_node(enum qgpu_node node)
{
	static struct fz f;
	struct sigaction sa, old, crash, old_segv, old_bus;
	struct qgpu_dev dev;
	struct qs_kmsg k;
	struct qs_base b;
	uint64_t seed = arg_u64("seed", 0x5eed);
	long iters = (long)arg_u64("iters", 3000), i, total = 0, ok = 0;
	int op, obs, j, ret;
	char line[1024];
	size_t len;

	qt_open(&dev, node);
	obs = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
	if (obs < 0 || !qgpu_is_qgpu_fd(obs)) {
		struct qgpu_dev r;

		if (obs >= 0)
			close(obs);
		igt_assert_eq(qgpu_open(&r, QGPU_NODE_RENDER), 0);
		obs = r.fd;
	}
	qs_kmsg_begin(&k);
	qs_baseline(obs, &b);

	memset(&f, 0, sizeof(f));
	f.fd = dev.fd;
	f.dev = &dev;
	f.seed = seed ^ (node == QGPU_NODE_PRIMARY ? 0x9999 : 0);
	f.max_alloc = dev.info.vram_size > dev.info.gart_size ?
		      dev.info.vram_size : dev.info.gart_size;
	if (f.max_alloc > 4096ull * MiB)
		f.max_alloc = 4096ull * MiB;
	f.rw = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.ro = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.strad = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.gone = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(f.rw != MAP_FAILED && f.ro != MAP_FAILED &&
		   f.none != MAP_FAILED && f.strad != MAP_FAILED &&
		   f.gone != MAP_FAILED);
	munmap(f.strad + 4096, 4096);
	munmap(f.gone, 4096);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: a wait returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	memset(&crash, 0, sizeof(crash));
	crash.sa_sigaction = on_crash;
	crash.sa_flags = SA_SIGINFO;
	sigemptyset(&crash.sa_mask);
	sigaction(SIGSEGV, &crash, &old_segv);
	sigaction(SIGBUS, &crash, &old_bus);

	igt_info("fuzz: %s node %s, seed %#llx, %ld calls per ioctl\n",
		 node == QGPU_NODE_PRIMARY ? "primary" : "render", dev.path,
		 (unsigned long long)seed, iters);
	replenish(&f);
	/* round robin over the ioctls, so that they interleave */
	for (i = 0; i < iters; i++) {
		for (op = 0; op < NUM_OPS; op++) {
			if (i % 64 == 0)
				replenish(&f);
			one_call(&f, op);
		}
	}
	sigaction(SIGALRM, &old, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	cur_op = -1;

	/* close every handle and context explicitly, then the file */
	for (j = 0; j < f.nbo; j++)
		qgpu_bo_destroy(f.fd, f.bo[j]);
	for (j = 0; j < f.nctx; j++)
		qgpu_ctx_destroy(f.fd, f.ctx[j]);
	for (j = 0; j < f.nsync; j++)
		qgpu_syncobj_destroy(f.fd, f.sync[j]);
	if (f.abo)
		qgpu_bo_destroy(f.fd, f.abo);
	if (f.actx)
		qgpu_ctx_destroy(f.fd, f.actx);
	qgpu_close(&dev);

	for (op = 0; op < NUM_OPS; op++) {
		total += f.calls[op];
		ok += f.ok[op];
	}
	len = (size_t)snprintf(line, sizeof(line),
			       "fuzz summary: node %s seed %#llx: %ld calls, %ld succeeded, %d failure(s); errnos:",
			       node == QGPU_NODE_PRIMARY ? "primary" : "render",
			       (unsigned long long)seed, total, ok, f.failures);
	for (j = 1; j < (int)ARRAY_SIZE(f.by_errno) && len < sizeof(line) - 40;
	     j++)
		if (f.by_errno[j])
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" %s %ld", strerror(j),
						f.by_errno[j]);
	igt_info("%s\n", line);
	for (op = 0; op < NUM_OPS; op++)
		igt_info("  %-26s %6ld calls %6ld ok\n", op_name[op], f.calls[op],
			 f.ok[op]);
	munmap(f.rw, SCRATCH);
	munmap(f.ro, 65536);
	munmap(f.none, 4096);
	munmap(f.strad, 4096);

	/*
	 * A dma-buf holds its allocation. PRIME_HANDLE_TO_FD whose result
	 * could not be copied out (a bad pointer) leaves an fd nobody knows:
	 * close every dma-buf this process still has before the baseline.
	 */
	close_dmabufs();
	qs_wait_baseline(&b, 30);
	ret = f.failures;
	close(obs);
	qs_device_works();
	qs_kmsg_end(&k);
	igt_assert_f(ret == 0, "%d call(s) broke the rules; the first: %s\n",
		     ret, f.first);
}

igt_main
{
	igt_subtest("render-node")
		fuzz_node(QGPU_NODE_RENDER);
	igt_subtest("primary-node")
		fuzz_node(QGPU_NODE_PRIMARY);
}
