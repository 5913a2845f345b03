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
 * GPU virtual addressing (a device with an MMU) gets the same: VM_RESERVE,
 * VM_FREE, VM_MAP, VM_UNMAP and MAKE_RESIDENT with boundary, hostile and
 * valid arguments, each checked against the address space's layout
 * (QGPU_QUERY_VM_LAYOUT): a refused call changed nothing, an accepted one
 * did exactly what the UAPI says; virtual contexts get well-formed buffers
 * over the mappings (which must never fault), buffers that must fault
 * (unmapped addresses, writes to read-only mappings, addresses beyond the
 * VA size) with the fault recorded where it happened and nothing written,
 * buffers the kernel must refuse, and random ones. A second file maps its
 * own data where the fuzzer's buffers fault: it must never change.
 * Monitored fences get the same: MFENCE_CREATE, MFENCE_DESTROY,
 * MFENCE_WAIT (deadlines of 0, in the past or a few ms ahead only) and
 * MFENCE_EXPORT, each checked against the fence's value (read through its
 * read-only mapping) and its last queued value (what EXPORT accepts);
 * the mapping itself (no writable mapping, no other offsets or sizes);
 * every context's own fence (CTX_CREATE) and the value each submission
 * advances it to; monitored in- and out-syncs in physical and virtual
 * submissions, with values queued or not, duplicates and dead handles
 * (refused: nothing queued, no value queued). Then GEM_DESTROY (of
 * allocations mapped in the address space, once or twice: the mappings go
 * behind the queued work, or at once with ASSUME_NOT_IN_USE, and a buffer
 * queued afterwards faults there), INVALIDATE_CACHE (every field, what it
 * counts), GEM_SET_PRIORITY (all or nothing, seen through the driver's
 * tracepoint), GEM_OFFER and GEM_RECLAIM (all or nothing; what an offered
 * allocation may not do; a discard where the UAPI says there is one, and
 * none where it says there is none; no allocation stays offered between
 * calls) and QGPU_QUERY_VIDMEM_INFO; TILE and VTILE commands in the
 * well-formed, the refused and the random buffers. PING: every flag bit
 * and pad bit refused, a valid call answered with a sequence number past
 * the last one, its input ignored.
 * Every call must return 0 or a documented errno. Afterwards every
 * reservation is freed (the address space must then be empty and nothing
 * mapped), every handle and context is closed and the global counters
 * (allocations, allocated_bytes, per-segment usage) must be back to the
 * baseline taken at the start; a summary line is printed.
 *
 * Subtests: render-node and primary-node (the same run on each node).
 * Arguments: seed=N (default 0x5eed), iters=N (calls per ioctl, default
 * 3000; the GPU virtual addressing ones run fewer, see op_period()).
 */
#include "qgpu_stress.h"
#include "qgpu_tracefs.h"

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
	OP_SYNC_FD2H, OP_DUMB_CREATE, OP_DUMB_MAP, OP_DUMB_DESTROY,
	OP_MF_CREATE, OP_MF_DESTROY, OP_MF_WAIT, OP_MF_EXPORT, OP_MF_MMAP,
	OP_GEM_DESTROY, OP_INVALIDATE, OP_SET_PRIORITY, OP_OFFER, OP_RECLAIM,
	OP_PING, OP_VM_RESERVE, OP_VM_FREE, OP_VM_MAP, OP_VM_UNMAP, OP_MAKE_RESIDENT,
	OP_VSUBMIT, OP_RAW, NUM_OPS
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
	"QGPU_MFENCE_CREATE", "QGPU_MFENCE_DESTROY", "QGPU_MFENCE_WAIT",
	"QGPU_MFENCE_EXPORT", "mmap of a monitored fence page",
	"QGPU_GEM_DESTROY", "QGPU_INVALIDATE_CACHE", "QGPU_GEM_SET_PRIORITY",
	"QGPU_GEM_OFFER", "QGPU_GEM_RECLAIM", "QGPU_PING",
	"QGPU_VM_RESERVE", "QGPU_VM_FREE", "QGPU_VM_MAP", "QGPU_VM_UNMAP",
	"QGPU_MAKE_RESIDENT", "QGPU_SUBMIT (virtual)",
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
	case OP_VM_RESERVE:
	case OP_VM_MAP:
		/* overlaps a reservation, or a mapping */
		return e == EEXIST;
	case OP_RAW:
		/* and MFENCE_WAIT's deadline, or the watchdog */
		return e == EEXIST || e == ETIME || e == EINTR;
	case OP_MF_WAIT:
		/* the deadline passed first; the watchdog */
		return e == ETIME || e == EINTR;
	case OP_MAKE_RESIDENT:
	case OP_INVALIDATE:
		return e == EINTR;
	case OP_PING:
		/* a device without PING; one that does not answer; a signal */
		return e == EOPNOTSUPP || e == ETIMEDOUT || e == EINTR;
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
#define MAXVCTX	3
#define MAXMF	12	/* monitored fences the pool keeps */
#define MAXMAPPED 256	/* handles that may be mapped in the VM */
#define MF_WIN	64	/* pages of the window for fence pages */
#define VWAIT_S	20	/* bound of the waits for the GPU */

/* Who may signal a monitored fence of the pool (see mf_usable()) */
enum { OWN_NONE, OWN_ACTX, OWN_AVCTX };

/*
 * A monitored fence the fuzzer made (or a context's), with the fuzzer's
 * read-only mapping of its page.
 */
struct mfen {
	uint32_t h;			/* handle; 0: closed (a context's) */
	uint32_t off;			/* its value's offset in it */
	uint64_t mmap_off;		/* mmap() offset of the page */
	uint64_t queued;		/* the last value queued for it */
	uint64_t uniq;			/* its own value (mf_ours()) */
	void *page;			/* the mapping */
	const volatile uint64_t *v;	/* its value there */
	int owner;			/* OWN_*: the context writing it */
	uint64_t gen;			/* that context's incarnation */
};

struct fz {
	int fd;
	const struct qgpu_dev *dev;
	uint64_t seed;
	uint64_t max_alloc;
	/* live objects */
	uint32_t bo[MAXBO];
	uint64_t bo_size[MAXBO];
	uint32_t bo_flags[MAXBO];	/* QGPU_GEM_* */
	int nbo;
	uint32_t ctx[MAXCTX];
	int nctx;
	uint32_t sync[MAXSYNC];
	bool sync_fence[MAXSYNC];
	int nsync;
	/* objects that were destroyed (for use-after-destroy values) */
	uint32_t dead_bo, dead_ctx, dead_sync;
	uint64_t ping_seq;	/* the last PING answered, 0: none yet */
	/* anchors for hostile calls: re-created when fuzzing destroyed them */
	uint32_t abo, actx;
	uint64_t asubs;			/* submissions actx accepted */
	/* monitored fences */
	struct mfen mf[MAXMF];
	int nmf;
	uint32_t dead_mf;
	struct mfen amf, avmf;		/* actx's and avctx's fences */
	uint64_t agen, avgen;		/* their incarnations */
	uint64_t avq_vsync;		/* avmf's value once vsync signals */
	uint64_t mfseq;			/* unique values (mf_ours()) */
	uint32_t xsync;			/* EXPORT probes (no fence) */
	uint32_t psync;			/* physical submissions */
	uint32_t tlsync;		/* a timeline for EXPORT at points */
	uint64_t tlpoint;		/* its last point */
	uint64_t omf_off;		/* its mmap() offset */
	uint32_t omf_in;		/* its value's offset in its page */
	long mfchecks;			/* fences seen at their values */
	uint8_t *mfwin;			/* where fence pages go */
	uint64_t mfwin_used;		/* its pages in use, a bit each */
	/* allocations that may be mapped (GEM_DESTROY must not touch them) */
	uint32_t mapped[MAXMAPPED];
	int nmapped;
	bool mapped_full;
	/* tiled surfaces (QGPU_INFO_CAP_TILING) */
	bool tiling;
	uint32_t tbo;			/* a tiled allocation */
	/* SET_PRIORITY's tracepoint (a tracefs instance of the fuzzer's) */
	bool prio_trace;
	int prio_fd;			/* its trace_pipe */
	long prio_checked, destroys_mapped;
	/* GPU virtual addressing (QGPU_INFO_CAP_MMU) */
	bool mmu;
	uint64_t va_start, va_end;	/* what a process may reserve */
	uint64_t va_size;		/* 1 << va_bits */
	uint32_t vctx[MAXVCTX];		/* virtual contexts: any buffer */
	int nvctx;
	uint32_t avctx;			/* virtual context: well-formed only */
	uint64_t avsubs;		/* buffers avctx accepted */
	uint32_t vsync, fsync;		/* avctx's last buffer, a victim's */
	uint32_t usync;			/* never signalled */
	uint64_t vseq;			/* values avctx's checks write */
	uint64_t fva;			/* the fixed area (FIX_*) */
	uint32_t rbo, obo;		/* its allocations */
	volatile uint32_t *out;		/* obo's CPU mapping */
	uint32_t rsum;			/* checksum of rbo's pattern */
	struct qgpu_dev odev;		/* another process's file */
	uint32_t oh;			/* its allocation at fva + FIX_HOLE */
	volatile uint32_t *omap;
	uint32_t osum;
	long vchecks, vfaults, fix_rebuilt;
	/* memory */
	uint8_t *rw;		/* SCRATCH bytes */
	uint8_t *ro;		/* 64 KiB, read-only */
	uint8_t *none;		/* PROT_NONE page */
	uint8_t *strad;		/* page followed by an unmapped page */
	uint8_t *gone;		/* an unmapped page */
	/* results */
	long calls[NUM_OPS], ok[NUM_OPS], err[NUM_OPS];
	int64_t ns[NUM_OPS];		/* time spent in each op */
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
 * The result of one call of @op (@ret, with errno @e when it failed),
 * counted and checked against @expect: EXPECT_ANY, EXPECT_FAIL or a
 * specific errno. Returns 0 or the errno.
 */
static int fz_result(struct fz *f, int op, int ret, int e, int expect,
		     const char *what)
{
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
		 !((op == OP_SUBMIT || op == OP_VSUBMIT) && e == ECANCELED))
		/* (a context can be lost by an earlier job at any time) */
		fz_failf(f, "%s (%s): returned %s, must be %s", op_name[op],
			 what, e ? strerror(e) : "success", strerror(expect));
	return e;
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
		    op == OP_SYNC_TRANSFER || op == OP_MF_WAIT ||
		    op == OP_RAW;
	int ret, e;

	if (wait)
		setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	ret = ioctl(f->fd, req, (void *)(uintptr_t)arg);
	e = ret ? errno : 0;
	if (wait)
		setitimer(ITIMER_REAL, &off, NULL);
	return fz_result(f, op, ret, e, expect, what);
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
	case 6: return f->nvctx ? f->vctx[R(f) % f->nvctx] : f->actx;
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
			f->bo_flags[i] = f->bo_flags[f->nbo];
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

static void forget_vctx(struct fz *f, uint32_t c)
{
	int i;

	for (i = 0; i < f->nvctx; i++)
		if (f->vctx[i] == c) {
			f->vctx[i] = f->vctx[--f->nvctx];
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
	struct drm_qgpu_gem_info gi;

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
	f->bo_flags[f->nbo] = qgpu_bo_info(f->fd, h, &gi) ? 0 : gi.flags;
	f->nbo++;
}

/* @h was mapped in the address space (it may still be) */
static void note_mapped(struct fz *f, uint32_t h)
{
	int i;

	for (i = 0; i < f->nmapped; i++)
		if (f->mapped[i] == h)
			return;
	if (f->nmapped == MAXMAPPED)
		f->mapped_full = true;
	else
		f->mapped[f->nmapped++] = h;
}

/*
 * May @h be mapped? GEM_DESTROY unmaps an allocation's mappings behind
 * its queued work, which would change the address space under the VM
 * ops' checks: only fz_gem_destroy()'s own mapped allocations go that way.
 * (A handle number once mapped stays suspect: the number may come back.)
 */
static bool maybe_mapped(struct fz *f, uint32_t h)
{
	int i;

	if (f->mapped_full || h == f->rbo || h == f->obo)
		return true;
	for (i = 0; i < f->nmapped; i++)
		if (f->mapped[i] == h)
			return true;
	return false;
}

static void add_ctx(struct fz *f, uint32_t c)
{
	/* an id given out again: whatever had it is gone */
	forget_ctx(f, c);
	forget_vctx(f, c);
	if (c == f->avctx)
		f->avctx = 0;
	if (c == f->actx)
		f->actx = 0;
	if (f->nctx == MAXCTX) {
		uint32_t old = f->ctx[0];

		forget_ctx(f, old);
		qgpu_ctx_destroy(f->fd, old);
	}
	f->ctx[f->nctx++] = c;
}

static void add_vctx(struct fz *f, uint32_t c)
{
	forget_ctx(f, c);
	forget_vctx(f, c);
	if (c == f->avctx)
		f->avctx = 0;
	if (c == f->actx)
		f->actx = 0;
	if (f->nvctx == MAXVCTX) {
		uint32_t old = f->vctx[0];

		forget_vctx(f, old);
		qgpu_ctx_destroy(f->fd, old);
	}
	f->vctx[f->nvctx++] = c;
}

/* Give context ids back: the pools' contexts go (all ids may be taken). */
static void free_pool_contexts(struct fz *f)
{
	uint32_t c;

	while (f->nvctx) {
		c = f->vctx[0];
		forget_vctx(f, c);
		qgpu_ctx_destroy(f->fd, c);
	}
	while (f->nctx) {
		c = f->ctx[0];
		forget_ctx(f, c);
		qgpu_ctx_destroy(f->fd, c);
	}
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

/* ------------------------------------------------------------------------ */
/* Monitored fences: the pool                                                */

#define MF_PAGE		4096ull

/* MFENCE_WAIT for @h to reach @value, checked once: 0, ETIME, ENOENT, ... */
static int mf_check(struct fz *f, uint32_t h, uint64_t value)
{
	struct drm_qgpu_mfence_wait w = {
		.handles = (uintptr_t)&h, .values = (uintptr_t)&value,
		.count = 1,
	};

	return ioctl(f->fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &w) ? errno : 0;
}

static bool mf_alive(struct fz *f, uint32_t h)
{
	return h && mf_check(f, h, 0) == 0;
}

/* A handle that names no fence of this file (checked, as for the others) */
static uint32_t dead_mf(struct fz *f)
{
	return f->dead_mf && !mf_alive(f, f->dead_mf) ? f->dead_mf :
	       QGPU_MFENCE_MAX + 1 + R32(f) % 1000;
}

static void mf_close(struct fz *f, uint32_t h)
{
	struct drm_qgpu_mfence_destroy d = { .handle = h };

	if (h)
		ioctl(f->fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d);
}

/*
 * The handle the next fence would get: one is made and closed again
 * (handles are given out lowest first). A refused call that must create
 * no fence leaves it free.
 */
static uint32_t mf_probe(struct fz *f)
{
	struct drm_qgpu_mfence_create c = { 0 };

	if (ioctl(f->fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c))
		return 0;
	mf_close(f, c.handle);
	return c.handle;
}

/* EXPORT of @h's @value into xsync: 0 or the errno; xsync is reset */
static int mf_export_probe(struct fz *f, uint32_t h, uint64_t value)
{
	struct drm_qgpu_mfence_export x = {
		.handle = h, .syncobj = f->xsync, .value = value,
	};
	int e = ioctl(f->fd, DRM_IOCTL_QGPU_MFENCE_EXPORT, &x) ? errno : 0;

	drmSyncobjReset(f->fd, &f->xsync, 1);
	return e;
}

/* Is @q the last value queued for @h: EXPORT takes it, and nothing above? */
static bool mf_queued_is(struct fz *f, uint32_t h, uint64_t q)
{
	return mf_export_probe(f, h, q) == 0 &&
	       (q == ~0ull || mf_export_probe(f, h, q + 1) == EINVAL);
}

/*
 * Map @len bytes of the DRM file at @off into free pages of a window kept
 * PROT_NONE: the bad pointers rely on one-page holes between the fuzzer's
 * mappings (f->gone, the page after f->strad), which a one-page mapping
 * placed by the kernel could fill. The address, or MAP_FAILED (errno set).
 */
static void *win_map(struct fz *f, uint64_t len, int prot, int flags,
		     uint64_t off)
{
	unsigned int np = (unsigned int)((len + MF_PAGE - 1) / MF_PAGE), i, j;
	uint8_t *at;
	void *p;
	int e;

	for (i = 0; i + np <= MF_WIN; i++) {
		for (j = 0; j < np && !(f->mfwin_used >> (i + j) & 1); j++)
			;
		if (j == np)
			break;
	}
	if (i + np > MF_WIN) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	at = f->mfwin + i * MF_PAGE;
	p = mmap(at, len, prot, flags | MAP_FIXED, f->fd, (off_t)off);
	if (p == MAP_FAILED) {
		/* (a refused MAP_FIXED may have taken the old pages away) */
		e = errno;
		mmap(at, np * MF_PAGE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		errno = e;
		return MAP_FAILED;
	}
	for (j = 0; j < np; j++)
		f->mfwin_used |= 1ull << (i + j);
	return p;
}

static void win_unmap(struct fz *f, void *p, uint64_t len)
{
	unsigned int np = (unsigned int)((len + MF_PAGE - 1) / MF_PAGE), j;
	unsigned int i = (unsigned int)(((uint8_t *)p - f->mfwin) / MF_PAGE);

	mmap(p, np * MF_PAGE, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	for (j = 0; j < np; j++)
		f->mfwin_used &= ~(1ull << (i + j));
}

/* Map @m's page read-only, as the UAPI says: 0 or the errno */
static int mf_map(struct fz *f, struct mfen *m)
{
	void *p = win_map(f, MF_PAGE, PROT_READ, MAP_SHARED, m->mmap_off);

	m->page = NULL;
	m->v = NULL;
	if (p == MAP_FAILED)
		return errno;
	m->page = p;
	m->v = (const volatile uint64_t *)((uint8_t *)p + m->off);
	return 0;
}

static void mf_unmap(struct fz *f, struct mfen *m)
{
	if (m->page)
		win_unmap(f, m->page, MF_PAGE);
	memset(m, 0, sizeof(*m));
}

/*
 * A value no other fence holds: each of the fuzzer's fences starts at one
 * (or goes through it), and never gets MF_UNIQ_STEP above it
 */
#define MF_UNIQ_STEP	(1ull << 32)

static uint64_t mf_unique(struct fz *f)
{
	f->mfseq += MF_UNIQ_STEP;
	return f->mfseq;
}

/*
 * Is @m still the fence the fuzzer made? Fuzzing (raw ioctl numbers, a
 * destroyed context) may close its handle, and a new fence may get the
 * number, and its slot of the page too: the mapping must show a value
 * the fence can have (from the unique one it went through, mf_unique(),
 * to below the next one; a new fence in the slot starts elsewhere), and
 * the handle's fence the value the mapping shows.
 */
static bool mf_ours(struct fz *f, const struct mfen *m)
{
	uint64_t v;
	int e;

	if (!m->h || !m->v)
		return false;
	v = *m->v;
	if (v < m->uniq || v - m->uniq >= MF_UNIQ_STEP)
		return false;
	if (mf_check(f, m->h, v))
		return false;
	e = v == ~0ull ? ETIME : mf_check(f, m->h, v + 1);
	return e == ETIME || (!e && *m->v > v);
}

/* Forget pool fence @i; with @close its handle is closed too */
static void forget_mf(struct fz *f, int i, bool close)
{
	if (close) {
		mf_close(f, f->mf[i].h);
		f->dead_mf = f->mf[i].h;
	}
	mf_unmap(f, &f->mf[i]);
	f->mf[i] = f->mf[--f->nmf];
	memset(&f->mf[f->nmf], 0, sizeof(f->mf[0]));
}

static void add_mf(struct fz *f, const struct mfen *m)
{
	if (f->nmf == MAXMF)
		forget_mf(f, 0, true);
	f->mf[f->nmf++] = *m;
}

/* A fence of the pool, checked to be ours (else forgotten), or NULL */
static struct mfen *pick_mf(struct fz *f)
{
	int i;

	while (f->nmf) {
		i = (int)(R(f) % f->nmf);
		if (mf_ours(f, &f->mf[i]))
			return &f->mf[i];
		forget_mf(f, i, false);
	}
	return NULL;
}

/* A fence of the pool, or actx's or avctx's own: ours, or NULL */
static struct mfen *pick_any_mf(struct fz *f)
{
	struct mfen *m = NULL;

	switch (R(f) % 6) {
	case 0:
		m = &f->amf;
		break;
	case 1:
		m = &f->avmf;
		break;
	default:
		break;
	}
	return m && mf_ours(f, m) ? m : pick_mf(f);
}

static uint32_t any_mf(struct fz *f)
{
	switch (R(f) % 10) {
	case 0: return 0;
	case 1: return dead_mf(f);
	case 2: return ~0u;
	case 3: return R32(f);
	case 4: return f->amf.h ? f->amf.h : 1 + R32(f) % 16;
	case 5: return 1 + R32(f) % 64;
	default: return f->nmf ? f->mf[R(f) % f->nmf].h : f->amf.h;
	}
}

static uint64_t owner_gen(struct fz *f, int owner)
{
	return owner == OWN_ACTX ? f->agen : f->avgen;
}

/*
 * May a submission on @owner's context write @m? Each fence of the pool
 * has one writer: values written by two contexts may land out of order,
 * and the fence step back (WDDM's rule, which the UAPI leaves to the
 * caller), after which a wait for a queued value would never end.
 */
static bool mf_usable(struct fz *f, const struct mfen *m, int owner)
{
	return owner != OWN_NONE &&
	       (m->owner == OWN_NONE ||
		(m->owner == owner && m->gen == owner_gen(f, owner)));
}

/* The fences @owner's old context wrote go: nobody may write them again */
static void mf_drop_owned(struct fz *f, int owner)
{
	int i;

	for (i = f->nmf - 1; i >= 0; i--)
		if (f->mf[i].owner == owner)
			forget_mf(f, i, true);
}

/* An accepted submission on @owner's context queued @e's monitored values */
static void mf_queued(struct fz *f, const struct drm_qgpu_sync_entry *e,
		      int n, int owner)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (!(e[i].flags & QGPU_SYNC_MONITORED))
			continue;
		for (j = 0; j < f->nmf; j++) {
			struct mfen *m = &f->mf[j];

			if (m->h != e[i].handle)
				continue;
			if (e[i].point > m->queued)
				m->queued = e[i].point;
			m->owner = owner;
			m->gen = owner_gen(f, owner);
		}
	}
}

/*
 * The value a submission that writes @e (@n out-syncs) advances the
 * context's own fence @cm to: one above the last queued, or above what
 * the submission writes to it itself.
 */
static uint64_t mf_next(const struct mfen *cm,
			const struct drm_qgpu_sync_entry *e, int n)
{
	uint64_t v = cm->queued;
	int i;

	for (i = 0; cm->h && i < n; i++)
		if ((e[i].flags & QGPU_SYNC_MONITORED) &&
		    e[i].handle == cm->h && e[i].point > v)
			v = e[i].point;
	return v + 1;
}

/*
 * Monitored entries after the @n there are (up to @max): in-syncs wait
 * for values queued already (any fence, a context's too), out-syncs
 * write values above the last queued one, to fences a submission on
 * @owner's context may write (its own fence among them), sometimes one
 * fence twice with rising values. Returns the new count.
 */
static int fill_msyncs(struct fz *f, struct drm_qgpu_sync_entry *e, int n,
		       int max, bool in, int owner)
{
	struct mfen *m, *own = owner == OWN_ACTX ? &f->amf : &f->avmf;
	int want = (int)(R(f) % 3), i, j;
	uint64_t base;

	for (i = 0; i < want && n < max; i++) {
		if (in) {
			m = pick_any_mf(f);
			if (!m)
				break;
			e[n] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = one_in(f, 3) ? m->queued :
					 R(f) % (m->queued + 1),
			};
			n++;
			continue;
		}
		if (owner == OWN_NONE)
			break;
		m = one_in(f, 6) && mf_ours(f, own) ? own : pick_mf(f);
		if (!m || (m != own && !mf_usable(f, m, owner)))
			break;
		/*
		 * Its writer from now on, whatever the answer: a submission
		 * may queue values and still fail (EFAULT copying the
		 * answer back), which only a new context sorts out.
		 */
		if (m != own) {
			m->owner = owner;
			m->gen = owner_gen(f, owner);
		}
		base = m->queued;
		for (j = 0; j < n; j++)
			if ((e[j].flags & QGPU_SYNC_MONITORED) &&
			    e[j].handle == m->h && e[j].point > base)
				base = e[j].point;
		e[n++] = (struct drm_qgpu_sync_entry){
			.handle = m->h, .flags = QGPU_SYNC_MONITORED,
			.point = base + 1 + R(f) % 4,
		};
	}
	return n;
}

/* A new fence starting at @initial, in *@m, mapped: 0 or the errno */
static int mf_make(struct fz *f, uint64_t initial, struct mfen *m)
{
	struct drm_qgpu_mfence_create c = { .initial_value = initial };
	int e;

	memset(m, 0, sizeof(*m));
	if (ioctl(f->fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c))
		return errno;
	m->h = c.handle;
	m->off = c.offset;
	m->mmap_off = c.mmap_offset;
	m->queued = initial;
	m->uniq = initial;
	e = mf_map(f, m);
	if (e) {
		mf_close(f, m->h);
		memset(m, 0, sizeof(*m));
	}
	return e;
}

/* The syncobjs the fence checks use exist (fuzzing may destroy them) */
static void mf_anchors(struct fz *f)
{
	uint32_t *s[] = { &f->xsync, &f->psync };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		if (!sync_alive(f, *s[i]))
			qgpu_syncobj_create(f->fd, s[i]);
	if (!sync_alive(f, f->tlsync)) {
		qgpu_syncobj_create(f->fd, &f->tlsync);
		f->tlpoint = 0;
	}
}

/*
 * What the UAPI says of a new fence @m (@what made it, starting at
 * @initial): a handle of its own namespace, an 8-aligned slot of a page,
 * the page mapped read-only (a writable mapping refused) showing the
 * value, MFENCE_WAIT and EXPORT agreeing. Leaves it mapped; false if it
 * is unusable.
 */
static bool mf_new_check(struct fz *f, struct mfen *m, uint64_t initial,
			 const char *what)
{
	void *p;
	int i, e;

	if (!m->h || m->h > QGPU_MFENCE_MAX || m->off % 8 ||
	    m->off >= MF_PAGE || m->mmap_off % MF_PAGE) {
		fz_failf(f, "%s: handle %u, value at byte %u of the page at mmap offset %#llx",
			 what, m->h, m->off, (unsigned long long)m->mmap_off);
		return false;
	}
	for (i = 0; i < f->nmf; i++)
		if (f->mf[i].h == m->h && mf_ours(f, &f->mf[i]))
			fz_failf(f, "%s: handle %u given out again while it names a fence",
				 what, m->h);
	p = win_map(f, MF_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    m->mmap_off);
	e = p == MAP_FAILED ? errno : 0;
	fz_result(f, OP_MF_MMAP, p == MAP_FAILED ? -1 : 0, e, EACCES,
		  "a new fence's page, writable");
	if (p != MAP_FAILED)
		win_unmap(f, p, MF_PAGE);
	e = mf_map(f, m);
	fz_result(f, OP_MF_MMAP, e ? -1 : 0, e, 0, "a new fence's page");
	if (e)
		return false;
	if (*m->v != initial)
		fz_failf(f, "%s: the fence reads %#llx, it starts at %#llx",
			 what, (unsigned long long)*m->v,
			 (unsigned long long)initial);
	if (mf_check(f, m->h, initial) ||
	    (initial != ~0ull && mf_check(f, m->h, initial + 1) != ETIME))
		fz_failf(f, "%s: MFENCE_WAIT does not see the fence at %#llx",
			 what, (unsigned long long)initial);
	if (!mf_queued_is(f, m->h, initial))
		fz_failf(f, "%s: EXPORT does not take %#llx as the last value queued",
			 what, (unsigned long long)initial);
	return true;
}

/* ------------------------------------------------------------------------ */
/* Anchors                                                                   */

/*
 * CTX_CREATE with @flags; its id in *@ctx and its fence, mapped, in *@m
 * (whose handle is 0 if the page cannot be mapped). 0 or the errno; ids
 * held by contexts being torn down are waited for (bounded).
 */
static int ctx_make(struct fz *f, uint32_t flags, uint32_t *ctx,
		    struct mfen *m)
{
	struct drm_qgpu_ctx_create c;
	int i, e = ENOSPC;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < 100 && e == ENOSPC; i++) {
		memset(&c, 0, sizeof(c));
		c.flags = flags;
		e = ioctl(f->fd, DRM_IOCTL_QGPU_CTX_CREATE, &c) ? errno : 0;
		if (e == ENOSPC) {
			/* all ids taken: ours go (ids come back later) */
			free_pool_contexts(f);
			usleep(10000);
		}
	}
	if (e)
		return e;
	*ctx = c.ctx;
	m->h = c.mfence;
	m->off = c.mfence_offset;
	m->mmap_off = c.mfence_mmap_offset;
	if (mf_map(f, m))
		m->h = 0;
	return 0;
}

/*
 * A context's first submission: a NOP that writes a unique value to the
 * context's own fence @m as a monitored out-sync (so that mf_ours() can
 * tell the fence from any other), after which the fence is one above it
 * (&drm_qgpu_submit.fence_value); waited for. 0 or the errno.
 */
static int ctx_first(struct fz *f, uint32_t ctx, struct mfen *m, int op)
{
	uint32_t nop = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 1), sync = 0;
	struct drm_qgpu_sync_entry out[2];
	struct drm_qgpu_submit s = {
		.dma = (uintptr_t)&nop, .dma_size = 4, .ctx = ctx,
		.out_syncs = (uintptr_t)out,
	};
	uint64_t uniq = mf_unique(f), want = m->h ? uniq + 1 : 1;
	int e;

	if (qgpu_syncobj_create(f->fd, &sync))
		return ENOMEM;
	out[0] = (struct drm_qgpu_sync_entry){ .handle = sync };
	out[1] = (struct drm_qgpu_sync_entry){
		.handle = m->h, .flags = QGPU_SYNC_MONITORED, .point = uniq,
	};
	s.num_out_syncs = m->h ? 2 : 1;
	e = fz_call(f, op, DRM_IOCTL_QGPU_SUBMIT, (uintptr_t)&s, 0,
		    "a new context's first submission");
	if (!e && s.fence_value != want)
		fz_failf(f, "a new context's first submission (its fence %s): fence value %#llx, expected %#llx",
			 m->h ? "written with a value" : "unknown",
			 (unsigned long long)s.fence_value,
			 (unsigned long long)want);
	if (!e && qs_wait_sync(f->fd, sync, VWAIT_S))
		fz_failf(f, "a new context's first submission did not complete within %d s",
			 VWAIT_S);
	qgpu_syncobj_destroy(f->fd, sync);
	if (e)
		return e;
	m->queued = s.fence_value;
	m->uniq = m->h ? uniq : 0;
	return 0;
}

/*
 * Is f->actx still the context the fuzzer made (the submissions it
 * counts), and fine?
 */
static bool actx_ok(struct fz *f)
{
	struct drm_qgpu_context_status cs;

	return f->actx && !qgpu_query_context(f->fd, f->actx, &cs) &&
	       cs.state == QGPU_CTX_OK && cs.submissions == f->asubs;
}

/* The anchors hostile calls start from exist (fuzzing may destroy them). */
static void anchors(struct fz *f)
{
	mf_anchors(f);
	if (!bo_alive(f, f->abo)) {
		f->abo = 0;
		qgpu_bo_create(f->fd, 65536, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			       QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0, &f->abo);
		qgpu_bo_reside(f->fd, f->abo, QGPU_RESIDE_MAKE_RESIDENT, 0,
			       NULL);
	}
	if (f->tiling && !bo_alive(f, f->tbo)) {
		/* tiled: the tiled side of a TILE */
		f->tbo = 0;
		qgpu_bo_create(f->fd, 65536, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			       QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_GEM_TILED,
			       0, &f->tbo);
	}
	if (!actx_ok(f)) {
		/* a new one: the fences the old one wrote go with it */
		if (f->actx)
			qgpu_ctx_destroy(f->fd, f->actx);
		f->actx = 0;
		mf_unmap(f, &f->amf);
		f->agen++;
		mf_drop_owned(f, OWN_ACTX);
		if (ctx_make(f, 0, &f->actx, &f->amf)) {
			f->actx = 0;
		} else if (ctx_first(f, f->actx, &f->amf, OP_SUBMIT)) {
			qgpu_ctx_destroy(f->fd, f->actx);
			f->actx = 0;
		}
		f->asubs = 1;
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
	case QGPU_QUERY_VIDMEM_INFO:
		/* one per segment group: local, non-local */
		return 2 * sizeof(struct drm_qgpu_vidmem_info);
	default:
		return sizeof(struct drm_qgpu_context_status);
	}
}

/* QueryVideoMemoryInfo's answer at @p, as "qgpu priorities..." says */
static void vidmem_check(struct fz *f, const struct drm_qgpu_query *q,
			 const void *p)
{
	const struct drm_qgpu_vidmem_info *vi = p;
	uint32_t g;

	if (q->count != 2 || q->size != 2 * sizeof(*vi)) {
		fz_failf(f, "QGPU_QUERY (vidmem): %u entries of %u bytes",
			 q->count, q->size);
		return;
	}
	for (g = 0; g < 2; g++)
		if (vi[g].group != g || vi[g].pad || vi[g].budget % 4096 ||
		    vi[g].budget > vi[g].size ||
		    vi[g].current_usage > vi[g].size)
			fz_failf(f, "QGPU_QUERY (vidmem): group %u (entry %u): budget %#llx, usage %#llx, size %#llx, pad %u",
				 vi[g].group, g,
				 (unsigned long long)vi[g].budget,
				 (unsigned long long)vi[g].current_usage,
				 (unsigned long long)vi[g].size, vi[g].pad);
}

static void fz_query(struct fz *f)
{
	struct drm_qgpu_query q;
	int mode = R(f) % 4, k, expect = EXPECT_ANY, e;
	uint32_t type = one_in(f, 6) ? QGPU_QUERY_VIDMEM_INFO : 1 + R(f) % 5;
	uint32_t need = query_need(f, type);
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
			/* the last type is QGPU_QUERY_VIDMEM_INFO (9) */
			q.type = pick64(f, (const uint64_t[]){ 0, 10, 11, 0xff, ~0u }, 5);
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
		q.type = one_in(f, 2) ? type : b32(f, QGPU_QUERY_VIDMEM_INFO);
		q.arg = one_in(f, 2) ? 0 : b32(f, f->dev->info.max_contexts);
		q.size = b32(f, need);
		q.ptr = fz_ptr(f, (int)(R(f) % NUM_P), NULL, 4096, 0);
	}
	a = argp(f, &q, sizeof(q), &k);
	e = fz_call(f, OP_QUERY, DRM_IOCTL_QGPU_QUERY, a,
		    arg_expect(k, expect), what);
	if (!e && mode == 0 && type == QGPU_QUERY_VIDMEM_INFO && q.ptr &&
	    (k == P_GOOD || k == P_MISALIGNED))
		vidmem_check(f, (const void *)(uintptr_t)a,
			     (const void *)(uintptr_t)q.ptr);
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
	uint32_t probe;
	uint64_t a;

	memset(&c, 0, sizeof(c));
	if (one_in(f, 2)) {
		/* bit 0 (QGPU_CTX_CREATE_VIRTUAL) is the one known flag */
		c.flags = 1u << (1 + R(f) % 31);
		if (one_in(f, 2))
			c.flags |= QGPU_CTX_CREATE_VIRTUAL;
		expect = EINVAL;
		what = "flag bit";
	} else if (f->mmu && one_in(f, 3)) {
		/* runs in the file's VM */
		c.flags = QGPU_CTX_CREATE_VIRTUAL;
		what = "virtual";
	} else if (one_in(f, 4)) {
		c.ctx = R32(f);		/* an output: ignored on input */
	}
	if (one_in(f, 4) && c.flags == QGPU_CTX_CREATE_VIRTUAL)
		c.ctx = R32(f);
	if (one_in(f, 4)) {
		/* outputs: ignored on input */
		c.mfence = R32(f);
		c.mfence_offset = R32(f);
		c.mfence_mmap_offset = R(f);
	}
	/* refused: no fence either (the next one's handle stays free) */
	probe = expect == EINVAL ? mf_probe(f) : 0;
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_CTX_CREATE, DRM_IOCTL_QGPU_CTX_CREATE, a,
		    arg_expect(k, expect), what);
	if (probe && mf_alive(f, probe))
		fz_failf(f, "QGPU_CTX_CREATE (%s): refused, but fence handle %u exists now",
			 what, probe);
	if (!e && (k == P_GOOD || k == P_MISALIGNED)) {
		const struct drm_qgpu_ctx_create *r = (void *)(uintptr_t)a;
		uint32_t id = r->ctx;
		struct mfen m = {
			.h = r->mfence, .off = r->mfence_offset,
			.mmap_off = r->mfence_mmap_offset,
		};

		/* its own fence, at 0, read-only */
		mf_new_check(f, &m, 0, "QGPU_CTX_CREATE's fence");
		mf_unmap(f, &m);
		if (c.flags & QGPU_CTX_CREATE_VIRTUAL)
			add_vctx(f, id);
		else
			add_ctx(f, id);
	}
	if (e == ENOSPC && (f->nctx || f->nvctx)) {
		/* all ids taken: give some back */
		uint32_t old = f->nvctx ? f->vctx[0] : f->ctx[0];

		forget_ctx(f, old);
		forget_vctx(f, old);
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
	if (!e) {
		forget_ctx(f, d.ctx);
		forget_vctx(f, d.ctx);
	}
	if (!e && d.ctx == f->actx)
		f->actx = 0;
	if (!e && d.ctx == f->avctx)
		f->avctx = 0;
}

/* ------------------------------------------------------------------------ */
/* Submit                                                                    */

/* Flags of pool allocation @h (QGPU_GEM_*) */
static uint32_t pool_flags(struct fz *f, uint32_t h)
{
	int i;

	for (i = 0; i < f->nbo; i++)
		if (f->bo[i] == h)
			return f->bo_flags[i];
	return h == f->tbo ? QGPU_GEM_TILED : 0;
}

/* A surface's width, height and pitch whose sides fit @tmax and @lmax */
static void tile_geometry(struct fz *f, uint64_t tmax, uint64_t lmax,
			  uint32_t *w, uint32_t *h, uint32_t *pitch)
{
	*w = one_in(f, 16) ? 0 : 1 + R32(f) % 40;
	*h = one_in(f, 16) ? 0 : 1 + R32(f) % 40;
	*pitch = 4 * *w + 4 * (R32(f) % 8);
	if (qgpu_tiled_size(*w, *h) > tmax ||
	    qgpu_linear_span(*w, *h, *pitch) > lmax) {
		/* one tile, 256 bytes each side */
		*w = 8;
		*h = 8;
		*pitch = 32;
	}
}

/* A 4-aligned offset in [0, @size - @len] (@len <= @size) */
static uint32_t off_in(struct fz *f, uint64_t size, uint64_t len)
{
	return 4 * (uint32_t)(R(f) % ((size - len) / 4 + 1));
}

/* A linear allocation of the pool (the anchor if none is found) */
static uint32_t linear_bo(struct fz *f)
{
	uint32_t h;
	int i;

	for (i = 0; i < 4 && f->nbo; i++) {
		h = f->bo[R(f) % f->nbo];
		if (!(pool_flags(f, h) & QGPU_GEM_TILED))
			return h;
	}
	return f->abo;
}

/*
 * A well-formed TILE: between a slot bound to a tiled allocation and one
 * bound to a linear one (bound here when no slot is), each range inside
 * its slot's bound size.
 */
static void build_tile(struct fz *f, struct qgpu_cb *cb, uint32_t *bound_size,
		       uint8_t *bound_tiled)
{
	uint32_t slots = f->dev->info.max_slots, ts = slots, ls = slots;
	uint32_t s, w, h, pitch, tlen, llen, lin;
	bool untile = one_in(f, 2);

	if (slots < 2)
		return;
	for (s = 0; s < slots; s++) {
		if (!bound_size[s] || bound_size[s] < 256)
			continue;
		if (bound_tiled[s] && (ts == slots || one_in(f, 2)))
			ts = s;
		if (!bound_tiled[s] && (ls == slots || one_in(f, 2)))
			ls = s;
	}
	if (ts == slots) {
		ts = R32(f) % slots;
		/* (a BIND's byte offset, or a negative errno) */
		if (!f->tbo || qgpu_cb_bind_flags(cb, ts, f->tbo, 0,
						  QGPU_CB_WHOLE,
						  QGPU_ALLOC_WRITE) < 0)
			return;
		bound_size[ts] = (uint32_t)size_of_bo(f, f->tbo);
		bound_tiled[ts] = 1;
		if (ls == ts)
			ls = slots;
	}
	if (ls == slots) {
		ls = (ts + 1 + R32(f) % (slots - 1)) % slots;
		lin = linear_bo(f);
		if (qgpu_cb_bind_flags(cb, ls, lin, 0, QGPU_CB_WHOLE,
				       QGPU_ALLOC_WRITE) < 0)
			return;
		bound_size[ls] = (uint32_t)size_of_bo(f, lin);
		bound_tiled[ls] = 0;
	}
	if (!bound_size[ts] || !bound_size[ls])
		return;
	tile_geometry(f, bound_size[ts], bound_size[ls], &w, &h, &pitch);
	tlen = (uint32_t)qgpu_tiled_size(w, h);
	llen = (uint32_t)qgpu_linear_span(w, h, pitch);
	if (untile)
		qgpu_cb_tile(cb, true, ls, off_in(f, bound_size[ls], llen), ts,
			     off_in(f, bound_size[ts], tlen), w, h, pitch);
	else
		qgpu_cb_tile(cb, false, ts, off_in(f, bound_size[ts], tlen),
			     ls, off_in(f, bound_size[ls], llen), w, h, pitch);
}

/* Random well-formed commands on slots bound to pool allocations. */
static void build_valid(struct fz *f, struct qgpu_cb *cb, uint32_t *bound_size,
			uint8_t *bound_tiled, int ncmd)
{
	uint32_t slots = f->dev->info.max_slots, s, s2, n, sz;
	int c;

	memset(bound_size, 0, sizeof(uint32_t) * slots);
	memset(bound_tiled, 0, slots);
	for (c = 0; c < ncmd; c++) {
		s = R32(f) % slots;
		s2 = R32(f) % slots;
		switch (R(f) % 12) {
		case 0:
		case 1: {
			uint32_t h = f->nbo && !one_in(f, 4) ?
				     f->bo[R(f) % f->nbo] : f->abo;
			uint64_t size;

			if (f->tbo && one_in(f, 8))
				h = f->tbo;
			size = size_of_bo(f, h);
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
			bound_tiled[s] = !!(pool_flags(f, h) & QGPU_GEM_TILED);
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
		case 10:
			if (f->tiling)
				build_tile(f, cb, bound_size, bound_tiled);
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

/*
 * A buffer whose TILE the kernel must refuse (EINVAL): the tiled anchor
 * and a linear allocation bound by BINDs before it, then a TILE with one
 * rule broken. Returns what is wrong, or NULL if nothing was built.
 */
static const char *bad_tile(struct fz *f, struct qgpu_cb *cb)
{
	uint32_t slots = f->dev->info.max_slots, ts, ls, lin, w, h, pitch;
	uint32_t dw[QGPU_DMA_TILE_LEN], toff, loff, x;
	uint64_t tsz, lsz, tlen, llen;
	bool untile = one_in(f, 2), flip = false;
	uint32_t hflags = 0;
	const char *what;

	if (!f->tbo || slots < 3)
		return NULL;
	ts = R32(f) % slots;
	ls = (ts + 1 + R32(f) % (slots - 1)) % slots;
	lin = linear_bo(f);
	tsz = size_of_bo(f, f->tbo);
	lsz = size_of_bo(f, lin);
	if (!tsz || !lsz || lsz > 0xfffff000u ||
	    qgpu_cb_bind_flags(cb, ts, f->tbo, 0, QGPU_CB_WHOLE,
			       QGPU_ALLOC_WRITE) < 0 ||
	    qgpu_cb_bind_flags(cb, ls, lin, 0, QGPU_CB_WHOLE,
			       QGPU_ALLOC_WRITE) < 0)
		return NULL;
	tile_geometry(f, tsz, lsz, &w, &h, &pitch);
	if (!w || !h) {
		w = 8;
		h = 8;
		pitch = 32;
	}
	tlen = qgpu_tiled_size(w, h);
	llen = qgpu_linear_span(w, h, pitch);
	toff = off_in(f, tsz, tlen);
	loff = off_in(f, lsz, llen);
	switch (R(f) % 8) {
	case 0:
		w = one_in(f, 2) ? ~0u : QGPU_TILE_MAX_DIM + 1 + R32(f) % 1000;
		what = "TILE width above the maximum";
		break;
	case 1:
		h = one_in(f, 2) ? ~0u : QGPU_TILE_MAX_DIM + 1 + R32(f) % 1000;
		what = "TILE height above the maximum";
		break;
	case 2:
		pitch = 4 * w + 1 + R32(f) % 3;
		what = "TILE pitch not a multiple of 4";
		break;
	case 3:
		pitch = 4 * w - 4 * (1 + R32(f) % w);
		what = "TILE pitch below 4 * width";
		break;
	case 4:
		switch (R(f) % 3) {
		case 0:
			/* a slot no BIND of the buffer touched */
			do
				x = R32(f) % slots;
			while (x == ts || x == ls);
			break;
		case 1:
			x = one_in(f, 2) ? ~0u : slots + R32(f) % 100;
			break;
		default:
			/* unbound again: the NULL allocation */
			qgpu_cb_unbind(cb, ts);
			x = ts;
			break;
		}
		ts = x;
		what = "TILE slot not bound";
		break;
	case 5:
		if (one_in(f, 2))
			toff = one_in(f, 2) ? (uint32_t)(tsz - tlen) + 4 *
			       (1 + R32(f) % 4) : (uint32_t)tsz + 4;
		else
			loff = one_in(f, 2) ? (uint32_t)(lsz - llen) + 4 *
			       (1 + R32(f) % 4) : (uint32_t)lsz + 4;
		what = "TILE range beyond its slot's bound size";
		break;
	case 6:
		/*
		 * The tiled side on the linear allocation, and back: one
		 * tile, which fits either way
		 */
		w = 8;
		h = 8;
		pitch = 32;
		toff = 0;
		loff = 0;
		flip = true;
		what = "TILE side on an allocation of the other layout";
		break;
	default:
		hflags = 2u << (R(f) % 7);	/* bit 0: QGPU_TILE_UNTILE */
		what = "TILE header flag";
		break;
	}
	dw[0] = QGPU_CMD_HDR(QGPU_DMA_TILE, hflags | ((untile != flip) ?
			     QGPU_TILE_UNTILE : 0), QGPU_DMA_TILE_LEN);
	dw[1] = untile ? ls : ts;
	dw[2] = untile ? loff : toff;
	dw[3] = untile ? ts : ls;
	dw[4] = untile ? toff : loff;
	dw[5] = w;
	dw[6] = h;
	dw[7] = pitch;
	qgpu_cb_emit_raw(cb, dw, QGPU_DMA_TILE_LEN);
	return what;
}

/*
 * Wait for a physical submission on actx (it signals f->psync) and check
 * that its fences got their values: actx's own the submission's
 * &drm_qgpu_submit.fence_value, every monitored out-sync its value.
 */
static void mf_reach(struct fz *f, uint64_t value,
		     const struct drm_qgpu_sync_entry *outs, int n)
{
	int ret = qs_wait_sync(f->fd, f->psync, VWAIT_S), i, j;
	const struct mfen *m;

	if (ret) {
		fz_failf(f, "QGPU_SUBMIT: a buffer on a physical context did not complete within %d s: %s",
			 VWAIT_S, strerror(-ret));
		return;
	}
	f->mfchecks++;
	if (f->amf.v && *f->amf.v < value)
		fz_failf(f, "QGPU_SUBMIT: the context's fence is at %#llx once the submission is done, its fence value was %#llx",
			 (unsigned long long)*f->amf.v,
			 (unsigned long long)value);
	if (f->amf.h && f->amf.v && mf_check(f, f->amf.h, value))
		fz_failf(f, "QGPU_MFENCE_WAIT: the context's fence did not reach %#llx (it reads %#llx)",
			 (unsigned long long)value,
			 (unsigned long long)*f->amf.v);
	for (i = 0; i < n; i++) {
		if (!(outs[i].flags & QGPU_SYNC_MONITORED))
			continue;
		m = NULL;
		for (j = 0; j < f->nmf; j++)
			if (f->mf[j].h == outs[i].handle)
				m = &f->mf[j];
		if (m && m->v && *m->v < outs[i].point)
			fz_failf(f, "QGPU_SUBMIT: monitored fence %u is at %#llx once the submission is done, it was to write %#llx",
				 m->h, (unsigned long long)*m->v,
				 (unsigned long long)outs[i].point);
	}
}

static void fz_submit(struct fz *f)
{
	struct drm_qgpu_sync_entry ins[12], outs[12];
	static uint32_t bound[4096];
	static uint8_t tiled[4096];
	struct drm_qgpu_context_status c0, c1;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, i, hc = -1;
	int nin, nout, owner, st;
	struct mfen *m, *w = NULL;
	const char *what = "valid";
	struct drm_qgpu_submit s;
	bool c0_ok = false;
	struct qgpu_cb cb;
	uint64_t a, x;
	size_t off;

	anchors(f);
	if (f->amf.h && !mf_ours(f, &f->amf))
		f->amf.h = 0;	/* closed by fuzzing: the mapping stays */
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
		nout = 0;
		goto call;
	}
	if (mode == 1)
		hc = (int)(R(f) % 25);
	if (hc == 22 && f->tiling) {
		what = bad_tile(f, &cb);
		if (!what) {
			qgpu_cb_fini(&cb);
			return;
		}
	} else {
		build_valid(f, &cb, bound, tiled, 1 + (int)(R(f) % 24));
	}
	if (hc != 22 && one_in(f, 16)) {
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
	qgpu_cb_to_submit(&cb, mode != 1 && f->nctx && one_in(f, 2) ?
			  f->ctx[R(f) % f->nctx] : f->actx, &s);
	/* monitored out-syncs only on actx: one context writes a fence */
	owner = s.ctx == f->actx ? OWN_ACTX : OWN_NONE;
	nin = fill_syncs(f, ins, 4, true);
	nin = fill_msyncs(f, ins, nin, 7, true, owner);
	nout = fill_syncs(f, outs, 4, false);
	nout = fill_msyncs(f, outs, nout, 7, false, owner);
	if (owner == OWN_ACTX && mode != 1)
		outs[nout++] = (struct drm_qgpu_sync_entry){
			.handle = f->psync,
		};
	s.num_in_syncs = nin;
	s.num_out_syncs = nout;
	s.in_syncs = (uintptr_t)ins;
	s.out_syncs = (uintptr_t)outs;
	if (mode == 1) {
		/* hostile: one field wrong (on a live context) */
		expect = EXPECT_FAIL;
		if (hc >= 18 && hc <= 21) {
			/*
			 * Only monitored in-syncs (exact books; a syncobj of
			 * the pool may have no fence: EINVAL first)
			 */
			for (i = nin = 0; i < (int)s.num_in_syncs; i++)
				if (ins[i].flags & QGPU_SYNC_MONITORED)
					ins[nin++] = ins[i];
			s.num_in_syncs = nin;
		}
		switch (hc) {
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
			i = (int)(R(f) % s.num_out_syncs);
			outs[i].handle = one_in(f, 2) ? 0 : dead_sync(f);
			outs[i].flags = 0;	/* a syncobj */
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
		case 18:
			/* a monitored in-sync whose value is not queued yet */
			m = pick_any_mf(f);
			if (!m)
				goto overlap;
			ins[nin++] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = m->queued + 1 +
					 (one_in(f, 2) ? 0 : R(f) % 1000),
			};
			s.num_in_syncs = nin;
			expect = EINVAL;
			what = "monitored in-sync not queued";
			break;
		case 19:
			/* a monitored out-sync not above the last queued */
			m = one_in(f, 3) && mf_ours(f, &f->amf) ? &f->amf :
			    pick_any_mf(f);
			if (!m)
				goto overlap;
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = one_in(f, 2) ? m->queued :
					 R(f) % (m->queued + 1),
			};
			s.num_out_syncs = nout;
			expect = EINVAL;
			what = "monitored out-sync not above the queued value";
			break;
		case 20:
			/* one fence twice, the second not above the first */
			m = pick_any_mf(f);
			if (!m)
				goto overlap;
			x = m->queued + 1 + R(f) % 4;
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = x,
			};
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = one_in(f, 2) ? x : m->queued + 1 +
					 R(f) % (x - m->queued),
			};
			s.num_out_syncs = nout;
			expect = EINVAL;
			what = "a monitored fence twice, not rising";
			break;
		case 21:
			/*
			 * A handle that names no monitored fence, first in its
			 * array: entries are checked in order, and this one is
			 * wrong whatever the others' values are now.
			 */
			if (one_in(f, 2)) {
				memmove(ins + 1, ins, nin * sizeof(*ins));
				ins[0] = (struct drm_qgpu_sync_entry){
					.handle = dead_mf(f),
					.flags = QGPU_SYNC_MONITORED,
				};
				s.num_in_syncs = ++nin;
			} else {
				/*
				 * In-syncs are checked before out-syncs, and
				 * one may name a syncobj with no fence yet
				 * (EINVAL): none then.
				 */
				s.num_in_syncs = nin = 0;
				memmove(outs + 1, outs, nout * sizeof(*outs));
				outs[0] = (struct drm_qgpu_sync_entry){
					.handle = dead_mf(f),
					.flags = QGPU_SYNC_MONITORED,
					.point = R(f),
				};
				s.num_out_syncs = ++nout;
			}
			expect = ENOENT;
			what = "no such monitored fence";
			break;
		case 22:
			if (f->tiling) {
				/* bad_tile() built the buffer */
				expect = EINVAL;
				break;
			}
			goto overlap;
		default:
overlap:
			/* overlapping arrays: in == out, argument in the DMA */
			expect = EXPECT_ANY;
			what = "overlapping arrays";
			s.out_syncs = s.in_syncs;
			s.num_out_syncs = s.num_in_syncs;
			break;
		}
		if (expect != EXPECT_ANY && s.out_syncs == (uintptr_t)outs &&
		    s.num_out_syncs == (uint32_t)nout) {
			/*
			 * Refused, so nothing may come of it: no submission,
			 * no fence for a syncobj, no value queued for a
			 * monitored fence (a witness: a value that would be
			 * queued).
			 */
			w = pick_mf(f);
			if (w && mf_usable(f, w, OWN_ACTX)) {
				w->owner = OWN_ACTX;
				w->gen = f->agen;
				outs[nout++] = (struct drm_qgpu_sync_entry){
					.handle = w->h,
					.flags = QGPU_SYNC_MONITORED,
					.point = w->queued + 5,
				};
			} else {
				w = NULL;
			}
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = f->usync,
			};
			s.num_out_syncs = nout;
			c0_ok = !qgpu_query_context(f->fd, f->actx, &c0);
			drmSyncobjReset(f->fd, &f->usync, 1);
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
	if (!e && f->actx && s.ctx == f->actx)
		f->asubs++;
	if (e && c0_ok && (k == P_GOOD || k == P_MISALIGNED)) {
		if (!qgpu_query_context(f->fd, f->actx, &c1) &&
		    c1.submissions != c0.submissions)
			fz_failf(f, "QGPU_SUBMIT (%s): %s, but the context counts %llu submissions, %llu before",
				 what, strerror(e),
				 (unsigned long long)c1.submissions,
				 (unsigned long long)c0.submissions);
		st = qs_sync_status(f->fd, f->usync);
		if (st > -1000) {
			fz_failf(f, "QGPU_SUBMIT (%s): %s, but its out-sync got a fence (%s)",
				 what, strerror(e), qs_status_name(st));
			drmSyncobjReset(f->fd, &f->usync, 1);
		}
		if (w && !mf_queued_is(f, w->h, w->queued))
			fz_failf(f, "QGPU_SUBMIT (%s): %s, but a monitored out-sync's value %#llx is queued",
				 what, strerror(e),
				 (unsigned long long)(w->queued + 5));
	}
	if (!e && mode != 3) {
		const struct drm_qgpu_submit *r = (void *)(uintptr_t)a;
		bool own = s.out_syncs == (uintptr_t)outs;

		/* the out-syncobjs have fences now */
		for (i = 0; own && i < (int)s.num_out_syncs && i < nout; i++) {
			int j;

			for (j = 0; j < f->nsync; j++)
				if (f->sync[j] == outs[i].handle &&
				    !(outs[i].flags & QGPU_SYNC_MONITORED))
					f->sync_fence[j] = true;
		}
		if (k != P_GOOD && k != P_MISALIGNED) {
			/* (fence_value not seen: anchors() sorts actx out) */
		} else if (s.ctx == f->actx && f->actx) {
			/* actx's fence advances by one, past what it writes */
			x = own ? mf_next(&f->amf, outs, s.num_out_syncs) : 0;
			if (own && mode != 1 && r->fence_value != x)
				fz_failf(f, "QGPU_SUBMIT (%s): fence value %#llx, the context's fence was to reach %#llx",
					 what,
					 (unsigned long long)r->fence_value,
					 (unsigned long long)x);
			if (r->fence_value > f->amf.queued)
				f->amf.queued = r->fence_value;
			if (own) {
				mf_queued(f, outs, s.num_out_syncs, OWN_ACTX);
				if (mode != 1 && one_in(f, 4))
					mf_reach(f, r->fence_value, outs,
						 s.num_out_syncs);
			}
		} else if (!r->fence_value) {
			fz_failf(f, "QGPU_SUBMIT (%s): accepted with fence value 0",
				 what);
		}
	}
	if (e == ECANCELED || (f->actx && s.ctx == f->actx))
		anchors(f);
	qgpu_cb_fini(&cb);
}

/* ------------------------------------------------------------------------ */
/* GPU virtual addressing: the address space                                 */

#define SZ_4K		0x1000ull
#define SZ_64K		0x10000ull
#define MAXRES		24	/* reservations the valid calls make at most */
/*
 * The fixed area: a reservation of the fuzzer's own at f->fva that the VM
 * ops never pick. f->rbo is mapped read-only at FIX_RO (a known pattern no
 * device write may change), f->obo read-write at FIX_OUT (what avctx's
 * checks write, read by the CPU), and the hole at FIX_HOLE stays unmapped:
 * another process maps its own data at the same addresses in its VM.
 */
#define FIX_RO		0ull
#define FIX_OUT		SZ_64K
#define FIX_HOLE	(2 * SZ_64K)
#define FIX_SIZE	(4 * SZ_64K)
#define FIX_SEED	0xf1f0u
#define OTHER_SEED	0x07e4u
#define OTHER_MFV	0x07e4000000000001ull	/* another file's fence */
#define MR_OFF		1441792		/* MAKE_RESIDENT's handles in rw */

/* The address space's reservations and mappings (QGPU_QUERY_VM_LAYOUT) */
struct lay {
	struct drm_qgpu_vm_layout_entry *e;
	unsigned int n;
};

static uint64_t ent_end(const struct drm_qgpu_vm_layout_entry *e)
{
	return e->start + e->size;
}

/* Do [a, a + s) and [b, b + t) meet? */
static bool meets(uint64_t a, uint64_t s, uint64_t b, uint64_t t)
{
	return a < b + t && b < a + s;
}

static bool in_fix(struct fz *f, uint64_t a, uint64_t s)
{
	return meets(a, s, f->fva, FIX_SIZE);
}

static void lay_get(struct fz *f, struct lay *l)
{
	int ret = qgpu_query_vm_layout(f->fd, &l->e, &l->n);

	if (ret) {
		fz_failf(f, "QUERY_VM_LAYOUT: %s", strerror(-ret));
		l->e = NULL;
		l->n = 0;
	}
}

static void lay_put(struct lay *l)
{
	free(l->e);
	l->e = NULL;
	l->n = 0;
}

/*
 * A random entry of @kind outside the fixed area (with @rw a read-write
 * mapping), or NULL.
 */
static const struct drm_qgpu_vm_layout_entry *
lay_pick(struct fz *f, const struct lay *l, uint32_t kind, bool rw)
{
	const struct drm_qgpu_vm_layout_entry *got = NULL;
	unsigned int i, n = 0;

	for (i = 0; i < l->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &l->e[i];

		if (e->kind != kind || in_fix(f, e->start, e->size) ||
		    (rw && (e->flags & QGPU_VM_MAP_READ_ONLY)))
			continue;
		if (R(f) % ++n == 0)
			got = e;
	}
	return got;
}

static unsigned int lay_count(struct fz *f, const struct lay *l, uint32_t kind)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->n; i++)
		if (l->e[i].kind == kind && !in_fix(f, l->e[i].start,
						     l->e[i].size))
			n++;
	return n;
}

static const struct drm_qgpu_vm_layout_entry *
lay_find(const struct lay *l, uint32_t kind, uint64_t start)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].kind == kind && l->e[i].start == start)
			return &l->e[i];
	return NULL;
}

/* The reservation that holds @a, or NULL */
static const struct drm_qgpu_vm_layout_entry *
lay_res_of(const struct lay *l, uint64_t a)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].kind == QGPU_VM_LAYOUT_RESERVED &&
		    l->e[i].start <= a && a < ent_end(&l->e[i]))
			return &l->e[i];
	return NULL;
}

/* The same reservations and mappings (where an allocation is may change) */
static bool lay_same(const struct lay *a, const struct lay *b)
{
	unsigned int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->e[i].start != b->e[i].start ||
		    a->e[i].size != b->e[i].size ||
		    a->e[i].kind != b->e[i].kind ||
		    a->e[i].flags != b->e[i].flags ||
		    a->e[i].offset != b->e[i].offset)
			return false;
	return true;
}

/* A refused call changed nothing: the layout is still @before. */
static void lay_expect_same(struct fz *f, const struct lay *before, int op,
			    const char *what)
{
	struct lay now;

	lay_get(f, &now);
	if (!lay_same(before, &now))
		fz_failf(f, "%s (%s): refused, but the address space changed (%u entries before, %u after)",
			 op_name[op], what, before->n, now.n);
	lay_put(&now);
}

/* Where a non-fixed reservation of @size must go: the lowest free range */
static uint64_t lay_lowest_free(struct fz *f, const struct lay *l,
				uint64_t size)
{
	uint64_t at = f->va_start;
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &l->e[i];

		if (e->kind != QGPU_VM_LAYOUT_RESERVED)
			continue;
		if (at + size <= e->start)
			break;
		if (ent_end(e) > at)
			at = (ent_end(e) + SZ_64K - 1) & ~(SZ_64K - 1);
	}
	return at + size <= f->va_end ? at : 0;
}

static bool lay_reserved(const struct lay *l, uint64_t a, uint64_t s)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].kind == QGPU_VM_LAYOUT_RESERVED &&
		    meets(a, s, l->e[i].start, l->e[i].size))
			return true;
	return false;
}

/*
 * A 64 KiB aligned range of @size that no reservation meets: right after
 * or before one, at the top, or anywhere. 0 if none was found.
 */
static uint64_t lay_free_at(struct fz *f, const struct lay *l, uint64_t size)
{
	const struct drm_qgpu_vm_layout_entry *r;
	uint64_t a;
	int i;

	for (i = 0; i < 8; i++) {
		r = lay_pick(f, l, QGPU_VM_LAYOUT_RESERVED, false);
		switch (R(f) % 5) {
		case 0:
			a = r ? ent_end(r) : f->va_start;
			break;
		case 1:
			a = r ? r->start - size : f->va_start;
			break;
		case 2:
			a = f->va_end - size;
			break;
		case 3:
			/* anywhere */
			a = f->va_start + R(f) % ((f->va_end - f->va_start) /
						  SZ_64K) * SZ_64K;
			break;
		default:
			/* near the start, where tables are shared */
			a = f->va_start + R(f) % 4096 * SZ_64K;
			break;
		}
		if (a >= f->va_start && a <= f->va_end - size &&
		    !lay_reserved(l, a, size))
			return a;
	}
	return 0;
}

/*
 * A random unmapped range inside reservation @r: its length (0: none),
 * its start in *at.
 */
static uint64_t lay_gap(struct fz *f, const struct lay *l,
			const struct drm_qgpu_vm_layout_entry *r, uint64_t *at)
{
	uint64_t cur = r->start, end = ent_end(r), len = 0, s;
	unsigned int i, n = 0;

	for (i = 0; i <= l->n; i++) {
		s = end;
		if (i < l->n) {
			if (l->e[i].kind != QGPU_VM_LAYOUT_MAPPING ||
			    l->e[i].start < r->start || l->e[i].start >= end)
				continue;
			s = l->e[i].start;
		}
		if (s > cur && R(f) % ++n == 0) {
			*at = cur;
			len = s - cur;
		}
		if (i < l->n)
			cur = ent_end(&l->e[i]);
	}
	return len;
}

/* Bytes mapped in [a, a + s) */
static uint64_t lay_mapped_in(const struct lay *l, uint64_t a, uint64_t s)
{
	uint64_t n = 0, lo, hi;
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &l->e[i];

		if (e->kind != QGPU_VM_LAYOUT_MAPPING ||
		    !meets(a, s, e->start, e->size))
			continue;
		lo = e->start > a ? e->start : a;
		hi = ent_end(e) < a + s ? ent_end(e) : a + s;
		n += hi - lo;
	}
	return n;
}

/*
 * Is [a, a + s) of mapping @m still mapped in @l, by one mapping with the
 * same flags and the same allocation offsets?
 */
static bool lay_still_mapped(const struct lay *l,
			     const struct drm_qgpu_vm_layout_entry *m,
			     uint64_t a, uint64_t s)
{
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &l->e[i];

		if (e->kind == QGPU_VM_LAYOUT_MAPPING && e->start <= a &&
		    a + s <= ent_end(e) && e->flags == m->flags &&
		    e->offset + (a - e->start) == m->offset + (a - m->start))
			return true;
	}
	return false;
}

/*
 * After VM_UNMAP of [a, a + s) (or VM_FREE of that reservation): nothing
 * mapped there, every other part of every mapping as it was, and the
 * reservations the same (but the freed one).
 */
static void lay_check_unmap(struct fz *f, const struct lay *before,
			    uint64_t a, uint64_t s, bool freed,
			    const char *what)
{
	uint64_t lost = lay_mapped_in(before, a, s), b0 = 0, b1 = 0;
	unsigned int i, r0 = 0, r1 = 0;
	struct lay now;

	lay_get(f, &now);
	for (i = 0; i < now.n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &now.e[i];

		if (e->kind == QGPU_VM_LAYOUT_MAPPING) {
			b1 += e->size;
			if (meets(a, s, e->start, e->size))
				fz_failf(f, "VM %s of %#llx+%#llx: %#llx+%#llx still mapped",
					 what, (unsigned long long)a,
					 (unsigned long long)s,
					 (unsigned long long)e->start,
					 (unsigned long long)e->size);
		}
	}
	for (i = 0; i < before->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &before->e[i];

		if (e->kind == QGPU_VM_LAYOUT_RESERVED) {
			bool gone = freed && e->start == a && e->size == s;

			if (!gone && !lay_find(&now, QGPU_VM_LAYOUT_RESERVED,
					       e->start))
				fz_failf(f, "VM %s of %#llx+%#llx took away the reservation at %#llx",
					 what, (unsigned long long)a,
					 (unsigned long long)s,
					 (unsigned long long)e->start);
			continue;
		}
		b0 += e->size;
		/* the parts outside the range stay as they were */
		if ((e->start < a &&
		     !lay_still_mapped(&now, e, e->start,
				       (ent_end(e) < a ? ent_end(e) : a) -
				       e->start)) ||
		    (ent_end(e) > a + s &&
		     !lay_still_mapped(&now, e, e->start > a + s ? e->start :
				       a + s, ent_end(e) -
				       (e->start > a + s ? e->start : a + s))))
			fz_failf(f, "VM %s of %#llx+%#llx changed the mapping %#llx+%#llx outside it",
				 what, (unsigned long long)a,
				 (unsigned long long)s,
				 (unsigned long long)e->start,
				 (unsigned long long)e->size);
	}
	for (i = 0; i < before->n; i++)
		r0 += before->e[i].kind == QGPU_VM_LAYOUT_RESERVED;
	for (i = 0; i < now.n; i++)
		r1 += now.e[i].kind == QGPU_VM_LAYOUT_RESERVED;
	if (r1 != r0 - freed)
		fz_failf(f, "VM %s of %#llx+%#llx: %u reservations before, %u after",
			 what, (unsigned long long)a, (unsigned long long)s,
			 r0, r1);
	if (b1 != b0 - lost)
		fz_failf(f, "VM %s of %#llx+%#llx: %#llx bytes mapped after it, expected %#llx",
			 what, (unsigned long long)a, (unsigned long long)s,
			 (unsigned long long)b1,
			 (unsigned long long)(b0 - lost));
	lay_put(&now);
}

/* ------------------------------------------------------------------------ */
/* GPU virtual addressing: the fuzzer's own objects                          */

#define VIS_APT		(QGPU_SEGBIT(QGPU_SEG_VISIBLE) | \
			 QGPU_SEGBIT(QGPU_SEG_APERTURE))

/* A CPU-accessible 64 KiB allocation, locked and mapped. 0 on success. */
static int cpu_bo(int fd, uint32_t *h, volatile uint32_t **map)
{
	void *p = NULL;
	int ret;

	*h = 0;
	ret = qgpu_bo_create(fd, SZ_64K, VIS_APT, QGPU_GEM_CPU_ACCESS, 0, h);
	if (!ret)
		ret = qgpu_bo_map(fd, *h, SZ_64K, &p);
	*map = p;
	return ret;
}

/*
 * (Re)build the fixed area: the reservation, f->rbo with its pattern
 * mapped read-only, f->obo mapped read-write and CPU-mapped. Handles of an
 * earlier build stay until the file is closed (the fuzzing may have given
 * their numbers to others).
 */
static int fix_make(struct fz *f)
{
	volatile uint32_t *p;
	int ret;

	if (f->out)
		munmap((void *)f->out, SZ_64K);
	f->out = NULL;
	ret = cpu_bo(f->fd, &f->rbo, &p);
	if (!ret) {
		qgpu_pattern_fill((void *)p, SZ_64K, FIX_SEED);
		qgpu_bo_unmap(f->fd, f->rbo, (void *)p, SZ_64K);
		ret = cpu_bo(f->fd, &f->obo, &f->out);
	}
	if (!ret) {
		memset((void *)f->out, 0, SZ_64K);
		ret = qgpu_vm_reserve(f->fd, f->fva, FIX_SIZE,
				      QGPU_VM_RESERVE_FIXED, NULL);
	}
	if (!ret)
		ret = qgpu_vm_map(f->fd, f->rbo, f->fva + FIX_RO, 0, SZ_64K,
				  QGPU_VM_MAP_READ_ONLY);
	if (!ret)
		ret = qgpu_vm_map(f->fd, f->obo, f->fva + FIX_OUT, 0, SZ_64K,
				  0);
	return ret;
}

/* Is the fixed area in @l as fix_make() left it? */
static bool fix_ok(struct fz *f, const struct lay *l)
{
	const struct drm_qgpu_vm_layout_entry *r, *ro, *rw;
	unsigned int i, n = 0;

	r = lay_find(l, QGPU_VM_LAYOUT_RESERVED, f->fva);
	ro = lay_find(l, QGPU_VM_LAYOUT_MAPPING, f->fva + FIX_RO);
	rw = lay_find(l, QGPU_VM_LAYOUT_MAPPING, f->fva + FIX_OUT);
	for (i = 0; i < l->n; i++)
		n += in_fix(f, l->e[i].start, l->e[i].size);
	return n == 3 && r && r->size == FIX_SIZE && ro && ro->size == SZ_64K &&
	       ro->offset == 0 && ro->flags == QGPU_VM_MAP_READ_ONLY && rw &&
	       rw->size == SZ_64K && rw->offset == 0 && rw->flags == 0;
}

static int vctx_new(struct fz *f, uint32_t *ctx)
{
	int i, ret = -ENOSPC;

	for (i = 0; i < 100 && ret == -ENOSPC; i++) {
		ret = qgpu_ctx_create_flags(f->fd, QGPU_CTX_CREATE_VIRTUAL,
					    ctx);
		if (ret == -ENOSPC) {
			/* all ids taken: ours go (ids come back later) */
			free_pool_contexts(f);
			usleep(10000);
		}
	}
	return ret;
}

/*
 * Is f->avctx still the context of well-formed buffers it was made as?
 * Fuzzing may destroy it (raw ioctl numbers too) and give its id to a new
 * context: the submissions it counts tell.
 */
static bool avctx_ours(struct fz *f, struct drm_qgpu_context_status *cs)
{
	return f->avctx && qgpu_query_context(f->fd, f->avctx, cs) == 0 &&
	       cs->submissions == f->avsubs;
}

/*
 * A new avctx; with @ours, the old one is ours (lost) and goes first. The
 * fences the old one wrote go with it.
 */
static void avctx_make(struct fz *f, bool ours)
{
	if (ours && f->avctx)
		qgpu_ctx_destroy(f->fd, f->avctx);
	f->avctx = 0;
	mf_unmap(f, &f->avmf);
	f->avgen++;
	f->avq_vsync = 0;
	mf_drop_owned(f, OWN_AVCTX);
	if (ctx_make(f, QGPU_CTX_CREATE_VIRTUAL, &f->avctx, &f->avmf)) {
		f->avctx = 0;
		return;
	}
	/* one buffer at once, so that a replacement with none shows */
	if (ctx_first(f, f->avctx, &f->avmf, OP_VSUBMIT)) {
		qgpu_ctx_destroy(f->fd, f->avctx);
		f->avctx = 0;
	}
	f->avsubs = 1;
}

/* Report avctx's state: well-formed buffers never fault. */
static void avctx_lost(struct fz *f, const struct drm_qgpu_context_status *cs,
		       const char *when)
{
	fz_failf(f, "the virtual context of well-formed buffers is %s (%s): fault %s at buffer offset %#x, address %#llx",
		 qgpu_ctx_state_name(cs->state), when,
		 qgpu_fault_name(cs->fault_reason), cs->fault_offset,
		 (unsigned long long)cs->fault_addr);
}

/*
 * The objects the virtual ops start from exist; returns the layout. A
 * fixed area taken apart by raw ioctl numbers is built again.
 */
static void vanchors(struct fz *f, struct lay *l)
{
	struct drm_qgpu_context_status cs;
	uint32_t *s[] = { &f->vsync, &f->fsync, &f->usync };
	unsigned int i;

	anchors(f);
	for (i = 0; i < ARRAY_SIZE(s); i++)
		if (!sync_alive(f, *s[i]))
			qgpu_syncobj_create(f->fd, s[i]);
	if (!avctx_ours(f, &cs)) {
		avctx_make(f, false);
	} else if (cs.state != QGPU_CTX_OK) {
		avctx_lost(f, &cs, "seen later");
		avctx_make(f, true);
	}
	lay_get(f, l);
	if (fix_ok(f, l))
		return;
	for (i = 0; i < l->n; i++)
		if (l->e[i].kind == QGPU_VM_LAYOUT_RESERVED &&
		    in_fix(f, l->e[i].start, l->e[i].size))
			qgpu_vm_free(f->fd, l->e[i].start, l->e[i].size);
	if (fix_make(f))
		fz_failf(f, "building the fixed area again failed");
	f->fix_rebuilt++;
	lay_put(l);
	lay_get(f, l);
}

/* A live allocation of the pool (the anchor if none), its size in *size */
static uint32_t live_bo(struct fz *f, uint64_t *size)
{
	uint32_t h = f->abo;
	int i;

	*size = 0;
	for (i = 0; i < 4 && !*size; i++) {
		h = f->nbo && !one_in(f, 8) ? f->bo[R(f) % f->nbo] : f->abo;
		*size = size_of_bo(f, h);
	}
	return h;
}

/* A handle of another file, not one of this file (or a dead one) */
static uint32_t foreign_bo(struct fz *f)
{
	return f->oh && !bo_alive(f, f->oh) ? f->oh : dead_bo(f);
}

/* ------------------------------------------------------------------------ */
/* VM_RESERVE, VM_FREE, VM_MAP, VM_UNMAP                                     */

static bool vcheck(struct fz *f, uint64_t seq, const char *when);
static void vfault_at(struct fz *f, uint64_t va, const char *what);

/*
 * VM_UNMAP and VM_FREE go behind the process's queued work on the
 * allocations: the well-formed buffers queued on avctx before them still
 * find their mappings (they must not fault), and a buffer queued after
 * them faults where the mappings were (vfault_at(), now and then).
 */
static void after_unmap(struct fz *f, const struct lay *before, uint64_t a,
			uint64_t s, const char *what)
{
	const struct drm_qgpu_vm_layout_entry *m = NULL;
	uint64_t lo, hi;
	unsigned int i, n = 0;

	if (!one_in(f, 6))
		return;
	for (i = 0; i < before->n; i++)
		if (before->e[i].kind == QGPU_VM_LAYOUT_MAPPING &&
		    meets(a, s, before->e[i].start, before->e[i].size) &&
		    R(f) % ++n == 0)
			m = &before->e[i];
	if (!m)
		return;
	lo = m->start > a ? m->start : a;
	hi = ent_end(m) < a + s ? ent_end(m) : a + s;
	vfault_at(f, lo + 8 * (R(f) % ((hi - lo) / 8)), what);
}

static void fz_vm_reserve(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry fixres = {
		.start = f->fva, .size = FIX_SIZE,
		.kind = QGPU_VM_LAYOUT_RESERVED,
	};
	const struct drm_qgpu_vm_layout_entry *o;
	struct drm_qgpu_vm_reserve r;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, alt = 0;
	const char *what = "random";
	bool refused = false, valid = false;
	uint64_t want = 0, a, free64;
	struct lay l;

	vanchors(f, &l);
	memset(&r, 0, sizeof(r));
	r.size = SZ_64K * (1 + R(f) % 16);
	o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
	if (!o || one_in(f, 4))
		o = &fixres;
	free64 = lay_free_at(f, &l, SZ_64K);
	if (mode == 0 && lay_count(f, &l, QGPU_VM_LAYOUT_RESERVED) < MAXRES) {
		expect = 0;
		valid = true;
		if (one_in(f, 3)) {
			r.flags = QGPU_VM_RESERVE_FIXED;
			r.addr = want = lay_free_at(f, &l, r.size);
			what = "valid fixed";
		} else {
			want = lay_lowest_free(f, &l, r.size);
			what = "valid";
		}
		if (!want) {
			lay_put(&l);
			return;
		}
	} else if (mode <= 1) {
		/* one field wrong: refused, and nothing changes */
		refused = true;
		expect = EINVAL;
		switch (R(f) % 9) {
		case 0:
			r.flags = 1u << (1 + R(f) % 31);
			if (one_in(f, 2) && free64) {
				r.flags |= QGPU_VM_RESERVE_FIXED;
				r.addr = free64;
				r.size = SZ_64K;
			}
			what = "unknown flag";
			break;
		case 1:
			r.pad = 1u << (R(f) % 32);
			what = "pad not zero";
			break;
		case 2:
			r.size = pick64(f, (const uint64_t[]){ 0, 1, SZ_4K,
				SZ_64K - SZ_4K, SZ_64K + SZ_4K, 3 * SZ_64K / 2,
				SZ_64K + 1 }, 7);
			what = "size not a multiple of 64K";
			break;
		case 3:
			r.addr = pick64(f, (const uint64_t[]){ 1, SZ_64K,
				f->va_start, free64 ? free64 : SZ_64K }, 4);
			what = "address without FIXED";
			break;
		case 4:
			if (!free64)
				goto wrong_size;
			r.flags = QGPU_VM_RESERVE_FIXED;
			r.addr = free64 + pick64(f, (const uint64_t[]){ 1, 8,
				SZ_4K, SZ_64K / 2, SZ_64K - SZ_4K }, 5);
			r.size = SZ_64K;
			what = "fixed address not 64K aligned";
			break;
		case 5:
			/* below what a process may reserve */
			r.flags = QGPU_VM_RESERVE_FIXED;
			if (f->va_start < SZ_64K)
				goto outside;
			r.addr = one_in(f, 2) ? 0 : f->va_start - SZ_64K;
			r.size = one_in(f, 2) ? SZ_64K : f->va_start - r.addr +
				 SZ_64K;
			what = "fixed below va_start";
			break;
		case 6:
outside:
			r.flags = QGPU_VM_RESERVE_FIXED;
			switch (R(f) % 6) {
			case 0:
				r.addr = f->va_end;
				r.size = SZ_64K;
				break;
			case 1:
				r.addr = f->va_end - SZ_64K;
				r.size = 2 * SZ_64K;
				break;
			case 2:
				r.addr = f->va_size;
				r.size = SZ_64K;
				break;
			case 3:
				r.addr = ~(SZ_64K - 1);
				r.size = 2 * SZ_64K;
				break;
			case 4:
				r.addr = 1ull << 63;
				r.size = SZ_64K;
				break;
			default:
				r.addr = f->va_start;
				r.size = f->va_end - f->va_start + SZ_64K;
				break;
			}
			what = "fixed beyond va_end";
			break;
		case 7:
			/* overlapping a reservation, each way */
			r.flags = QGPU_VM_RESERVE_FIXED;
			r.addr = o->start;
			r.size = o->size;
			switch (R(f) % 5) {
			case 0:
				if (o->start - SZ_64K >= f->va_start) {
					r.addr = o->start - SZ_64K;
					r.size = 2 * SZ_64K;
				}
				break;
			case 1:
				if (ent_end(o) + SZ_64K <= f->va_end) {
					r.addr = ent_end(o) - SZ_64K;
					r.size = 2 * SZ_64K;
				}
				break;
			case 2:
				if (o->start - SZ_64K >= f->va_start &&
				    ent_end(o) + SZ_64K <= f->va_end) {
					r.addr = o->start - SZ_64K;
					r.size = o->size + 2 * SZ_64K;
				}
				break;
			case 3:
				r.addr = o->start + SZ_64K *
					 (R(f) % (o->size / SZ_64K));
				r.size = SZ_64K;
				break;
			default:
				break;
			}
			expect = EEXIST;
			what = "fixed over a reservation";
			break;
		default:
wrong_size:
			/* as big as the whole space: no free range with ours */
			r.size = f->va_end - f->va_start;
			expect = ENOSPC;
			what = "no free range";
			if (one_in(f, 2)) {
				/* bigger: refused, one way or another */
				r.size = one_in(f, 2) ? ~(SZ_64K - 1) :
					 r.size + SZ_64K;
				expect = EINVAL;
				alt = ENOSPC;
				what = "larger than the address space";
			}
			break;
		}
	} else {
		r.addr = one_in(f, 2) ? 0 : one_in(f, 2) ? free64 :
			 b64(f, f->va_end);
		r.size = one_in(f, 2) ? r.size : b64(f, 16 * SZ_64K);
		r.flags = b32(f, QGPU_VM_RESERVE_FIXED);
		r.pad = one_in(f, 4) ? R32(f) : 0;
	}
	a = argp(f, &r, sizeof(r), &k);
	e = fz_call(f, OP_VM_RESERVE, DRM_IOCTL_QGPU_VM_RESERVE, a,
		    arg_expect(k, alt ? EXPECT_FAIL : expect), what);
	if (alt && (k == P_GOOD || k == P_MISALIGNED) && e != expect &&
	    e != alt)
		fz_failf(f, "QGPU_VM_RESERVE (%s): returned %s, must be %s or %s",
			 what, e ? strerror(e) : "success", strerror(expect),
			 strerror(alt));
	if (refused) {
		lay_expect_same(f, &l, OP_VM_RESERVE, what);
	} else if (valid && !e && (k == P_GOOD || k == P_MISALIGNED)) {
		const struct drm_qgpu_vm_reserve *res = (void *)(uintptr_t)a;
		struct lay now;

		/* exactly that range, and nothing else, is reserved now */
		lay_get(f, &now);
		if (res->addr != want)
			fz_failf(f, "QGPU_VM_RESERVE (%s) of %#llx bytes: at %#llx, expected %#llx (the lowest free range)",
				 what, (unsigned long long)r.size,
				 (unsigned long long)res->addr,
				 (unsigned long long)want);
		o = lay_find(&now, QGPU_VM_LAYOUT_RESERVED, res->addr);
		if (!o || o->size != r.size || now.n != l.n + 1)
			fz_failf(f, "QGPU_VM_RESERVE (%s) of %#llx+%#llx: not what the layout shows",
				 what, (unsigned long long)res->addr,
				 (unsigned long long)r.size);
		lay_put(&now);
	}
	lay_put(&l);
}

static void fz_vm_free(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry fixres = {
		.start = f->fva, .size = FIX_SIZE,
		.kind = QGPU_VM_LAYOUT_RESERVED,
	};
	const struct drm_qgpu_vm_layout_entry *o, *b;
	struct drm_qgpu_vm_info v0, v1;
	struct drm_qgpu_vm_range r;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	const char *what = "random";
	bool refused = false;
	uint64_t a, in = 0;
	struct lay l;

	vanchors(f, &l);
	o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
	b = o && !one_in(f, 4) ? o : &fixres;
	memset(&r, 0, sizeof(r));
	if (mode == 0 && o) {
		r.addr = o->start;
		r.size = o->size;
		expect = 0;
		what = "valid";
	} else if (mode <= 1) {
		/* the range is not exactly one reservation, or is bad */
		refused = true;
		r.addr = b->start;
		r.size = b->size;
		expect = ENOENT;
		switch (R(f) % 9) {
		case 0:
			r.size -= b->size > SZ_64K ? SZ_64K : SZ_4K;
			what = "the start of a reservation";
			break;
		case 1:
			r.addr += SZ_4K;
			r.size -= SZ_4K;
			what = "the end of a reservation";
			break;
		case 2:
			if (ent_end(b) + SZ_64K > f->va_end)
				goto not_reserved;
			r.size += SZ_64K;
			what = "more than a reservation";
			break;
		case 3:
			r.addr -= SZ_64K;
			r.size += SZ_64K;
			what = "before and over a reservation";
			if (b->start < f->va_start + SZ_64K) {
				/* not in the process's part at all */
				expect = EINVAL;
				what = "from below va_start over a reservation";
			}
			break;
		case 4:
not_reserved:
			r.addr = lay_free_at(f, &l, SZ_64K);
			r.size = SZ_64K;
			what = "not reserved";
			if (!r.addr) {
				r.addr = b->start;
				r.size = 0;
				expect = EINVAL;
			}
			break;
		case 5:
			r.addr += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 1 }, 4);
			expect = EINVAL;
			what = "address not 4K aligned";
			break;
		case 6:
			r.size += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 4 }, 4);
			expect = EINVAL;
			what = "size not 4K aligned";
			break;
		case 7:
			r.size = 0;
			expect = EINVAL;
			what = "size 0";
			break;
		default:
			/* beyond the VA size, or the process's part of it */
			switch (R(f) % 7) {
			case 0:
				r.addr = f->va_size - SZ_4K;
				r.size = 2 * SZ_4K;
				break;
			case 1:
				r.addr = f->va_size;
				r.size = SZ_4K;
				break;
			case 2:
				r.addr = ~(SZ_4K - 1);
				r.size = 2 * SZ_4K;
				break;
			case 3:
				r.addr = 1ull << 63;
				r.size = SZ_4K;
				break;
			case 4:
				r.addr = f->va_end - SZ_4K;
				r.size = 2 * SZ_4K;
				break;
			case 5:
				if (f->va_start >= SZ_4K) {
					r.addr = f->va_start - SZ_4K;
					r.size = 2 * SZ_4K;
					break;
				}
				/* fall through */
			default:
				r.size = ~(SZ_4K - 1);	/* wraps */
				break;
			}
			expect = EINVAL;
			what = "outside the process's part of the VA space";
			break;
		}
	} else {
		r.addr = o && one_in(f, 2) ? o->start : b64(f, f->va_end);
		r.size = o && one_in(f, 2) ? o->size : b64(f, 16 * SZ_64K);
	}
	in = lay_mapped_in(&l, r.addr, r.size);
	qgpu_query_vm_info(f->fd, &v0);
	a = argp(f, &r, sizeof(r), &k);
	e = fz_call(f, OP_VM_FREE, DRM_IOCTL_QGPU_VM_FREE, a,
		    arg_expect(k, expect), what);
	if (refused) {
		lay_expect_same(f, &l, OP_VM_FREE, what);
	} else if (!e) {
		/* (whatever was asked, an accepted VM_FREE freed one) */
		lay_check_unmap(f, &l, r.addr, r.size, true, "FREE");
		qgpu_query_vm_info(f->fd, &v1);
		if (v1.reserved_bytes != v0.reserved_bytes - r.size ||
		    v1.mapped_bytes != v0.mapped_bytes - in)
			fz_failf(f, "QGPU_VM_FREE of %#llx+%#llx (%#llx mapped): reserved %#llx -> %#llx, mapped %#llx -> %#llx",
				 (unsigned long long)r.addr,
				 (unsigned long long)r.size,
				 (unsigned long long)in,
				 (unsigned long long)v0.reserved_bytes,
				 (unsigned long long)v1.reserved_bytes,
				 (unsigned long long)v0.mapped_bytes,
				 (unsigned long long)v1.mapped_bytes);
		after_unmap(f, &l, r.addr, r.size,
			    "a buffer queued after VM_FREE");
	}
	lay_put(&l);
}

static void fz_vm_map(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry *o, *mp;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	uint64_t hsize, gap = 0, at = 0, a, n, x, base;
	const char *what = "random";
	struct drm_qgpu_vm_map m;
	bool refused = false;
	struct lay l;

	vanchors(f, &l);
	memset(&m, 0, sizeof(m));
	m.handle = live_bo(f, &hsize);
	m.flags = one_in(f, 3) ? QGPU_VM_MAP_READ_ONLY : 0;
	o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
	if (o && hsize)
		gap = lay_gap(f, &l, o, &at);
	if (gap) {
		/* the valid call the hostile ones change one field of */
		n = gap < hsize ? gap : hsize;
		if (n > 64 * SZ_4K)
			n = 64 * SZ_4K;
		m.size = SZ_4K * (1 + R(f) % (n / SZ_4K));
		m.offset = SZ_4K * (R(f) % ((hsize - m.size) / SZ_4K + 1));
		m.addr = at + SZ_4K * (R(f) % ((gap - m.size) / SZ_4K + 1));
		if (one_in(f, 2)) {
			/* where 64 KiB pages can be used */
			uint64_t a64 = (at + SZ_64K - 1) & ~(SZ_64K - 1);

			if (a64 + m.size <= at + gap)
				m.addr = a64;
			if (hsize >= SZ_64K + m.size && one_in(f, 2))
				m.offset &= ~(SZ_64K - 1);
		}
	}
	if (mode == 0 && gap) {
		what = m.flags ? "valid read-only" : "valid";
	} else if (mode <= 1 && gap) {
		refused = true;
		expect = EINVAL;
		switch (R(f) % 9) {
		case 0:
bad_flag:
			m.flags |= 1u << (1 + R(f) % 31);
			what = "unknown flag";
			break;
		case 1:
			/* (in the gap: an overlap would be a second fault) */
			if (m.addr + m.size + SZ_4K > at + gap) {
				if (m.size > SZ_4K)
					m.size -= SZ_4K;
				else if (m.addr > at)
					m.addr -= SZ_4K;
				else
					goto bad_flag;
			}
			m.addr += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 1 }, 4);
			what = "address not 4K aligned";
			break;
		case 2:
			m.offset += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 4 }, 4);
			what = "offset not 4K aligned";
			break;
		case 3:
			x = pick64(f, (const uint64_t[]){ 0, 1, 8, 2048,
				SZ_4K - 4 }, 5);
			m.size = x ? m.size - SZ_4K + x : 0;
			what = "size 0 or not 4K aligned";
			break;
		case 4:
			/* offset + size beyond the allocation, or wrapping */
			switch (R(f) % 3) {
			case 0:
				m.offset = hsize;
				m.size = SZ_4K;
				break;
			case 1:
				m.offset = hsize - m.size + SZ_4K;
				break;
			default:
				m.offset = ~(SZ_4K - 1);
				break;
			}
			what = "beyond the allocation";
			break;
		case 5:
			/* not inside one reservation */
			m.size = SZ_4K;
			switch (R(f) % 6) {
			case 0:
				m.addr = lay_free_at(f, &l, SZ_64K);
				if (!m.addr)
					m.addr = f->va_size;
				break;
			case 1:
				m.addr = 0;
				break;
			case 2:
				m.addr = f->va_end;
				break;
			case 3:
				m.addr = f->va_size - SZ_4K;
				m.size = 2 * SZ_4K;
				break;
			case 4:
				m.addr = ~(SZ_4K - 1);
				m.size = 2 * SZ_4K;
				break;
			default:
				m.addr = 1ull << 63;
				break;
			}
			what = "not inside a reservation";
			break;
		case 6:
		case 7:
			/* over a mapping (the fixed area's, or another) */
			mp = lay_pick(f, &l, QGPU_VM_LAYOUT_MAPPING, false);
			if (mp && one_in(f, 2)) {
				o = lay_res_of(&l, mp->start);
				m.addr = mp->start + SZ_4K *
					 (R(f) % (mp->size / SZ_4K));
				if (m.addr > mp->start && one_in(f, 2) &&
				    m.addr - SZ_4K >= mp->start)
					m.addr = mp->start;
				if (o && mp->start - SZ_4K >= o->start &&
				    one_in(f, 3))
					m.addr = mp->start - SZ_4K;
				n = (o ? ent_end(o) : ent_end(mp)) - m.addr;
				base = mp->start;
			} else {
				m.addr = f->fva + SZ_4K * (R(f) % 32);
				n = f->fva + FIX_SIZE - m.addr;
				base = f->fva;
			}
			if (n > hsize)
				n = hsize;
			m.size = SZ_4K * (1 + R(f) % (n / SZ_4K));
			/* from just before it: at least into it */
			if (m.addr < base && m.size < 2 * SZ_4K)
				m.size = 2 * SZ_4K;
			if (m.size > hsize) {
				m.addr += SZ_4K;
				m.size = SZ_4K;
			}
			m.offset = 0;
			expect = EEXIST;
			what = "over a mapping";
			break;
		default:
			m.handle = pick64(f, (const uint64_t[]){ 0,
				dead_bo(f), foreign_bo(f), ~0u }, 4);
			expect = ENOENT;
			what = "no such allocation";
			break;
		}
	} else {
		m.handle = one_in(f, 2) ? m.handle : any_bo(f);
		m.flags = b32(f, QGPU_VM_MAP_READ_ONLY);
		m.addr = o && one_in(f, 2) ? o->start + SZ_4K * (R(f) % 16) :
			 b64(f, f->va_end);
		m.offset = b64(f, hsize);
		m.size = one_in(f, 2) ? SZ_4K * (1 + R(f) % 16) :
			 b64(f, 16 * SZ_64K);
	}
	a = argp(f, &m, sizeof(m), &k);
	e = fz_call(f, OP_VM_MAP, DRM_IOCTL_QGPU_VM_MAP, a,
		    arg_expect(k, expect), what);
	if (!e)
		note_mapped(f, m.handle);
	if (refused) {
		lay_expect_same(f, &l, OP_VM_MAP, what);
	} else if (gap && mode == 0 && (k == P_GOOD || k == P_MISALIGNED)) {
		struct lay now;

		if (e && e != ENOSPC)	/* ENOSPC: no VRAM for page tables */
			fz_failf(f, "QGPU_VM_MAP (%s) of %#llx+%#llx at %#llx: %s",
				 what, (unsigned long long)m.offset,
				 (unsigned long long)m.size,
				 (unsigned long long)m.addr, strerror(e));
		if (e) {
			lay_expect_same(f, &l, OP_VM_MAP, what);
		} else {
			/* that mapping, and nothing else, is new */
			lay_get(f, &now);
			mp = lay_find(&now, QGPU_VM_LAYOUT_MAPPING, m.addr);
			if (!mp || mp->size != m.size || mp->flags != m.flags ||
			    mp->offset != m.offset || now.n != l.n + 1)
				fz_failf(f, "QGPU_VM_MAP (%s) of %#llx+%#llx at %#llx: not what the layout shows",
					 what, (unsigned long long)m.offset,
					 (unsigned long long)m.size,
					 (unsigned long long)m.addr);
			lay_put(&now);
		}
	}
	lay_put(&l);
}

static void fz_vm_unmap(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry fixmap = {
		.start = f->fva + FIX_RO, .size = SZ_64K,
		.kind = QGPU_VM_LAYOUT_MAPPING,
	};
	const struct drm_qgpu_vm_layout_entry *mp, *o, *b;
	int mode = R(f) % 3, k, e, expect = EXPECT_ANY;
	struct drm_qgpu_vm_range r;
	const char *what = "random";
	bool refused = false;
	uint64_t a, n, x;
	struct lay l;

	vanchors(f, &l);
	mp = lay_pick(f, &l, QGPU_VM_LAYOUT_MAPPING, false);
	o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
	memset(&r, 0, sizeof(r));
	if (mode == 0) {
		expect = 0;
		n = mp ? mp->size / SZ_4K : 0;
		switch (R(f) % 6) {
		case 0:
			if (!mp)
				goto nothing;
			r.addr = mp->start;
			r.size = mp->size;
			what = "a whole mapping";
			break;
		case 1:
			if (n < 2)
				goto nothing;
			r.addr = mp->start;
			r.size = SZ_4K * (1 + R(f) % (n - 1));
			what = "the start of a mapping";
			break;
		case 2:
			if (n < 2)
				goto nothing;
			x = SZ_4K * (1 + R(f) % (n - 1));
			r.addr = mp->start + x;
			r.size = mp->size - x;
			what = "the end of a mapping";
			break;
		case 3:
			if (n < 3)
				goto nothing;
			x = 1 + R(f) % (n - 2);
			r.addr = mp->start + x * SZ_4K;
			r.size = SZ_4K * (1 + R(f) % (n - 1 - x));
			what = "the middle of a mapping";
			break;
		case 4:
			if (!o)
				goto nothing;
			/* a reservation or a part: mappings and holes */
			x = R(f) % (o->size / SZ_4K);
			r.addr = o->start + (one_in(f, 2) ? 0 : x * SZ_4K);
			r.size = ent_end(o) - r.addr;
			if (one_in(f, 2))
				r.size = SZ_4K * (1 + R(f) % (r.size / SZ_4K));
			what = "mappings and holes";
			break;
		default:
nothing:
			r.addr = lay_free_at(f, &l, SZ_64K);
			r.size = SZ_4K * (1 + R(f) % 16);
			what = "nothing mapped";
			if (!r.addr) {
				lay_put(&l);
				return;
			}
			break;
		}
	} else if (mode == 1) {
		/* a range whose mapping a wrongly accepted call would hit */
		refused = true;
		expect = EINVAL;
		b = mp && !one_in(f, 4) ? mp : &fixmap;
		r.addr = b->start;
		r.size = b->size;
		switch (R(f) % 4) {
		case 0:
			r.addr += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 1 }, 4);
			what = "address not 4K aligned";
			break;
		case 1:
			r.size = r.size - SZ_4K + pick64(f, (const uint64_t[]){
				1, 8, 2048, SZ_4K - 4, SZ_4K + 4 }, 5);
			what = "size not 4K aligned";
			break;
		case 2:
			r.size = 0;
			what = "size 0";
			break;
		default:
			/* the range must be in the process's part (UAPI) */
			switch (R(f) % 6) {
			case 0:
				r.size = ~(SZ_4K - 1);	/* wraps */
				break;
			case 1:
				r.size = f->va_size;
				break;
			case 2:
				r.addr = f->va_size - SZ_4K;
				r.size = 2 * SZ_4K;
				break;
			case 3:
				r.addr = f->va_end - SZ_4K;
				r.size = 2 * SZ_4K;
				break;
			case 4:
				if (f->va_start >= SZ_4K) {
					r.addr = f->va_start - SZ_4K;
					r.size = 2 * SZ_4K;
					break;
				}
				/* fall through */
			default:
				r.addr = ~(SZ_4K - 1);
				r.size = 2 * SZ_4K;
				break;
			}
			what = "wrap, beyond the VA size or outside the process's part";
			break;
		}
	} else {
		r.addr = mp && one_in(f, 2) ? mp->start : b64(f, f->va_end);
		r.size = mp && one_in(f, 2) ? mp->size : b64(f, 16 * SZ_64K);
		if (in_fix(f, r.addr, r.size) && r.size % SZ_4K == 0 &&
		    r.addr % SZ_4K == 0)
			r.size = 0;	/* leave the fixed area alone */
	}
	a = argp(f, &r, sizeof(r), &k);
	e = fz_call(f, OP_VM_UNMAP, DRM_IOCTL_QGPU_VM_UNMAP, a,
		    arg_expect(k, expect), what);
	if (refused) {
		lay_expect_same(f, &l, OP_VM_UNMAP, what);
	} else if (!e) {
		lay_check_unmap(f, &l, r.addr, r.size, false, "UNMAP");
		after_unmap(f, &l, r.addr, r.size,
			    "a buffer queued after VM_UNMAP");
	}
	lay_put(&l);
}

/* ------------------------------------------------------------------------ */
/* MAKE_RESIDENT                                                             */

/* Did paging fence @value signal without an error? */
static bool paging_fence_ok(struct fz *f, uint64_t value)
{
	struct drm_qgpu_vm_info vi;
	uint32_t b = 0;
	int st = -1;

	if (qgpu_query_vm_info(f->fd, &vi) || qgpu_syncobj_create(f->fd, &b))
		return false;
	if (!drmSyncobjTransfer(f->fd, b, 0, vi.paging_fence_syncobj, value,
				0))
		st = qs_sync_status(f->fd, b);
	qgpu_syncobj_destroy(f->fd, b);
	return st == 1;
}

static void fz_make_resident(struct fz *f)
{
	uint32_t *hs = (uint32_t *)(f->rw + MR_OFF), n = 0, i, j, h;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, kind = P_GOOD;
	struct drm_qgpu_make_resident mr;
	struct drm_qgpu_vm_info v0, v1;
	struct drm_qgpu_gem_info gi;
	bool refused = false, busy = false, maybe_busy = false;
	const char *what = "random";
	uint64_t a;
	struct lay l;

	vanchors(f, &l);
	lay_put(&l);
	/* distinct live allocations, and what the rules say about them */
	for (i = 0; i < 1 + R(f) % 6; i++) {
		h = i && f->nbo ? f->bo[R(f) % f->nbo] : f->abo;
		for (j = 0; j < n && hs[j] != h; j++)
			;
		if (j < n || qgpu_bo_info(f->fd, h, &gi))
			continue;
		hs[n++] = h;
		/*
		 * Lock2 keeps it out of VRAM: without CPU access, or cached
		 * where not all VRAM is CPU-visible
		 */
		if (gi.lock_count && (!(gi.flags & QGPU_GEM_CPU_ACCESS) ||
				      ((gi.flags & QGPU_GEM_CPU_CACHED) &&
				       f->dev->info.visible_vram_size <
				       f->dev->info.vram_size)))
			busy = true;
		/* VRAM is not in its set at all: no rule says */
		if (!(gi.segment_mask & qt_vram_mask(f->dev)))
			maybe_busy = true;
	}
	memset(&mr, 0, sizeof(mr));
	mr.count = n;
	mr.flags = one_in(f, 3) ? QGPU_MAKE_RESIDENT_EVICT : 0;
	if (one_in(f, 4))
		mr.paging_fence = R(f);		/* an output */
	if (mode == 0 && n) {
		what = mr.flags ? "valid evict" : "valid";
		expect = mr.flags ? 0 : busy ? EBUSY : maybe_busy ?
			 EXPECT_ANY : 0;
	} else if (mode <= 1 && n) {
		refused = true;
		expect = EINVAL;
		if (busy)	/* (else EBUSY would be a second answer) */
			mr.flags |= QGPU_MAKE_RESIDENT_EVICT;
		switch (R(f) % 8) {
		case 0:
			mr.flags |= 1u << (1 + R(f) % 31);
			what = "unknown flag";
			break;
		case 1:
			mr.count = 0;
			what = "count 0";
			break;
		case 2:
			mr.count = pick64(f, (const uint64_t[]){
				QGPU_MAX_RESIDENT + 1, 1u << 20, 0x80000000u,
				~0u }, 4);
			what = "count > max";
			break;
		case 3:
			hs[n] = hs[R(f) % n];
			mr.count = n + 1;
			what = "a handle twice";
			break;
		case 4:
			hs[R(f) % n] = pick64(f, (const uint64_t[]){ 0,
				dead_bo(f), foreign_bo(f), ~0u }, 4);
			expect = ENOENT;
			what = "no such allocation";
			break;
		case 5:
			/* the most there may be, dead ones among them */
			for (i = n; i < QGPU_MAX_RESIDENT; i++)
				hs[i] = 0x40000000u + i;
			mr.count = QGPU_MAX_RESIDENT;
			expect = ENOENT;
			what = "4096 handles";
			break;
		default:
			/* an array the kernel cannot read (all of) */
			kind = pick64(f, (const uint64_t[]){ P_NULL, P_SMALL,
				P_GONE, P_NONE, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			if (kind == P_STRAD && mr.count < 2)
				mr.count = 2;
			expect = EFAULT;
			what = "bad handle array";
			break;
		}
	} else {
		for (i = 0; i < 64; i++)
			hs[i] = one_in(f, 2) ? hs[i % (n ? n : 1)] : any_bo(f);
		mr.count = one_in(f, 2) ? 1 + R(f) % 8 :
			   b32(f, QGPU_MAX_RESIDENT);
		mr.flags = b32(f, QGPU_MAKE_RESIDENT_FLAGS);
		kind = ptr_kind(f, 4);
	}
	mr.handles = fz_ptr(f, kind, hs, (size_t)mr.count * 4, MR_OFF);
	qgpu_query_vm_info(f->fd, &v0);
	a = argp(f, &mr, sizeof(mr), &k);
	e = fz_call(f, OP_MAKE_RESIDENT, DRM_IOCTL_QGPU_MAKE_RESIDENT, a,
		    arg_expect(k, expect), what);
	qgpu_query_vm_info(f->fd, &v1);
	if ((refused || (e && k == P_GOOD)) &&
	    v1.paging_fence != v0.paging_fence)
		fz_failf(f, "QGPU_MAKE_RESIDENT (%s) failed (%s) but took paging fence %llu (last was %llu)",
			 what, strerror(e),
			 (unsigned long long)v1.paging_fence,
			 (unsigned long long)v0.paging_fence);
	if (e || k != P_GOOD || mode)
		return;
	/* a new point on the file's paging-fence timeline */
	if (mr.paging_fence <= v0.paging_fence ||
	    mr.paging_fence != v1.paging_fence)
		fz_failf(f, "QGPU_MAKE_RESIDENT (%s): paging fence %llu, the file's last was %llu and is %llu",
			 what, (unsigned long long)mr.paging_fence,
			 (unsigned long long)v0.paging_fence,
			 (unsigned long long)v1.paging_fence);
	if (!one_in(f, 4))
		return;
	e = qgpu_paging_fence_wait(f->fd, mr.paging_fence,
				   VWAIT_S * SEC_NS);
	if (e == -ETIME)
		fz_failf(f, "QGPU_MAKE_RESIDENT (%s): paging fence %llu not signalled after %d s",
			 what, (unsigned long long)mr.paging_fence, VWAIT_S);
	/* evicted: in system memory once the paging is done */
	for (i = 0; !e && mr.flags && i < n; i++)
		if (qgpu_bo_info(f->fd, hs[i], &gi) == 0 && gi.segment &&
		    paging_fence_ok(f, mr.paging_fence))
			fz_failf(f, "QGPU_MAKE_RESIDENT (evict): handle %u in segment %u after its paging fence",
				 hs[i], gi.segment);
}

/* ------------------------------------------------------------------------ */
/* SUBMIT on virtual contexts                                                */

/* A 4-aligned range of 4..@max bytes inside mapping @m; *len its size */
static uint64_t in_map(struct fz *f, const struct drm_qgpu_vm_layout_entry *m,
		       uint32_t max, uint32_t *len)
{
	uint64_t n = m->size < max ? m->size : max;
	uint32_t l = 4 * (1 + R(f) % (n / 4));

	*len = l;
	return m->start + 4 * (R(f) % ((m->size - l) / 4 + 1));
}

/* An 8-aligned address of 8 bytes inside mapping @m */
static uint64_t in_map8(struct fz *f, const struct drm_qgpu_vm_layout_entry *m)
{
	return m->start + 8 * (R(f) % (m->size / 8));
}

/*
 * A well-formed VTILE: its destination inside read-write mapping @w, its
 * source inside mapping @r, each of its side's length (a small surface:
 * at most 1 KiB tiled, about 1 KiB linear, below any mapping's 4 KiB).
 */
static void build_vtile(struct fz *f, struct qgpu_vcb *v,
			const struct drm_qgpu_vm_layout_entry *w,
			const struct drm_qgpu_vm_layout_entry *r)
{
	uint32_t wd = one_in(f, 16) ? 0 : 1 + R32(f) % 16;
	uint32_t ht = one_in(f, 16) ? 0 : 1 + R32(f) % 16;
	uint32_t pitch = 4 * wd + 4 * (R32(f) % 4);
	uint64_t tlen = qgpu_tiled_size(wd, ht);
	uint64_t llen = qgpu_linear_span(wd, ht, pitch);
	bool untile = one_in(f, 2);
	uint64_t dlen = untile ? llen : tlen, slen = untile ? tlen : llen;

	qgpu_vcb_tile(v, untile, w->start + off_in(f, w->size, dlen),
		      r->start + off_in(f, r->size, slen), wd, ht, pitch);
}

/*
 * Random well-formed virtual commands over the mappings of @l (the fixed
 * area left alone): reads from any mapping, writes to read-write ones
 * only, every access inside one mapping; accesses of no byte anywhere (no
 * range of length 0 is checked). None of them may fault.
 */
static void build_vvalid(struct fz *f, struct qgpu_vcb *v, const struct lay *l,
			 int ncmd)
{
	const struct drm_qgpu_vm_layout_entry *w, *r, *r2;
	uint32_t n1, n2, n3;
	uint64_t d, s, s2;
	int c, k;

	for (c = 0; c < ncmd; c++) {
		w = lay_pick(f, l, QGPU_VM_LAYOUT_MAPPING, true);
		r = lay_pick(f, l, QGPU_VM_LAYOUT_MAPPING, false);
		r2 = lay_pick(f, l, QGPU_VM_LAYOUT_MAPPING, false);
		k = (int)(R(f) % 11);
		if (!w && (k < 7 || k == 10))
			k = 9;
		switch (k) {
		case 0:
			d = in_map(f, w, 16384, &n1);
			qgpu_vcb_fill(v, d, n1, R32(f));
			break;
		case 1:
			d = in_map(f, w, 16384, &n1);
			s = in_map(f, r, n1, &n2);
			qgpu_vcb_copy(v, d, s, n2);
			break;
		case 2:
			d = in_map(f, w, 16384, &n1);
			s = in_map(f, r, n1, &n2);
			s2 = in_map(f, r2, n2, &n3);
			if (one_in(f, 2))
				qgpu_vcb_add(v, d, s, s2, n3 / 4);
			else
				qgpu_vcb_xor(v, d, s, s2, n3 / 4);
			break;
		case 3:
			s = in_map(f, r, 16384, &n1);
			qgpu_vcb_checksum(v, s, n1, in_map(f, w, 4, &n2));
			break;
		case 4:
			qgpu_vcb_fence(v, in_map8(f, w), R(f));
			break;
		case 5:
			qgpu_vcb_timestamp(v, in_map8(f, w));
			break;
		case 6:
			/* satisfied at once: never blocks the engine */
			qgpu_vcb_wait(v, in_map8(f, r ? r : w), 0);
			break;
		case 7:
			qgpu_vcb_nop(v, 1 + R32(f) % 8);
			break;
		case 10:
			if (f->tiling)
				build_vtile(f, v, w, r);
			break;
		default:
			/* no byte accessed */
			switch (R(f) % 3) {
			case 0:
				qgpu_vcb_fill(v, R(f), 0, R32(f));
				break;
			case 1:
				qgpu_vcb_copy(v, R(f), R(f), 0);
				break;
			default:
				qgpu_vcb_add(v, R(f), R(f), R(f), 0);
				break;
			}
			break;
		}
	}
}

/* The pool's syncobjs with fences, as in-syncs (no fence: EINVAL) */
static int fenced_syncs(struct fz *f, struct drm_qgpu_sync_entry *e, int max)
{
	int n = 0, i;

	for (i = 0; i < f->nsync && n < max; i++)
		if (f->sync_fence[i] && one_in(f, 3))
			e[n++] = (struct drm_qgpu_sync_entry){
				.handle = f->sync[i],
			};
	return n;
}

/*
 * Submit well-formed @v on avctx, signalling vsync (with @syncs, some of
 * the pool's syncobjs too). A refusal, or a lost context, is a failure.
 * Returns 0 when it was queued.
 */
static int avctx_submit(struct fz *f, struct qgpu_vcb *v, const char *what,
			bool syncs)
{
	struct drm_qgpu_sync_entry ins[8], outs[8], mins[4], mouts[4];
	const struct drm_qgpu_sync_entry *ou = outs;
	int e, nin = 0, nout = 0, nmi = 0, nmo = 0, no, i, j;
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_submit s;
	uint64_t want;

	if (f->avmf.h && !mf_ours(f, &f->avmf))
		f->avmf.h = 0;	/* closed by fuzzing: the mapping stays */
	if (syncs) {
		nin = fenced_syncs(f, ins, 3);
		nout = fill_syncs(f, outs, 3, false);
		/* monitored ones too (their books are exact) */
		nmi = fill_msyncs(f, mins, 0, 2, true, OWN_AVCTX);
		nmo = fill_msyncs(f, mouts, 0, 2, false, OWN_AVCTX);
	}
	/* the monitored entries, then vsync, also alone at the end */
	memcpy(&ins[nin], mins, sizeof(mins[0]) * nmi);
	memcpy(&outs[nout], mouts, sizeof(mouts[0]) * nmo);
	mouts[nmo] = (struct drm_qgpu_sync_entry){ .handle = f->vsync };
	outs[nout + nmo] = mouts[nmo];
	no = nout + nmo + 1;
	qgpu_vcb_to_submit(v, f->avctx, &s);
	s.in_syncs = (uintptr_t)ins;
	s.num_in_syncs = nin + nmi;
	s.out_syncs = (uintptr_t)outs;
	s.num_out_syncs = no;
	e = fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT, (uintptr_t)&s,
		    EXPECT_ANY, what);
	if (e == EINVAL && (nin || nout)) {
		/* the pool's books on its syncobjs are not exact: without */
		s.in_syncs = (uintptr_t)mins;
		s.num_in_syncs = nmi;
		ou = mouts;
		no = nmo + 1;
		s.out_syncs = (uintptr_t)ou;
		s.num_out_syncs = no;
		nout = 0;
		e = fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT, (uintptr_t)&s,
			    EXPECT_ANY, what);
	}
	if (!e) {
		f->avsubs++;
		for (i = 0; i < nout; i++)
			for (j = 0; j < f->nsync; j++)
				if (f->sync[j] == outs[i].handle)
					f->sync_fence[j] = true;
		/* avctx's own fence: one above the last, or what it writes */
		want = mf_next(&f->avmf, ou, no);
		if (s.fence_value != want)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): fence value %#llx, the context's fence was to reach %#llx",
				 what, (unsigned long long)s.fence_value,
				 (unsigned long long)want);
		if (s.fence_value > f->avmf.queued)
			f->avmf.queued = s.fence_value;
		f->avq_vsync = s.fence_value;
		mf_queued(f, ou, no, OWN_AVCTX);
		return 0;
	}
	if (!avctx_ours(f, &cs)) {
		/* fuzzing gave its id to another context */
		avctx_make(f, false);
		return e;
	}
	if (cs.state != QGPU_CTX_OK)
		avctx_lost(f, &cs, what);
	else
		fz_failf(f, "QGPU_SUBMIT (virtual, %s): a well-formed buffer was refused: %s (monitored: in %u:%#llx %u:%#llx, out %u:%#llx %u:%#llx)",
			 what, strerror(e), nmi > 0 ? mins[0].handle : 0,
			 (unsigned long long)(nmi > 0 ? mins[0].point : 0),
			 nmi > 1 ? mins[1].handle : 0,
			 (unsigned long long)(nmi > 1 ? mins[1].point : 0),
			 nmo > 0 ? mouts[0].handle : 0,
			 (unsigned long long)(nmo > 0 ? mouts[0].point : 0),
			 nmo > 1 ? mouts[1].handle : 0,
			 (unsigned long long)(nmo > 1 ? mouts[1].point : 0));
	avctx_make(f, true);
	return e;
}

/*
 * Wait for avctx's last buffer: it completed on a context that is fine
 * and (@seq) wrote @seq at FIX_OUT + 8 as its last command.
 */
static bool vcheck(struct fz *f, uint64_t seq, const char *when)
{
	struct drm_qgpu_context_status cs;
	int ret = qs_wait_sync(f->fd, f->vsync, VWAIT_S);
	uint64_t got;

	f->vchecks++;
	if (ret) {
		fz_failf(f, "virtual context (%s): its buffer did not complete within %d s: %s",
			 when, VWAIT_S, strerror(-ret));
		return false;
	}
	if (!avctx_ours(f, &cs)) {
		avctx_make(f, false);
		return false;
	}
	if (cs.state != QGPU_CTX_OK) {
		avctx_lost(f, &cs, when);
		avctx_make(f, true);
		return false;
	}
	/* its fence got the value of the submission vsync came from */
	if (f->avmf.v && *f->avmf.v < f->avq_vsync)
		fz_failf(f, "virtual context (%s): its fence is at %#llx once its buffer completed, which was to advance it to %#llx",
			 when, (unsigned long long)*f->avmf.v,
			 (unsigned long long)f->avq_vsync);
	else if (f->avq_vsync)
		f->mfchecks++;
	got = f->out ? f->out[2] | (uint64_t)f->out[3] << 32 : seq;
	if (seq && got != seq) {
		fz_failf(f, "virtual context (%s): a completed buffer did not write %llu (%llu there)",
			 when, (unsigned long long)seq,
			 (unsigned long long)got);
		return false;
	}
	return true;
}

/* The read-only mapping still holds its pattern (a checksum on avctx). */
static void fix_check_ro(struct fz *f, const char *after)
{
	uint64_t seq = ++f->vseq;
	struct qgpu_vcb v;

	if (!f->out || !f->avctx)
		return;
	qgpu_vcb_init(&v);
	qgpu_vcb_checksum(&v, f->fva + FIX_RO, SZ_64K, f->fva + FIX_OUT);
	qgpu_vcb_fence(&v, f->fva + FIX_OUT + 8, seq);
	if (!avctx_submit(f, &v, "read-only check", false) &&
	    vcheck(f, seq, after) && f->out[0] != f->rsum)
		fz_failf(f, "the read-only mapping at %#llx changed (%s): checksum %#x, expected %#x",
			 (unsigned long long)(f->fva + FIX_RO), after,
			 f->out[0], f->rsum);
	qgpu_vcb_fini(&v);
}

/* Another process's allocation, mapped where our hole is, is unchanged. */
static void other_check(struct fz *f, const char *after)
{
	uint32_t sum;

	if (!f->omap)
		return;
	sum = qgpu_csum((const uint32_t *)f->omap, SZ_64K / 4);
	if (sum != f->osum)
		fz_failf(f, "another process's allocation at %#llx of its own address space changed (%s): checksum %#x, expected %#x",
			 (unsigned long long)(f->fva + FIX_HOLE), after, sum,
			 f->osum);
}

static void vsub_valid(struct fz *f, const struct lay *l)
{
	bool check = f->out && one_in(f, 4);
	struct qgpu_vcb v;
	uint64_t seq = 0;

	qgpu_vcb_init(&v);
	build_vvalid(f, &v, l, 1 + R(f) % 12);
	if (check) {
		seq = ++f->vseq;
		qgpu_vcb_fence(&v, f->fva + FIX_OUT + 8, seq);
	}
	if (!v.error && !avctx_submit(f, &v, "valid", true) && check)
		vcheck(f, seq, "well-formed buffers");
	qgpu_vcb_fini(&v);
}

/*
 * A buffer that must fault, on a new context: some valid commands, then
 * one access the device must refuse. Half of the time the fault record is
 * checked (reason, buffer offset, address), a next submit must be refused
 * with ECANCELED, and nothing may have been written where it faulted.
 */
static void vsub_fault(struct fz *f, const struct lay *l)
{
	const struct drm_qgpu_vm_layout_entry ro = {
		.start = f->fva + FIX_RO, .size = SZ_64K,
		.kind = QGPU_VM_LAYOUT_MAPPING,
		.flags = QGPU_VM_MAP_READ_ONLY,
	};
	const struct drm_qgpu_vm_layout_entry *w;
	struct drm_qgpu_sync_entry out = { .handle = f->fsync };
	bool check = one_in(f, 2), ro_write = false, hole = false;
	uint32_t ctx, reason = QGPU_FAULT_PAGE_NOT_PRESENT, off, len, n;
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_submit s;
	const char *what;
	struct qgpu_vcb v, nop;
	uint64_t va, x;
	struct mfen m;
	int e;

	if (ctx_make(f, QGPU_CTX_CREATE_VIRTUAL, &ctx, &m))
		return;
	w = lay_pick(f, l, QGPU_VM_LAYOUT_MAPPING, true);
	qgpu_vcb_init(&v);
	build_vvalid(f, &v, l, R(f) % 4);
	off = qgpu_vcb_offset(&v);
	len = 4 * (1 + R(f) % 1024);
	switch (R(f) % 7) {
	case 0:
	case 1:
		/* reserved, not mapped: another process's data is there */
		va = f->fva + FIX_HOLE +
		     8 * (R(f) % ((FIX_SIZE - FIX_HOLE) / 8));
		hole = true;
		what = "unmapped address";
		goto unmapped;
	case 2:
		/* nothing reserved there */
		va = lay_free_at(f, l, SZ_64K) + 8 * (R(f) % (SZ_64K / 8));
		what = "unreserved address";
unmapped:
		/* (a range past the VA size would be another fault) */
		if (va + len > f->va_size)
			len = f->va_size - va;
		switch (R(f) % 7) {
		case 0:
			qgpu_vcb_fence(&v, va, R(f));
			break;
		case 1:
			qgpu_vcb_timestamp(&v, va);
			break;
		case 2:
			qgpu_vcb_wait(&v, va, 0);
			break;
		case 3:
			if (!w)
				goto unmapped_fill;
			x = in_map(f, w, len, &n);
			qgpu_vcb_copy(&v, x, va, n);
			break;
		case 4:
			if (!w)
				goto unmapped_fill;
			x = in_map(f, w, 4, &n);
			qgpu_vcb_checksum(&v, va, len, x);
			break;
		case 5:
			/* a VTILE reading there: its first read is at va */
			if (!w || !f->tiling)
				goto unmapped_fill;
			x = w->start + off_in(f, w->size, 256);
			qgpu_vcb_tile(&v, one_in(f, 2), x, va, 8, 8, 32);
			break;
		default:
unmapped_fill:
			qgpu_vcb_fill(&v, va, len, R32(f));
			break;
		}
		break;
	case 3:
	case 4:
		/* a write through the read-only mapping */
		va = f->fva + FIX_RO + 8 * (R(f) % (SZ_64K / 8));
		reason = QGPU_FAULT_PAGE_READ_ONLY;
		ro_write = true;
		what = "write to a read-only mapping";
		switch (R(f) % 7) {
		case 0:
			qgpu_vcb_fence(&v, va, R(f));
			break;
		case 1:
			qgpu_vcb_timestamp(&v, va);
			break;
		case 2:
			x = in_map(f, &ro, len, &n);
			qgpu_vcb_copy(&v, va, x, n);
			break;
		case 3:
			x = in_map(f, &ro, len, &n);
			qgpu_vcb_add(&v, va, x, x, n / 4);
			break;
		case 4:
			x = in_map(f, &ro, len, &n);
			qgpu_vcb_checksum(&v, x, n, va);
			break;
		case 5:
			/* a VTILE writing there: its first write is at va */
			if (!f->tiling)
				goto ro_fill;
			x = ro.start + off_in(f, ro.size, 1024);
			qgpu_vcb_tile(&v, one_in(f, 2), va, x, 16, 16, 64);
			break;
		default:
ro_fill:
			qgpu_vcb_fill(&v, va, len, R32(f));
			break;
		}
		break;
	case 5:
		/* beyond the VA size: no walk at all */
		reason = QGPU_FAULT_BAD_ADDRESS;
		what = "beyond the VA size";
		switch (R(f) % 5) {
		case 0:
beyond_fill:
			va = f->va_size - SZ_4K;
			qgpu_vcb_fill(&v, va, 2 * SZ_4K, R32(f));
			break;
		case 1:
			va = f->va_size + 8 * (R(f) % 1024);
			qgpu_vcb_fence(&v, va, R(f));
			break;
		case 2:
			va = (1ull << 63) + f->fva + FIX_OUT;
			qgpu_vcb_fill(&v, va, 4, R32(f));
			break;
		case 4:
			/* a VTILE's destination across the end, 16 KiB */
			if (!f->tiling)
				goto beyond_fill;
			va = f->va_size - SZ_4K;
			qgpu_vcb_tile(&v, false, va, ro.start, 64, 64, 256);
			break;
		default:
			va = ~7ull;	/* wraps */
			qgpu_vcb_fence(&v, va, R(f));
			break;
		}
		break;
	default:
		/* bad alignment, checked before any access */
		reason = QGPU_FAULT_BAD_ALIGN;
		what = "bad alignment";
		if (!w) {
			va = f->va_size + 4;
			qgpu_vcb_fence(&v, va, R(f));
			reason = QGPU_FAULT_BAD_ADDRESS;
		} else if (one_in(f, 2)) {
			va = in_map8(f, w) + 4;
			qgpu_vcb_fence(&v, va, R(f));
		} else {
			va = len + 2;	/* FAULT_ADDR is the size */
			x = in_map(f, w, len, &n);
			qgpu_vcb_fill(&v, x, len + 2, R32(f));
		}
		break;
	}
	/* never runs: the rest of a faulting buffer is abandoned */
	if (one_in(f, 2))
		build_vvalid(f, &v, l, 1 + R(f) % 3);
	qgpu_vcb_to_submit(&v, ctx, &s);
	s.out_syncs = (uintptr_t)&out;
	s.num_out_syncs = 1;
	e = v.error ? -1 : fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT,
				   (uintptr_t)&s, 0, what);
	if (!e && check) {
		f->vfaults++;
		e = qs_wait_sync(f->fd, f->fsync, VWAIT_S);
		if (e)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): did not complete within %d s: %s",
				 what, VWAIT_S, strerror(-e));
		else if (qgpu_query_context(f->fd, ctx, &cs) ||
			 cs.state != QGPU_CTX_LOST_FAULT ||
			 cs.fault_reason != reason || cs.fault_offset != off ||
			 cs.fault_addr != va)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): context %s, fault %s at offset %#x address %#llx; expected %s at offset %#x address %#llx",
				 what, qgpu_ctx_state_name(cs.state),
				 qgpu_fault_name(cs.fault_reason),
				 cs.fault_offset,
				 (unsigned long long)cs.fault_addr,
				 qgpu_fault_name(reason), off,
				 (unsigned long long)va);
		/* its fence got the value all the same (the FENCE after it) */
		else if (m.v && *m.v < s.fence_value)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): the context's fence is at %#llx after the fault, the submission's fence value was %#llx",
				 what, (unsigned long long)*m.v,
				 (unsigned long long)s.fence_value);
		else
			f->mfchecks++;
		/* a lost context takes nothing more */
		qgpu_vcb_init(&nop);
		qgpu_vcb_nop(&nop, 1);
		qgpu_vcb_to_submit(&nop, ctx, &s);
		fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT, (uintptr_t)&s,
			ECANCELED, "on a lost context");
		qgpu_vcb_fini(&nop);
		if (ro_write)
			fix_check_ro(f, what);
		if (hole)
			other_check(f, what);
	}
	mf_unmap(f, &m);
	add_vctx(f, ctx);
	qgpu_vcb_fini(&v);
}

/*
 * A buffer or a submit the kernel must refuse (EINVAL, ENOENT): nothing
 * queued (the context's submissions), nothing signalled (an out-sync that
 * never gets a fence otherwise).
 */
static void vsub_refused(struct fz *f, const struct lay *l)
{
	enum { W_SLOT, W_OPCODE, W_LENGTH, W_FLAGS, W_CUT, W_ALLOCS,
	       W_PATCHES, W_SUBMIT_FLAGS, W_DMA_SIZE, W_SYNC_FLAGS,
	       W_DEAD_SYNC, W_PHYSICAL, W_VTILE, W_MSYNC, NUM_W };
	static const char *const names[NUM_W] = {
		"slot command", "unknown opcode", "command length",
		"command flags", "last command cut", "allocation list",
		"patch list", "submit flags", "dma_size", "sync entry flags",
		"no such syncobj", "virtual commands, physical context",
		"VTILE geometry", "monitored sync entry",
	};
	uint32_t ctx = f->avctx, dw[16], op, len = 0, i, nout = 0, ndw, fl;
	struct drm_qgpu_sync_entry ins[2], outs[4];
	int wrong = (int)(R(f) % NUM_W), k, e, st;
	struct drm_qgpu_context_status c0, c1;
	struct drm_qgpu_alloc_entry ae[4];
	struct drm_qgpu_patch_entry pe[2];
	int expect = wrong == W_DEAD_SYNC ? ENOENT : EINVAL;
	struct mfen *m, *w = NULL;
	struct drm_qgpu_submit s;
	struct qgpu_vcb v;
	bool c0_ok;
	uint64_t a;

	if (f->nvctx && one_in(f, 3))
		ctx = f->vctx[R(f) % f->nvctx];
	if (wrong == W_PHYSICAL)
		ctx = f->actx;
	qgpu_vcb_init(&v);
	build_vvalid(f, &v, l, R(f) % 4);
	memset(dw, 0, sizeof(dw));
	for (i = 1; i < ARRAY_SIZE(dw); i++)
		dw[i] = one_in(f, 4) ? R32(f) : 0;
	memset(ae, 0, sizeof(ae));
	memset(pe, 0, sizeof(pe));
	memset(ins, 0, sizeof(ins));
	memset(outs, 0, sizeof(outs));
	switch (wrong) {
	case W_SLOT:
		op = QGPU_DMA_BIND + R32(f) % (QGPU_DMA_TILE -
					       QGPU_DMA_BIND + 1);
		len = qgpu_cmd_len(op);
		dw[0] = QGPU_CMD_HDR(op, 0, len);
		qgpu_vcb_emit_raw(&v, dw, len);
		break;
	case W_OPCODE:
		do
			op = R32(f) & 0xff;
		while (qgpu_cmd_is_dma(op));
		len = 1 + R32(f) % 8;
		dw[0] = QGPU_CMD_HDR(op, 0, len);
		qgpu_vcb_emit_raw(&v, dw, len);
		break;
	case W_LENGTH:
		op = one_in(f, 8) ? QGPU_DMA_NOP :
		     QGPU_DMA_VCOPY + R32(f) % (QGPU_DMA_VTILE -
						QGPU_DMA_VCOPY + 1);
		len = qgpu_cmd_len(op);
		len = op == QGPU_DMA_NOP ? 0 : pick64(f, (const uint64_t[]){
			0, 1, len - 1, len + 1, 0xffff }, 5);
		dw[0] = QGPU_CMD_HDR(op, 0, len);
		qgpu_vcb_emit_raw(&v, dw, len && len <= ARRAY_SIZE(dw) ? len :
				  qgpu_cmd_len(op));
		break;
	case W_FLAGS:
		op = one_in(f, 8) ? QGPU_DMA_NOP :
		     QGPU_DMA_VCOPY + R32(f) % (QGPU_DMA_VTILE -
						QGPU_DMA_VCOPY + 1);
		len = qgpu_cmd_len(op);
		fl = op == QGPU_DMA_VFENCE && one_in(f, 2) ?
		     QGPU_FENCE_FLAG_IRQ : 1u << (R(f) % 8);
		if (op == QGPU_DMA_VTILE)	/* (bit 0: QGPU_TILE_UNTILE) */
			fl = 2u << (R(f) % 7);
		dw[0] = QGPU_CMD_HDR(op, fl, len);
		qgpu_vcb_emit_raw(&v, dw, len);
		break;
	case W_CUT:
		op = QGPU_DMA_VCOPY + R32(f) % (QGPU_DMA_VTILE -
						QGPU_DMA_VCOPY + 1);
		len = qgpu_cmd_len(op);
		dw[0] = QGPU_CMD_HDR(op, 0, len);
		qgpu_vcb_emit_raw(&v, dw, len);
		break;
	case W_PHYSICAL:
		if (f->tiling && one_in(f, 2))
			qgpu_vcb_tile(&v, one_in(f, 2), R(f), R(f), 0, 0, 0);
		else
			qgpu_vcb_fill(&v, R(f), 0, 0);
		break;
	case W_VTILE:
		/* the kernel checks a VTILE's geometry, the device the rest */
		dw[5] = 1 + R32(f) % 64;
		dw[6] = 1 + R32(f) % 64;
		dw[7] = 4 * dw[5];
		switch (R(f) % 4) {
		case 0:
			dw[5] = QGPU_TILE_MAX_DIM + 1 + R32(f) % 1000;
			break;
		case 1:
			dw[6] = one_in(f, 2) ? ~0u : QGPU_TILE_MAX_DIM + 1;
			break;
		case 2:
			dw[7] += 1 + R32(f) % 3;
			break;
		default:
			dw[7] = 4 * dw[5] - 4 * (1 + R32(f) % dw[5]);
			break;
		}
		dw[0] = QGPU_CMD_HDR(QGPU_DMA_VTILE,
				     one_in(f, 2) ? QGPU_TILE_UNTILE : 0,
				     QGPU_DMA_VTILE_LEN);
		qgpu_vcb_emit_raw(&v, dw, QGPU_DMA_VTILE_LEN);
		break;
	default:
		break;
	}
	if (wrong != W_CUT && one_in(f, 2))
		build_vvalid(f, &v, l, 1 + R(f) % 3);
	if (!v.ndw)
		qgpu_vcb_nop(&v, 1);
	if (v.error) {
		qgpu_vcb_fini(&v);
		return;
	}
	ndw = v.ndw;
	qgpu_vcb_to_submit(&v, ctx, &s);
	switch (wrong) {
	case W_CUT:
		s.dma_size = 4 * (ndw - 1 - R32(f) % (len - 1));
		break;
	case W_ALLOCS:
		for (i = 0; i < ARRAY_SIZE(ae); i++)
			ae[i].handle = any_bo(f);
		s.allocs = (uintptr_t)ae;
		s.num_allocs = 1 + R32(f) % ARRAY_SIZE(ae);
		break;
	case W_PATCHES:
		s.patches = (uintptr_t)pe;
		s.num_patches = 1 + (ndw > 1 ? R32(f) % 2 : 0);
		break;
	case W_SUBMIT_FLAGS:
		s.flags = 1u << (R(f) % 32);
		break;
	case W_DMA_SIZE:
		s.dma_size = pick64(f, (const uint64_t[]){ 0, 2, 4 * ndw + 2,
			4 * ndw - 1, QGPU_MAX_DMA_SIZE + 4, 0xfffffffcu }, 6);
		break;
	case W_SYNC_FLAGS:
		if (!f->nsync) {
			s.flags = 1;
		} else if (one_in(f, 2)) {
			ins[0] = (struct drm_qgpu_sync_entry){
				.handle = f->sync[R(f) % f->nsync],
				.flags = 2u << (R(f) % 31),	/* unknown */
			};
			s.num_in_syncs = 1;
		} else {
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = f->sync[R(f) % f->nsync],
				.flags = 2u << (R(f) % 31),
			};
		}
		break;
	case W_DEAD_SYNC:
		if (one_in(f, 2)) {
			ins[0].handle = dead_sync(f);
			s.num_in_syncs = 1;
		} else {
			outs[nout++].handle = dead_sync(f);
		}
		break;
	case W_MSYNC:
		m = pick_any_mf(f);
		if (!m || one_in(f, 4)) {
			/* a handle that names no monitored fence */
			expect = ENOENT;
			if (one_in(f, 2)) {
				ins[0] = (struct drm_qgpu_sync_entry){
					.handle = dead_mf(f),
					.flags = QGPU_SYNC_MONITORED,
				};
				s.num_in_syncs = 1;
			} else {
				outs[nout++] = (struct drm_qgpu_sync_entry){
					.handle = dead_mf(f),
					.flags = QGPU_SYNC_MONITORED,
					.point = R(f),
				};
			}
			break;
		}
		switch (R(f) % 3) {
		case 0:
			/* waits for a value not queued */
			ins[0] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = m->queued + 1 + R(f) % 4,
			};
			s.num_in_syncs = 1;
			break;
		case 1:
			/* writes a value not above the last queued */
			outs[nout++] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = R(f) % (m->queued + 1),
			};
			break;
		default:
			/* writes one value twice */
			outs[nout] = (struct drm_qgpu_sync_entry){
				.handle = m->h, .flags = QGPU_SYNC_MONITORED,
				.point = m->queued + 1 + R(f) % 4,
			};
			outs[nout + 1] = outs[nout];
			nout += 2;
			break;
		}
		break;
	default:
		break;
	}
	/* refused: no value queued for a fence avctx may write (a witness) */
	w = ctx == f->avctx ? pick_mf(f) : NULL;
	if (w && mf_usable(f, w, OWN_AVCTX)) {
		w->owner = OWN_AVCTX;
		w->gen = f->avgen;
		outs[nout++] = (struct drm_qgpu_sync_entry){
			.handle = w->h, .flags = QGPU_SYNC_MONITORED,
			.point = w->queued + 3,
		};
	} else {
		w = NULL;
	}
	outs[nout++] = (struct drm_qgpu_sync_entry){ .handle = f->usync };
	s.in_syncs = (uintptr_t)ins;
	s.out_syncs = (uintptr_t)outs;
	s.num_out_syncs = nout;
	c0_ok = !qgpu_query_context(f->fd, ctx, &c0);
	if (!c0_ok)	/* (fuzzing destroyed it: ENOENT is an answer too) */
		expect = EXPECT_FAIL;
	drmSyncobjReset(f->fd, &f->usync, 1);
	a = argp(f, &s, sizeof(s), &k);
	e = fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT, a,
		    arg_expect(k, expect), names[wrong]);
	if (c0_ok && !qgpu_query_context(f->fd, ctx, &c1) &&
	    c1.submissions != c0.submissions)
		fz_failf(f, "QGPU_SUBMIT (virtual, %s): %s, but the context counts %llu submissions, %llu before",
			 names[wrong], e ? strerror(e) : "accepted",
			 (unsigned long long)c1.submissions,
			 (unsigned long long)c0.submissions);
	st = qs_sync_status(f->fd, f->usync);
	if (st > -1000) {
		fz_failf(f, "QGPU_SUBMIT (virtual, %s): %s, but its out-sync got a fence (%s)",
			 names[wrong], e ? strerror(e) : "accepted",
			 qs_status_name(st));
		drmSyncobjReset(f->fd, &f->usync, 1);
	}
	if (w && !mf_queued_is(f, w->h, w->queued))
		fz_failf(f, "QGPU_SUBMIT (virtual, %s): %s, but a monitored out-sync's value %#llx is queued",
			 names[wrong], e ? strerror(e) : "accepted",
			 (unsigned long long)(w->queued + 3));
	if (!e && ctx == f->avctx)
		f->avsubs++;
	if (!e && ctx == f->actx)
		f->asubs++;
	qgpu_vcb_fini(&v);
}

/* A virtual address for random commands: mostly where something is */
static uint64_t rand_va(struct fz *f, const struct lay *l)
{
	const struct drm_qgpu_vm_layout_entry *m;

	switch (R(f) % 8) {
	case 0:
	case 1:
	case 2:
		m = lay_pick(f, l, QGPU_VM_LAYOUT_MAPPING, false);
		return m ? m->start + (R(f) % (m->size + SZ_4K) & ~3ull) :
		       f->fva + FIX_RO;
	case 3:
		return f->fva + FIX_RO + (R(f) % SZ_64K & ~3ull);
	case 4:
		return f->fva + FIX_HOLE + R(f) % (FIX_SIZE - FIX_HOLE);
	case 5:
		return f->va_size - R(f) % SZ_64K;
	case 6:
		return b64(f, f->va_size);
	default:
		return R(f) % 4096;
	}
}

/* Random virtual commands (and submit fields) on a virtual context */
static void vsub_random(struct fz *f, const struct lay *l)
{
	uint32_t ctx, dw[16], op, len, i, c, n = 1 + R32(f) % 8;
	struct drm_qgpu_submit s;
	struct qgpu_vcb v;
	uint64_t a, x;
	int k;

	if (f->nvctx && !one_in(f, 4)) {
		ctx = f->vctx[R(f) % f->nvctx];
	} else {
		if (vctx_new(f, &ctx))
			return;
		add_vctx(f, ctx);
	}
	qgpu_vcb_init(&v);
	for (c = 0; c < n; c++) {
		op = one_in(f, 8) ? R32(f) & 0xff : one_in(f, 9) ?
		     QGPU_DMA_NOP : QGPU_DMA_VCOPY + R32(f) %
		     (QGPU_DMA_VTILE - QGPU_DMA_VCOPY + 1);
		len = qgpu_dma_cmd_len(op);
		if (!len || one_in(f, 8))
			len = 1 + R32(f) % 10;
		dw[0] = QGPU_CMD_HDR(op, one_in(f, 16) ? 1u << (R(f) % 8) : 0,
				     len);
		for (i = 1; i < len; i++) {
			if (i + 1 < len && one_in(f, 2)) {
				x = rand_va(f, l);
				dw[i++] = (uint32_t)x;
				dw[i] = (uint32_t)(x >> 32);
			} else {
				dw[i] = one_in(f, 4) ? R32(f) :
					b32(f, 65536) & ~3u;
			}
		}
		/* a wait never satisfied would hang the engine */
		if (op == QGPU_DMA_VWAIT && len >= QGPU_DMA_VWAIT_LEN)
			dw[3] = dw[4] = 0;
		qgpu_vcb_emit_raw(&v, dw, len);
	}
	if (v.error) {
		qgpu_vcb_fini(&v);
		return;
	}
	qgpu_vcb_to_submit(&v, ctx, &s);
	if (one_in(f, 8))
		s.dma_size = b32(f, s.dma_size);
	if (one_in(f, 16)) {
		s.num_allocs = b32(f, 4);
		s.allocs = fz_ptr(f, ptr_kind(f, 2), NULL, 64, 65536);
	}
	if (one_in(f, 16)) {
		s.num_patches = b32(f, 4);
		s.patches = fz_ptr(f, ptr_kind(f, 2), NULL, 128, 131072);
	}
	if (one_in(f, 8))
		s.dma = fz_ptr(f, (int)(R(f) % NUM_P), v.dw, v.ndw * 4, 262144);
	a = argp(f, &s, sizeof(s), &k);
	fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT, a, EXPECT_ANY, "random");
	qgpu_vcb_fini(&v);
}

static void fz_vsubmit(struct fz *f)
{
	unsigned int mode = R(f) % 10;
	struct lay l;

	vanchors(f, &l);
	if (mode < 4)
		vsub_valid(f, &l);
	else if (mode < 6)
		vsub_fault(f, &l);
	else if (mode < 9)
		vsub_refused(f, &l);
	else
		vsub_random(f, &l);
	lay_put(&l);
}

/*
 * A buffer queued now that writes @va (where a mapping was, before an
 * unmap) faults there: on a context of its own, the fault recorded with
 * the address.
 */
static void vfault_at(struct fz *f, uint64_t va, const char *what)
{
	struct drm_qgpu_sync_entry out = { .handle = f->fsync };
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_submit s;
	struct qgpu_vcb v;
	uint32_t ctx;
	int e;

	if (!sync_alive(f, f->fsync) || vctx_new(f, &ctx))
		return;
	qgpu_vcb_init(&v);
	qgpu_vcb_fence(&v, va, R(f));
	qgpu_vcb_to_submit(&v, ctx, &s);
	s.out_syncs = (uintptr_t)&out;
	s.num_out_syncs = 1;
	e = v.error ? -1 : fz_call(f, OP_VSUBMIT, DRM_IOCTL_QGPU_SUBMIT,
				   (uintptr_t)&s, 0, what);
	if (!e) {
		f->vfaults++;
		e = qs_wait_sync(f->fd, f->fsync, VWAIT_S);
		if (e)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): did not complete within %d s: %s",
				 what, VWAIT_S, strerror(-e));
		else if (qgpu_query_context(f->fd, ctx, &cs) ||
			 cs.state != QGPU_CTX_LOST_FAULT ||
			 cs.fault_reason != QGPU_FAULT_PAGE_NOT_PRESENT ||
			 cs.fault_offset || cs.fault_addr != va)
			fz_failf(f, "QGPU_SUBMIT (virtual, %s): a write to %#llx: context %s, fault %s at offset %#x address %#llx; expected %s there",
				 what, (unsigned long long)va,
				 qgpu_ctx_state_name(cs.state),
				 qgpu_fault_name(cs.fault_reason),
				 cs.fault_offset,
				 (unsigned long long)cs.fault_addr,
				 qgpu_fault_name(QGPU_FAULT_PAGE_NOT_PRESENT));
	}
	add_vctx(f, ctx);
	qgpu_vcb_fini(&v);
}

/* ------------------------------------------------------------------------ */
/* Monitored fences: the ioctls and the mapping                              */

#define MW_OFF		0x170000	/* MFENCE_WAIT's handles in rw */
#define MW_VALUES	0x171000	/* and its values */

static void fz_mf_create(struct fz *f)
{
	const struct drm_qgpu_mfence_create *r;
	struct drm_qgpu_mfence_create c;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	const char *what = "random";
	uint32_t probe = 0;
	struct mfen m;
	uint64_t a;

	anchors(f);
	memset(&c, 0, sizeof(c));
	c.initial_value = mf_unique(f);
	if (mode == 0) {
		expect = 0;
		what = "valid";
		if (one_in(f, 4)) {
			/* outputs: ignored on input */
			c.handle = R32(f);
			c.mmap_offset = R(f);
			c.offset = R32(f);
		}
	} else if (mode == 1) {
		expect = EINVAL;
		if (one_in(f, 2)) {
			c.flags = 1u << (R(f) % 32);
			what = "flag bit";
		} else {
			c.pad = 1u << (R(f) % 32);
			what = "pad not zero";
		}
		/* refused: the handle the next fence gets stays free */
		probe = mf_probe(f);
	} else {
		c.flags = one_in(f, 3) ? b32(f, 0) : 0;
		c.pad = one_in(f, 3) ? b32(f, 0) : 0;
		if (one_in(f, 2))
			c.initial_value = b64(f, ~0ull);
		expect = c.flags || c.pad ? EINVAL : 0;
	}
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_MF_CREATE, DRM_IOCTL_QGPU_MFENCE_CREATE, a,
		    arg_expect(k, expect), what);
	if (probe && mf_alive(f, probe))
		fz_failf(f, "QGPU_MFENCE_CREATE (%s): refused, but fence handle %u exists now",
			 what, probe);
	if (e || (k != P_GOOD && k != P_MISALIGNED))
		return;
	memset(&m, 0, sizeof(m));
	r = (const struct drm_qgpu_mfence_create *)(uintptr_t)a;
	m.h = r->handle;
	m.off = r->offset;
	m.mmap_off = r->mmap_offset;
	m.queued = c.initial_value;
	m.uniq = c.initial_value;
	/* the pool keeps those mf_ours() can tell (unique values) */
	if (mf_new_check(f, &m, c.initial_value, "QGPU_MFENCE_CREATE") &&
	    c.initial_value == f->mfseq) {
		add_mf(f, &m);
	} else {
		mf_close(f, m.h);
		mf_unmap(f, &m);
	}
}

static void fz_mf_destroy(struct fz *f)
{
	struct drm_qgpu_mfence_destroy d;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, i;
	const char *what = "random";
	struct mfen *m = NULL;
	uint64_t a, v = 0;

	anchors(f);
	memset(&d, 0, sizeof(d));
	if (mode == 0) {
		/* valid: a fence of the pool, now and then actx's own */
		m = one_in(f, 8) && mf_ours(f, &f->amf) ? &f->amf : pick_mf(f);
		if (!m)
			return;
		d.handle = m->h;
		v = *m->v;
		expect = 0;
		what = m == &f->amf ? "valid, a context's fence" : "valid";
	} else if (mode == 1) {
		m = pick_mf(f);
		if (m && one_in(f, 2)) {
			d.handle = m->h;
			d.pad = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "pad not zero";
		} else {
			d.handle = pick64(f, (const uint64_t[]){ 0, dead_mf(f),
				QGPU_MFENCE_MAX + 1, ~0u }, 4);
			expect = ENOENT;
			what = "no such fence";
			m = NULL;
		}
	} else {
		d.handle = any_mf(f);
		d.pad = one_in(f, 4) ? b32(f, 0) : 0;
		if (d.pad)
			expect = EINVAL;
	}
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_MF_DESTROY, DRM_IOCTL_QGPU_MFENCE_DESTROY, a,
		    arg_expect(k, expect), what);
	if (mode == 1 && m && !mf_ours(f, m))
		fz_failf(f, "QGPU_MFENCE_DESTROY (%s): refused, but fence %u is gone",
			 what, m->h);
	if (e)
		return;
	if (mode == 0) {
		/* the handle is gone; the mapping stays, with the value */
		if (mf_check(f, d.handle, 0) != ENOENT)
			fz_failf(f, "QGPU_MFENCE_DESTROY: fence handle %u still answers",
				 d.handle);
		if (*m->v < v)
			fz_failf(f, "QGPU_MFENCE_DESTROY: the mapping of fence %u went from %#llx to %#llx",
				 d.handle, (unsigned long long)v,
				 (unsigned long long)*m->v);
	}
	f->dead_mf = d.handle;
	/* a context's fence keeps its mapping: its submissions go on */
	if (d.handle == f->amf.h)
		f->amf.h = 0;
	if (d.handle == f->avmf.h)
		f->avmf.h = 0;
	for (i = 0; i < f->nmf; i++)
		if (f->mf[i].h == d.handle) {
			forget_mf(f, i, false);
			break;
		}
}

/* A deadline MFENCE_WAIT may take: 0, passed, or a few ms ahead */
static int64_t mf_deadline(struct fz *f)
{
	int64_t now = qgpu_now_ns();

	switch (R(f) % 6) {
	case 0: return 0;
	case 1: return now - SEC_NS;
	case 2: return -1;
	case 3: return INT64_MIN;
	case 4: return now;
	default: return now + 1000000ll * (1 + R(f) % 4);
	}
}

enum { MW_NO, MW_YES, MW_MAYBE };	/* reached before the wait */

static void fz_mf_wait(struct fz *f)
{
	uint32_t *hs = (uint32_t *)(f->rw + MW_OFF), i, n;
	uint64_t *vs = (uint64_t *)(f->rw + MW_VALUES), cur, span;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, kind;
	int state[QGPU_MFENCE_WAIT_MAX], yes = -1, no = 0;
	struct mfen *ms[QGPU_MFENCE_WAIT_MAX];
	struct drm_qgpu_mfence_wait w;
	const char *what = "random";
	uint64_t a;

	anchors(f);
	memset(&w, 0, sizeof(w));
	n = one_in(f, 4) ? QGPU_MFENCE_WAIT_MAX : one_in(f, 3) ? 1 :
	    1 + R32(f) % 8;
	/*
	 * Values the fences are at (reached), above the last queued (never
	 * reached: nothing will write them) or in between (either).
	 */
	for (i = 0; i < n; i++) {
		ms[i] = pick_any_mf(f);
		if (!ms[i])
			return;
		cur = *ms[i]->v;
		switch (R(f) % 4) {
		case 0:
			vs[i] = cur;
			state[i] = MW_YES;
			break;
		case 1:
			vs[i] = R(f) % (cur + 1);
			state[i] = MW_YES;
			break;
		case 2:
			vs[i] = ms[i]->queued + 1 + R(f) % 100;
			state[i] = MW_NO;
			break;
		default:
			/* queued, not reached yet (if there is such a value) */
			span = cur < ms[i]->queued ? ms[i]->queued - cur : 0;
			vs[i] = cur + 1 + (span ? R(f) % span : 0);
			state[i] = span ? MW_MAYBE : MW_NO;
			break;
		}
		hs[i] = ms[i]->h;
		if (state[i] == MW_YES && yes < 0)
			yes = (int)i;
		no += state[i] == MW_NO;
	}
	/*
	 * A later pick may have forgotten fences of the pool, which moves
	 * another into the freed slot and clears the last: a fence picked
	 * before may no longer be where ms[] points (the check after the
	 * call reads its value).
	 */
	for (i = 0; i < n; i++)
		if (ms[i]->h != hs[i] || !ms[i]->v)
			return;
	w.handles = (uintptr_t)hs;
	w.values = (uintptr_t)vs;
	w.count = n;
	w.flags = one_in(f, 2) ? QGPU_MFENCE_WAIT_ANY : 0;
	w.timeout_ns = mf_deadline(f);
	if (one_in(f, 4))
		w.first = R32(f);	/* an output */
	if (mode == 0) {
		what = w.flags ? "valid, any" : "valid, all";
		for (i = 0; i < n && state[i] == MW_YES; i++)
			;
		/*
		 * ANY: one there, at once; none can come, ETIME. ALL: all
		 * there, at once; one cannot come, ETIME.
		 */
		if (w.flags)
			expect = yes >= 0 ? 0 : no == (int)n ? ETIME :
				 EXPECT_ANY;
		else
			expect = no ? ETIME : i == n ? 0 : EXPECT_ANY;
	} else if (mode == 1) {
		/* one field wrong: refused before any wait */
		w.timeout_ns = 0;
		switch (R(f) % 7) {
		case 0:
			w.flags |= 2u << (R(f) % 31);
			expect = EINVAL;
			what = "unknown flag";
			break;
		case 1:
			w.pad = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "pad not zero";
			break;
		case 2:
			w.count = 0;
			expect = EINVAL;
			what = "count 0";
			break;
		case 3:
			w.count = pick64(f, (const uint64_t[]){
				QGPU_MFENCE_WAIT_MAX + 1, 1u << 20, ~0u }, 3);
			expect = EINVAL;
			what = "count above the maximum";
			break;
		case 4:
			hs[R(f) % n] = pick64(f, (const uint64_t[]){ 0,
				dead_mf(f), QGPU_MFENCE_MAX + 1, ~0u }, 4);
			expect = ENOENT;
			what = "no such fence";
			break;
		case 5:
		case 6:
			/* an array the kernel cannot read (all of) */
			kind = pick64(f, (const uint64_t[]){ P_NULL, P_SMALL,
				P_GONE, P_NONE, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			if (one_in(f, 2))
				w.handles = fz_ptr(f, kind, hs, n * 4, MW_OFF);
			else
				w.values = fz_ptr(f, kind, vs, n * 8,
						  MW_VALUES);
			expect = EFAULT;
			what = "bad array";
			break;
		}
	} else {
		for (i = 0; i < n; i++) {
			if (one_in(f, 4))
				hs[i] = any_mf(f);
			if (one_in(f, 4))
				vs[i] = b64(f, ~0ull);
		}
		w.count = one_in(f, 2) ? n : b32(f, QGPU_MFENCE_WAIT_MAX);
		w.flags = one_in(f, 4) ? b32(f, QGPU_MFENCE_WAIT_ANY) :
			  w.flags;
		w.pad = one_in(f, 8) ? R32(f) : 0;
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			w.handles = fz_ptr(f, kind, hs, n * 4, MW_OFF);
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			w.values = fz_ptr(f, kind, vs, n * 8, MW_VALUES);
	}
	a = argp(f, &w, sizeof(w), &k);
	e = fz_call(f, OP_MF_WAIT, DRM_IOCTL_QGPU_MFENCE_WAIT, a,
		    arg_expect(k, expect), what);
	if (e || mode || (k != P_GOOD && k != P_MISALIGNED))
		return;
	i = ((struct drm_qgpu_mfence_wait *)(uintptr_t)a)->first;
	/*
	 * ANY: the first fence found at its value, in order: one that was
	 * (or might be) there, and none after one that surely was.
	 */
	if (w.flags && (i >= n || state[i] == MW_NO ||
			(yes >= 0 && i > (uint32_t)yes) ||
			*ms[i]->v < vs[i]))
		fz_failf(f, "QGPU_MFENCE_WAIT (%s): first %u of %u (the first reached before the call: %d)",
			 what, i, n, yes);
	if (!w.flags && i)
		fz_failf(f, "QGPU_MFENCE_WAIT (%s): first %u, must be 0 without ANY",
			 what, i);
}

/* The last point added to f->tlsync */
static uint64_t tl_last(struct fz *f)
{
	uint64_t pt = 0;

	drmSyncobjQuery2(f->fd, &f->tlsync, &pt, 1,
			 DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED);
	return pt;
}

static void fz_mf_export(struct fz *f)
{
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, st, j;
	struct drm_qgpu_mfence_export x;
	const char *what = "random";
	uint64_t a, cur = 0, pt = 0;
	bool valid = false;
	struct mfen *m;

	anchors(f);
	m = pick_any_mf(f);
	memset(&x, 0, sizeof(x));
	if (m) {
		x.handle = m->h;
		cur = *m->v;
		/* a value queued: reached, or not yet */
		x.value = one_in(f, 3) ? m->queued : one_in(f, 2) ? cur :
			  R(f) % (m->queued + 1);
	}
	x.syncobj = f->xsync;
	if (mode == 0 && m) {
		valid = true;
		expect = 0;
		what = "valid";
		switch (R(f) % 3) {
		case 0:
			/* at a timeline point after its last */
			x.syncobj = f->tlsync;
			x.point = f->tlpoint + 1 + R(f) % 3;
			what = "valid, a timeline point";
			break;
		case 1:
			j = f->nsync ? (int)(R(f) % f->nsync) : -1;
			if (j >= 0 && sync_alive(f, f->sync[j])) {
				x.syncobj = f->sync[j];
				what = "valid, a syncobj of the pool";
			}
			break;
		default:
			break;
		}
	} else if (mode == 1 && m) {
		/* one field wrong: nothing exported (xsync has no fence) */
		switch (R(f) % 6) {
		case 0:
			x.flags = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "flag bit";
			break;
		case 1:
			x.pad = 1u << (R(f) % 32);
			expect = EINVAL;
			what = "pad not zero";
			break;
		case 2:
			x.value = m->queued == ~0ull ? m->queued :
				  one_in(f, 4) ? ~0ull : m->queued + 1 +
				  (one_in(f, 2) ? 0 : R(f) % 1000);
			expect = m->queued == ~0ull ? 0 : EINVAL;
			what = "value not queued";
			break;
		case 3:
			/* (at a point: the timeline keeps its last one) */
			x.syncobj = f->tlsync;
			x.point = f->tlpoint + 1;
			x.value = m->queued + 1;
			expect = m->queued == ~0ull ? EXPECT_ANY : EINVAL;
			what = "value not queued, at a point";
			break;
		case 4:
			x.handle = pick64(f, (const uint64_t[]){ 0, dead_mf(f),
				QGPU_MFENCE_MAX + 1, ~0u }, 4);
			expect = ENOENT;
			what = "no such fence";
			break;
		default:
			x.syncobj = pick64(f, (const uint64_t[]){ 0,
				dead_sync(f), ~0u }, 3);
			expect = ENOENT;
			what = "no such syncobj";
			break;
		}
	} else {
		x.handle = one_in(f, 2) && m ? m->h : any_mf(f);
		x.syncobj = one_in(f, 2) ? f->xsync : any_sync(f);
		x.value = one_in(f, 2) ? x.value : b64(f, x.value);
		x.point = one_in(f, 2) ? 0 : b64(f, 4);
		x.flags = one_in(f, 8) ? b32(f, 0) : 0;
		x.pad = one_in(f, 8) ? b32(f, 0) : 0;
	}
	if (x.syncobj == f->tlsync) {
		pt = tl_last(f);
		if (pt != f->tlpoint)
			fz_failf(f, "QGPU_MFENCE_EXPORT (%s): the timeline's last point is %llu, the last one added %llu",
				 what, (unsigned long long)pt,
				 (unsigned long long)f->tlpoint);
	}
	/* (raw ioctl numbers may have given it one: none now) */
	drmSyncobjReset(f->fd, &f->xsync, 1);
	a = argp(f, &x, sizeof(x), &k);
	e = fz_call(f, OP_MF_EXPORT, DRM_IOCTL_QGPU_MFENCE_EXPORT, a,
		    arg_expect(k, expect), what);
	if (!e) {
		for (j = 0; j < f->nsync; j++)
			if (f->sync[j] == x.syncobj)
				f->sync_fence[j] = true;
		if (x.syncobj == f->tlsync && x.point > f->tlpoint)
			f->tlpoint = x.point;
	}
	if (k != P_GOOD && k != P_MISALIGNED) {
		drmSyncobjReset(f->fd, &f->xsync, 1);
		return;
	}
	if (mode == 1 && m && expect > 0) {
		/* refused: the syncobj as it was */
		st = qs_sync_status(f->fd, f->xsync);
		if (x.syncobj == f->xsync && st > -1000)
			fz_failf(f, "QGPU_MFENCE_EXPORT (%s): refused, but the syncobj has a fence (%s)",
				 what, qs_status_name(st));
		if (x.syncobj == f->tlsync) {
			uint64_t now = tl_last(f);

			if (now != pt)
				fz_failf(f, "QGPU_MFENCE_EXPORT (%s): refused, but the timeline's last point went from %llu to %llu",
					 what, (unsigned long long)pt,
					 (unsigned long long)now);
		}
	} else if (valid && !e) {
		/* a value reached before the call: signalled at once */
		if (x.syncobj == f->tlsync) {
			uint64_t now = tl_last(f);

			if (now != x.point)
				fz_failf(f, "QGPU_MFENCE_EXPORT (%s): the timeline's last point is %llu, %llu was added",
					 what, (unsigned long long)now,
					 (unsigned long long)x.point);
		} else {
			st = qs_sync_status(f->fd, x.syncobj);
			if (x.value <= cur ? st != 1 : st != 0 && st != 1)
				fz_failf(f, "QGPU_MFENCE_EXPORT (%s): value %#llx of a fence at %#llx: the syncobj's fence is %s",
					 what, (unsigned long long)x.value,
					 (unsigned long long)cur,
					 qs_status_name(st));
		}
	}
	drmSyncobjReset(f->fd, &f->xsync, 1);
}

/*
 * The read-only mapping of a fence page: one page, PROT_READ; a writable
 * mapping is refused with EACCES and the mapping cannot be made writable;
 * other offsets and sizes are refused; the page shows this file's fences
 * only.
 */
static void fz_mf_mmap(struct fz *f)
{
	const char *what;
	int e, expect, prot = PROT_READ, flags = MAP_SHARED;
	uint64_t off, len = MF_PAGE, v0, v1;
	struct mfen *m;
	void *p;

	anchors(f);
	m = pick_any_mf(f);
	if (!m)
		return;
	off = m->mmap_off;
	switch (R(f) % 9) {
	case 0:
	case 1:
		expect = 0;
		what = "read-only, shared";
		break;
	case 2:
		prot = PROT_READ | PROT_WRITE;
		expect = EACCES;
		what = "writable, shared";
		break;
	case 3:
		prot = one_in(f, 2) ? PROT_WRITE : PROT_READ | PROT_WRITE;
		flags = MAP_PRIVATE;
		expect = EACCES;
		what = "writable, private";
		break;
	case 4:
		flags = MAP_PRIVATE;
		expect = EXPECT_ANY;
		what = "read-only, private";
		break;
	case 5:
		len = MF_PAGE * (2 + R(f) % 3);
		expect = EXPECT_FAIL;
		what = "more than one page";
		break;
	case 6:
		/*
		 * No page of fences there: below the first (QGPU_MFENCE_MAX
		 * fences take 8 pages at most), beyond the last, at 0
		 */
		off = pick64(f, (const uint64_t[]){ m->mmap_off - 8 * MF_PAGE,
			m->mmap_off + 8 * MF_PAGE, 0,
			m->mmap_off + 4096 * MF_PAGE }, 4);
		expect = EXPECT_FAIL;
		what = "no fence page at that offset";
		break;
	case 7:
		/* another file's fence: its offset here is this file's page */
		if (!f->omf_off)
			return;
		off = f->omf_off;
		expect = EXPECT_ANY;
		what = "another file's fence offset";
		break;
	default:
		/* (mmap() itself wants page-aligned offsets) */
		off += 1 + R(f) % (MF_PAGE - 1);
		expect = EINVAL;
		what = "offset inside a page";
		break;
	}
	v0 = *m->v;
	p = win_map(f, len, prot, flags, off);
	e = p == MAP_FAILED ? errno : 0;
	fz_result(f, OP_MF_MMAP, e ? -1 : 0, e, expect, what);
	if (e)
		return;
	if (off == m->mmap_off) {
		/* the same value as the fuzzer's own mapping shows */
		v1 = *(const volatile uint64_t *)((uint8_t *)p + m->off);
		if (v1 < v0 || v1 > *m->v)
			fz_failf(f, "mmap of a fence page (%s): fence %u reads %#llx, the other mapping %#llx..%#llx",
				 what, m->h, (unsigned long long)v1,
				 (unsigned long long)v0,
				 (unsigned long long)*m->v);
	} else if (off == f->omf_off && f->omf_in < MF_PAGE &&
		   *(const volatile uint64_t *)((uint8_t *)p + f->omf_in) ==
		   OTHER_MFV) {
		fz_failf(f, "mmap of a fence page (%s): this file's page at %#llx shows another file's fence",
			 what, (unsigned long long)off);
	}
	/* never writable */
	e = mprotect(p, len, PROT_READ | PROT_WRITE) ? errno : 0;
	fz_result(f, OP_MF_MMAP, e ? -1 : 0, e, EACCES, "mprotect to write");
	win_unmap(f, p, len);
}

/* ------------------------------------------------------------------------ */
/* GEM_DESTROY                                                               */

/* The handle is gone: GEM_INFO answers ENOENT */
static bool bo_gone(struct fz *f, uint32_t h)
{
	struct drm_qgpu_gem_info gi;

	return qgpu_bo_info(f->fd, h, &gi) == -ENOENT;
}

/* A pool allocation never mapped in the address space, or 0 */
static uint32_t unmapped_bo(struct fz *f)
{
	uint32_t h;
	int i;

	for (i = 0; i < 4 && f->nbo; i++) {
		h = f->bo[R(f) % f->nbo];
		if (!maybe_mapped(f, h))
			return h;
	}
	return 0;
}

/*
 * Is @now @before without the mappings at @a1 and (@two) @a2, and
 * otherwise the same?
 */
static bool lay_same_but(const struct lay *before, const struct lay *now,
			 uint64_t a1, uint64_t a2, bool two)
{
	unsigned int i, j = 0;

	for (i = 0; i < before->n; i++) {
		const struct drm_qgpu_vm_layout_entry *e = &before->e[i];

		if (e->kind == QGPU_VM_LAYOUT_MAPPING &&
		    (e->start == a1 || (two && e->start == a2)))
			continue;
		if (j >= now->n || now->e[j].start != e->start ||
		    now->e[j].size != e->size || now->e[j].kind != e->kind ||
		    now->e[j].flags != e->flags ||
		    now->e[j].offset != e->offset)
			return false;
		j++;
	}
	return j == now->n;
}

/*
 * GEM_DESTROY (DestroyAllocation2) of an allocation mapped once or twice:
 * with ASSUME_NOT_IN_USE its mappings go at once; without, behind the
 * work queued on it (sometimes a buffer on avctx that writes it, which
 * must not fault), within a bound. Nothing else changes, mapped_bytes
 * drops by both mappings (it used to wrap), the handle is gone, and a
 * buffer queued afterwards faults where the mapping was.
 */
static void destroy_mapped(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry *o;
	uint64_t at = 0, gap, s1, s2 = 0, a2 = 0, seq = 0, n;
	struct drm_qgpu_vm_info v0, v1;
	struct drm_qgpu_gem_destroy d;
	struct lay l, now = { 0 };
	bool gone = false;
	struct qgpu_vcb v;
	uint32_t h = 0;
	int e, i;

	vanchors(f, &l);
	o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
	gap = o ? lay_gap(f, &l, o, &at) : 0;
	lay_put(&l);
	if (gap < SZ_4K ||
	    qgpu_bo_create(f->fd, SZ_64K, VIS_APT, 0, 0, &h))
		return;
	note_mapped(f, h);
	n = gap / SZ_4K < 16 ? gap / SZ_4K : 16;
	s1 = SZ_4K * (1 + R(f) % n);
	if (qgpu_vm_map(f->fd, h, at, 0, s1, 0)) {
		qgpu_bo_destroy(f->fd, h);
		return;
	}
	if (gap - s1 >= SZ_4K && !one_in(f, 4)) {
		/* the same allocation again, right after (another part) */
		a2 = at + s1;
		n = (gap - s1) / SZ_4K < 16 ? (gap - s1) / SZ_4K : 16;
		s2 = SZ_4K * (1 + R(f) % n);
		if (qgpu_vm_map(f->fd, h, a2, SZ_4K * (R(f) % (16 - s2 / SZ_4K +
							    1)), s2,
				one_in(f, 3) ? QGPU_VM_MAP_READ_ONLY : 0))
			s2 = 0;
	}
	memset(&d, 0, sizeof(d));
	d.handle = h;
	d.flags = one_in(f, 2) ? QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE : 0;
	if (!d.flags && f->out && f->avctx && one_in(f, 2)) {
		/* work queued on it: the mappings stay until it is done */
		qgpu_vcb_init(&v);
		qgpu_vcb_fill(&v, at, (uint32_t)s1, R32(f));
		seq = ++f->vseq;
		qgpu_vcb_fence(&v, f->fva + FIX_OUT + 8, seq);
		if (v.error || avctx_submit(f, &v, "before GEM_DESTROY", false))
			seq = 0;
		qgpu_vcb_fini(&v);
	}
	lay_get(f, &l);
	qgpu_query_vm_info(f->fd, &v0);
	e = fz_call(f, OP_GEM_DESTROY, DRM_IOCTL_QGPU_GEM_DESTROY,
		    (uintptr_t)&d, 0, d.flags ? "mapped, assume not in use" :
		    "mapped");
	if (e) {
		lay_put(&l);
		return;
	}
	f->destroys_mapped++;
	/* at once with ASSUME_NOT_IN_USE, else once its work is done */
	for (i = 0; i < VWAIT_S * 200; i++) {
		lay_get(f, &now);
		gone = !lay_find(&now, QGPU_VM_LAYOUT_MAPPING, at) &&
		       (!s2 || !lay_find(&now, QGPU_VM_LAYOUT_MAPPING, a2));
		if (gone || d.flags)
			break;
		lay_put(&now);
		usleep(5000);
	}
	qgpu_query_vm_info(f->fd, &v1);
	if (!gone)
		fz_failf(f, "QGPU_GEM_DESTROY (flags %#x) of an allocation mapped at %#llx+%#llx and %#llx+%#llx: still mapped %s",
			 d.flags, (unsigned long long)at,
			 (unsigned long long)s1, (unsigned long long)a2,
			 (unsigned long long)s2,
			 d.flags ? "after the call" : "after its work was done");
	else if (!lay_same_but(&l, &now, at, a2, s2))
		fz_failf(f, "QGPU_GEM_DESTROY (flags %#x) of an allocation mapped at %#llx and %#llx: the address space changed otherwise (%u entries before, %u after)",
			 d.flags, (unsigned long long)at,
			 (unsigned long long)a2, l.n, now.n);
	else if (v1.mapped_bytes != v0.mapped_bytes - s1 - s2)
		fz_failf(f, "QGPU_GEM_DESTROY (flags %#x) of an allocation mapped twice (%#llx and %#llx bytes): mapped_bytes %#llx -> %#llx",
			 d.flags, (unsigned long long)s1,
			 (unsigned long long)s2,
			 (unsigned long long)v0.mapped_bytes,
			 (unsigned long long)v1.mapped_bytes);
	if (!bo_gone(f, h))
		fz_failf(f, "QGPU_GEM_DESTROY (flags %#x): handle %u still answers GEM_INFO",
			 d.flags, h);
	f->dead_bo = h;
	lay_put(&now);
	lay_put(&l);
	if (seq)
		vcheck(f, seq, "a buffer queued before GEM_DESTROY");
	if (gone && one_in(f, 2))
		vfault_at(f, at + 8 * (R(f) % (s1 / 8)),
			  "a buffer queued after GEM_DESTROY");
}

static void fz_gem_destroy(struct fz *f)
{
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	struct drm_qgpu_gem_destroy d;
	const char *what = "random";
	uint32_t h, fresh = 0;
	uint64_t a;

	anchors(f);
	if (mode == 3 && f->mmu && one_in(f, 3)) {
		destroy_mapped(f);
		return;
	}
	/* an allocation not mapped: none of the address space changes */
	h = unmapped_bo(f);
	if (!h) {
		if (qgpu_bo_create(f->fd, 4096 << (R(f) % 5), VIS_APT, 0, 0,
				   &fresh))
			return;
		h = fresh;
	}
	memset(&d, 0, sizeof(d));
	if (mode == 0) {
		d.handle = h;
		d.flags = one_in(f, 2) ? QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE : 0;
		expect = 0;
		what = d.flags ? "valid, assume not in use" : "valid";
	} else if (mode == 1) {
		if (one_in(f, 2)) {
			d.handle = h;
			d.flags = 2u << (R(f) % 31);
			expect = EINVAL;
			what = "unknown flag";
		} else {
			d.handle = pick64(f, (const uint64_t[]){ 0, dead_bo(f),
				foreign_bo(f), ~0u }, 4);
			expect = ENOENT;
			what = "no such allocation";
		}
	} else {
		d.handle = one_in(f, 2) ? h : any_bo(f);
		if (maybe_mapped(f, d.handle))
			d.handle = dead_bo(f);
		d.flags = b32(f, QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE);
	}
	a = argp(f, &d, sizeof(d), &k);
	e = fz_call(f, OP_GEM_DESTROY, DRM_IOCTL_QGPU_GEM_DESTROY, a,
		    arg_expect(k, expect), what);
	if (mode == 1 && d.handle == h && !bo_alive(f, h))
		fz_failf(f, "QGPU_GEM_DESTROY (%s): refused, but the allocation is gone",
			 what);
	if (!e || !bo_alive(f, d.handle)) {
		if (!e && !bo_gone(f, d.handle))
			fz_failf(f, "QGPU_GEM_DESTROY (%s): handle %u still answers GEM_INFO",
				 what, d.handle);
		forget_bo(f, d.handle);
		f->dead_bo = d.handle;
	}
	if (fresh && bo_alive(f, fresh))
		qgpu_bo_destroy(f->fd, fresh);
}

/* ------------------------------------------------------------------------ */
/* INVALIDATE_CACHE                                                          */

static void fz_invalidate(struct fz *f)
{
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	struct drm_qgpu_invalidate_cache c;
	struct drm_qgpu_stats s0, s1;
	const char *what = "random";
	uint64_t size, a, n, b;
	uint32_t h, flags;

	anchors(f);
	h = live_bo(f, &size);
	if (!size)
		return;
	flags = pool_flags(f, h);
	memset(&c, 0, sizeof(c));
	c.handle = h;
	c.offset = SZ_4K * (R(f) % (size / SZ_4K));
	c.size = SZ_4K * (1 + R(f) % ((size - c.offset) / SZ_4K));
	if (one_in(f, 4)) {
		c.offset = 0;
		c.size = size;
	}
	if (mode == 0) {
		expect = 0;
		what = flags & QGPU_GEM_CPU_CACHED ? "valid, cached" : "valid";
	} else if (mode == 1) {
		expect = EINVAL;
		switch (R(f) % 7) {
		case 0:
			c.flags = 1u << (R(f) % 32);
			what = "flag bit";
			break;
		case 1:
			c.offset += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 1 }, 4);
			what = "offset not a multiple of 4096";
			break;
		case 2:
			c.size += pick64(f, (const uint64_t[]){ 1, 8, 2048,
				SZ_4K - 4 }, 4) - SZ_4K;
			what = "size not a multiple of 4096";
			break;
		case 3:
			c.size = 0;
			what = "size 0";
			break;
		case 4:
			switch (R(f) % 3) {
			case 0:
				c.offset = size;
				c.size = SZ_4K;
				break;
			case 1:
				c.offset = 0;
				c.size = size + SZ_4K;
				break;
			default:
				c.offset = size - SZ_4K;
				c.size = 2 * SZ_4K;
				break;
			}
			what = "beyond the allocation";
			break;
		case 5:
			if (one_in(f, 2)) {
				c.offset = ~(SZ_4K - 1);
				c.size = SZ_4K * (1 + R(f) % 4);
			} else {
				c.offset = SZ_4K;
				c.size = ~(SZ_4K - 1);
			}
			what = "offset + size wraps";
			break;
		default:
			c.handle = pick64(f, (const uint64_t[]){ 0, dead_bo(f),
				foreign_bo(f), ~0u }, 4);
			expect = ENOENT;
			what = "no such allocation";
			break;
		}
	} else {
		c.handle = one_in(f, 2) ? h : any_bo(f);
		c.flags = one_in(f, 4) ? b32(f, 0) : 0;
		c.offset = one_in(f, 2) ? c.offset : b64(f, size);
		c.size = one_in(f, 2) ? c.size : b64(f, size);
	}
	qgpu_query_file_stats(f->fd, &s0);
	a = argp(f, &c, sizeof(c), &k);
	e = fz_call(f, OP_INVALIDATE, DRM_IOCTL_QGPU_INVALIDATE_CACHE, a,
		    arg_expect(k, expect), what);
	if (qgpu_query_file_stats(f->fd, &s1))
		return;
	n = s1.cache_invalidations - s0.cache_invalidations;
	b = s1.cache_invalidated_bytes - s0.cache_invalidated_bytes;
	/*
	 * Counted only when it flushed: a refused call, or one for an
	 * allocation that is not cached, never; a cached one's whole range
	 * or nothing (nothing of it in system pages now)
	 */
	if ((e || (c.handle == h && !(flags & QGPU_GEM_CPU_CACHED))) &&
	    (n || b))
		fz_failf(f, "QGPU_INVALIDATE_CACHE (%s): %s, but %llu calls and %llu bytes were counted",
			 what, e ? strerror(e) : "nothing to flush",
			 (unsigned long long)n, (unsigned long long)b);
	else if (!e && c.handle == h && (n > 1 || (n ? b != c.size : b)))
		fz_failf(f, "QGPU_INVALIDATE_CACHE (%s) of %#llx bytes: %llu calls and %llu bytes counted",
			 what, (unsigned long long)c.size,
			 (unsigned long long)n, (unsigned long long)b);
}

/* ------------------------------------------------------------------------ */
/* GEM_SET_PRIORITY                                                          */

#define SP_OFF		0x180000	/* its handles in rw */
#define SP_PRIO		0x184000	/* and its priorities */
#define SP_SEEN		64		/* priorities read back */
#define PRIO_TRACE	"instances/qgpu_fuzz"	/* the fuzzer's tracefs */
#define REQ_PRIORITY	9		/* qgpu_mm_req's kind for it */

/* Write @val to tracefs file @rel; false if that fails */
static bool tw(const char *rel, const char *val)
{
	char path[192];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", qt_tdir, rel);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

/*
 * The driver's tracepoint qgpu_mm_req (kind 9: SetAllocationPriority, one
 * event per allocation with its priority) in a tracefs instance of the
 * fuzzer's, read as it comes (trace_pipe, without blocking): the only way
 * to see what a call set, or that a refused one set nothing. Without
 * tracefs those checks are left out.
 */
static void prio_trace_setup(struct fz *f)
{
	char path[192];

	qt_find_tracefs();
	f->prio_trace = false;
	f->prio_fd = -1;
	if (!qt_tdir[0])
		return;
	snprintf(path, sizeof(path), "%s/" PRIO_TRACE, qt_tdir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return;
	tw(PRIO_TRACE "/events/qgpu/qgpu_mm_req/filter", "kind == 9");
	if (!tw(PRIO_TRACE "/events/qgpu/qgpu_mm_req/enable", "1"))
		return;
	snprintf(path, sizeof(path), "%s/" PRIO_TRACE "/trace_pipe", qt_tdir);
	f->prio_fd = open(path, O_RDONLY | O_NONBLOCK);
	f->prio_trace = f->prio_fd >= 0;
}

static void prio_trace_end(struct fz *f)
{
	char path[192];

	if (!qt_tdir[0])
		return;
	if (f->prio_fd >= 0)
		close(f->prio_fd);
	f->prio_fd = -1;
	tw(PRIO_TRACE "/events/qgpu/qgpu_mm_req/enable", "0");
	snprintf(path, sizeof(path), "%s/" PRIO_TRACE, qt_tdir);
	rmdir(path);
	f->prio_trace = false;
}

/* The priorities set since the last look, in order (at most @max kept) */
static int prio_seen(struct fz *f, uint32_t *out, int max)
{
	static char buf[1 << 16];
	unsigned int kind, arg;
	unsigned long long id;
	size_t len = 0;
	char *p, *nl;
	int n = 0;
	ssize_t r;

	for (;;) {
		r = read(f->prio_fd, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			break;
		len += r;
		buf[len] = 0;
		/* whole lines only; the rest waits for the next read */
		nl = strrchr(buf, '\n');
		if (!nl) {
			if (len == sizeof(buf) - 1)
				len = 0;
			continue;
		}
		*nl = 0;
		for (p = strstr(buf, "qgpu_mm_req: "); p;
		     p = strstr(p + 1, "qgpu_mm_req: "))
			if (sscanf(p, "qgpu_mm_req: kind=%u id=%llu arg=%u",
				   &kind, &id, &arg) == 3 &&
			    kind == REQ_PRIORITY) {
				if (n < max)
					out[n] = arg;
				n++;
			}
		len = buf + len - (nl + 1);
		memmove(buf, nl + 1, len);
	}
	return n;
}

static uint32_t a_priority(struct fz *f)
{
	switch (R(f) % 6) {
	case 0: return QGPU_PRIORITY_MINIMUM;
	case 1: return QGPU_PRIORITY_MAXIMUM;
	case 2: return QGPU_PRIORITY_LOW;
	case 3: return QGPU_PRIORITY_HIGH;
	case 4: return QGPU_PRIORITY_NORMAL;
	default:
		return QGPU_PRIORITY_MINIMUM + R32(f) %
		       (QGPU_PRIORITY_MAXIMUM - QGPU_PRIORITY_MINIMUM + 1);
	}
}

static void fz_set_priority(struct fz *f)
{
	uint32_t *hs = (uint32_t *)(f->rw + SP_OFF), seen[SP_SEEN], n, i;
	uint32_t *ps = (uint32_t *)(f->rw + SP_PRIO);
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY, kind, got;
	struct drm_qgpu_gem_set_priority sp;
	const char *what = "random";
	uint64_t a, size;

	anchors(f);
	n = one_in(f, 4) ? 1 : 1 + R32(f) % 8;
	for (i = 0; i < n; i++) {
		hs[i] = i && one_in(f, 8) ? hs[R(f) % i] : live_bo(f, &size);
		ps[i] = a_priority(f);
	}
	memset(&sp, 0, sizeof(sp));
	sp.handles = (uintptr_t)hs;
	sp.priorities = (uintptr_t)ps;
	sp.count = n;
	if (mode == 0) {
		expect = 0;
		what = "valid";
	} else if (mode == 1) {
		expect = EINVAL;
		switch (R(f) % 8) {
		case 0:
			sp.flags = 1u << (R(f) % 32);
			what = "flag bit";
			break;
		case 1:
			sp.count = 0;
			what = "count 0";
			break;
		case 2:
			sp.count = pick64(f, (const uint64_t[]){
				QGPU_MAX_PRIORITY_HANDLES + 1, 1u << 20,
				0x80000000u, ~0u }, 4);
			what = "count above the maximum";
			break;
		case 3:
			ps[R(f) % n] = pick64(f, (const uint64_t[]){ 0,
				QGPU_PRIORITY_MINIMUM - 1,
				QGPU_PRIORITY_MAXIMUM + 1, ~0u }, 4);
			what = "priority out of range";
			break;
		case 4:
			hs[R(f) % n] = pick64(f, (const uint64_t[]){ 0,
				dead_bo(f), foreign_bo(f), ~0u }, 4);
			expect = ENOENT;
			what = "no such allocation";
			break;
		case 5:
			/* the most there may be, dead ones among them */
			for (i = n; i < QGPU_MAX_PRIORITY_HANDLES; i++) {
				hs[i] = 0x40000000u + i;
				ps[i] = QGPU_PRIORITY_NORMAL;
			}
			sp.count = QGPU_MAX_PRIORITY_HANDLES;
			expect = ENOENT;
			what = "4096 allocations";
			break;
		default:
			/* an array the kernel cannot read (all of) */
			kind = pick64(f, (const uint64_t[]){ P_NULL, P_SMALL,
				P_GONE, P_NONE, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			if (one_in(f, 2))
				sp.handles = fz_ptr(f, kind, hs, n * 4, SP_OFF);
			else
				sp.priorities = fz_ptr(f, kind, ps, n * 4,
						       SP_PRIO);
			expect = EFAULT;
			what = "bad array";
			break;
		}
	} else {
		for (i = 0; i < n; i++) {
			if (one_in(f, 4))
				hs[i] = any_bo(f);
			if (one_in(f, 4))
				ps[i] = b32(f, QGPU_PRIORITY_MAXIMUM);
		}
		sp.count = one_in(f, 2) ? n : b32(f, QGPU_MAX_PRIORITY_HANDLES);
		sp.flags = one_in(f, 8) ? b32(f, 0) : 0;
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			sp.handles = fz_ptr(f, kind, hs, n * 4, SP_OFF);
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			sp.priorities = fz_ptr(f, kind, ps, n * 4, SP_PRIO);
	}
	if (f->prio_trace)
		prio_seen(f, seen, 0);	/* (what came before) */
	a = argp(f, &sp, sizeof(sp), &k);
	e = fz_call(f, OP_SET_PRIORITY, DRM_IOCTL_QGPU_GEM_SET_PRIORITY, a,
		    arg_expect(k, expect), what);
	if (!f->prio_trace || (k != P_GOOD && k != P_MISALIGNED))
		return;
	got = prio_seen(f, seen, SP_SEEN);
	f->prio_checked++;
	/* all or nothing: every priority, in order, or none */
	if (e && got)
		fz_failf(f, "QGPU_GEM_SET_PRIORITY (%s): %s, but %d priorities were set",
			 what, strerror(e), got);
	if (e || sp.count > SP_SEEN || sp.handles != (uintptr_t)hs ||
	    sp.priorities != (uintptr_t)ps)
		return;
	if (got != (int)sp.count) {
		fz_failf(f, "QGPU_GEM_SET_PRIORITY (%s): %u allocations, %d priorities set",
			 what, sp.count, got);
		return;
	}
	for (i = 0; i < sp.count; i++)
		if (seen[i] != ps[i]) {
			fz_failf(f, "QGPU_GEM_SET_PRIORITY (%s): entry %u set %#x, asked for %#x",
				 what, i, seen[i], ps[i]);
			break;
		}
}

/* ------------------------------------------------------------------------ */
/* GEM_OFFER, GEM_RECLAIM                                                    */

#define OF_OFF		0x188000	/* their handles in rw */
#define OF_RES		0x18c000	/* RECLAIM's results */
#define OF_MAX		4		/* allocations offered at once */

static int offer(struct fz *f, const uint32_t *h, uint32_t n, uint32_t prio)
{
	struct drm_qgpu_gem_offer o = {
		.handles = (uintptr_t)h, .count = n, .priority = prio,
	};

	return ioctl(f->fd, DRM_IOCTL_QGPU_GEM_OFFER, &o) ? errno : 0;
}

static int reclaim(struct fz *f, const uint32_t *h, uint32_t n)
{
	struct drm_qgpu_gem_reclaim r = {
		.handles = (uintptr_t)h, .count = n,
	};

	return ioctl(f->fd, DRM_IOCTL_QGPU_GEM_RECLAIM, &r) ? errno : 0;
}

/*
 * Up to OF_MAX distinct allocations of the pool (the anchor among them),
 * in @h; their number. None is offered: the ops below take back what
 * they offered, so that the others may use every allocation.
 */
static uint32_t offer_list(struct fz *f, uint32_t *h)
{
	uint32_t n = 0, i, j, x;

	for (i = 0; i < 1 + R(f) % OF_MAX; i++) {
		x = i && f->nbo ? f->bo[R(f) % f->nbo] : f->abo;
		for (j = 0; j < n && h[j] != x; j++)
			;
		if (j == n && bo_alive(f, x))
			h[n++] = x;
	}
	return n;
}

static bool in_list(const uint32_t *h, uint32_t n, uint32_t x)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (h[i] == x)
			return true;
	return false;
}

/*
 * Is each of @h (@n) offered (@offered) or not? RECLAIM tells, and takes
 * back what was.
 */
static void offered_check(struct fz *f, const uint32_t *h, uint32_t n,
			  bool offered, const char *op, const char *what)
{
	uint32_t i;
	int e;

	for (i = 0; i < n; i++) {
		e = reclaim(f, &h[i], 1);
		if (offered ? e != 0 : e != EINVAL)
			fz_failf(f, "%s (%s): allocation %u %s offered afterwards (RECLAIM: %s)",
				 op, what, h[i], offered ? "is not" : "is",
				 e ? strerror(e) : "taken back");
	}
}

/*
 * What an offered allocation may not do ("qgpu priorities, budgets and
 * offers"): Lock2, be committed (GEM_RESIDE, MAKE_RESIDENT), be listed by
 * a DMA buffer, be offered again; all EINVAL, and nothing queued.
 */
static void offered_refusals(struct fz *f, uint32_t h)
{
	struct drm_qgpu_gem_reside r = {
		.handle = h, .op = QGPU_RESIDE_MAKE_RESIDENT,
	};
	struct drm_qgpu_make_resident mr = {
		.handles = (uintptr_t)&h, .count = 1,
	};
	struct drm_qgpu_context_status c0, c1;
	struct drm_qgpu_gem_lock l = { .handle = h };
	struct drm_qgpu_submit s;
	struct qgpu_cb cb;
	bool c0_ok;

	switch (R(f) % 5) {
	case 0:
		fz_call(f, OP_GEM_LOCK, DRM_IOCTL_QGPU_GEM_LOCK, (uintptr_t)&l,
			EINVAL, "an offered allocation");
		break;
	case 1:
		fz_call(f, OP_GEM_RESIDE, DRM_IOCTL_QGPU_GEM_RESIDE,
			(uintptr_t)&r, EINVAL, "an offered allocation");
		break;
	case 2:
		if (!f->mmu)
			break;
		fz_call(f, OP_MAKE_RESIDENT, DRM_IOCTL_QGPU_MAKE_RESIDENT,
			(uintptr_t)&mr, EINVAL, "an offered allocation");
		break;
	case 3:
		fz_call(f, OP_OFFER, DRM_IOCTL_QGPU_GEM_OFFER,
			(uintptr_t)&(struct drm_qgpu_gem_offer){
				.handles = (uintptr_t)&h, .count = 1,
				.priority = QGPU_OFFER_PRIORITY_NORMAL,
			}, EINVAL, "offered already");
		break;
	default:
		if (!f->actx || qgpu_cb_init(&cb, f->dev->info.max_slots))
			break;
		qgpu_cb_bind(&cb, R32(f) % f->dev->info.max_slots, h, 0,
			     QGPU_CB_WHOLE);
		if (!cb.error) {
			qgpu_cb_to_submit(&cb, f->actx, &s);
			c0_ok = !qgpu_query_context(f->fd, f->actx, &c0);
			fz_call(f, OP_SUBMIT, DRM_IOCTL_QGPU_SUBMIT,
				(uintptr_t)&s, EINVAL, "an offered allocation");
			if (c0_ok && !qgpu_query_context(f->fd, f->actx, &c1) &&
			    c1.submissions != c0.submissions)
				fz_failf(f, "QGPU_SUBMIT (an offered allocation): refused, but the context counts %llu submissions, %llu before",
					 (unsigned long long)c1.submissions,
					 (unsigned long long)c0.submissions);
		}
		qgpu_cb_fini(&cb);
		break;
	}
}

/*
 * Evict offered allocation @h (@size bytes, in VRAM, not mapped in the
 * address space) on request: counted as a discard. True if it went.
 */
static bool offer_evict(struct fz *f, uint32_t h, uint64_t size)
{
	struct drm_qgpu_stats s0, s1;
	uint64_t n, b;

	qgpu_query_stats(f->fd, &s0, NULL, 0, NULL);
	if (qgpu_bo_reside(f->fd, h, QGPU_RESIDE_EVICT, 0, NULL))
		return false;
	qgpu_query_stats(f->fd, &s1, NULL, 0, NULL);
	n = s1.offer_discards - s0.offer_discards;
	b = s1.offer_discarded_bytes - s0.offer_discarded_bytes;
	if (!n || b < size)
		fz_failf(f, "QGPU_GEM_RESIDE (evict an offered allocation in VRAM): %llu discards and %llu bytes counted",
			 (unsigned long long)n, (unsigned long long)b);
	return true;
}

static void fz_offer(struct fz *f)
{
	uint32_t *hs = (uint32_t *)(f->rw + OF_OFF), *res;
	uint32_t own[OF_MAX], out[OF_MAX], n, i, nout = 0, nd = 0, kind;
	uint32_t ev = 0;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	struct drm_qgpu_gem_reclaim r;
	struct drm_qgpu_gem_offer o;
	struct drm_qgpu_gem_info gi;
	const char *what = "random";
	bool pre = false;
	uint64_t a;

	anchors(f);
	n = offer_list(f, own);
	if (!n)
		return;
	memcpy(hs, own, n * sizeof(*hs));
	memset(&o, 0, sizeof(o));
	o.handles = (uintptr_t)hs;
	o.count = n;
	o.priority = QGPU_OFFER_PRIORITY_LOW + R32(f) % 3;
	if (mode == 0) {
		expect = 0;
		what = "valid";
	} else if (mode == 1) {
		expect = EINVAL;
		switch (R(f) % 9) {
		case 0:
			o.flags = 1u << (R(f) % 32);
			what = "flag bit";
			break;
		case 1:
			o.pad = 1u << (R(f) % 32);
			what = "pad not zero";
			break;
		case 2:
			o.count = 0;
			what = "count 0";
			break;
		case 3:
			o.count = pick64(f, (const uint64_t[]){
				QGPU_MAX_OFFER_HANDLES + 1, 1u << 20, ~0u }, 3);
			what = "count above the maximum";
			break;
		case 4:
			o.priority = pick64(f, (const uint64_t[]){ 0,
				QGPU_OFFER_PRIORITY_HIGH + 1, ~0u }, 3);
			what = "bad priority";
			break;
		case 5:
			hs[n] = hs[R(f) % n];
			o.count = n + 1;
			what = "an allocation twice";
			break;
		case 6:
			hs[n] = pick64(f, (const uint64_t[]){ 0, dead_bo(f),
				foreign_bo(f), ~0u }, 4);
			o.count = n + 1;
			expect = ENOENT;
			what = "no such allocation";
			break;
		case 7:
			/* one offered already (and it stays offered) */
			if (offer(f, hs, 1, QGPU_OFFER_PRIORITY_NORMAL))
				return;
			pre = true;
			what = "an allocation offered already";
			break;
		default:
			/* an array the kernel cannot read (all of) */
			kind = pick64(f, (const uint64_t[]){ P_NULL, P_SMALL,
				P_GONE, P_NONE, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			o.handles = fz_ptr(f, kind, hs, n * 4, OF_OFF);
			expect = EFAULT;
			what = "bad array";
			break;
		}
	} else {
		/* (entries beyond the list name nothing) */
		for (i = n; i < QGPU_MAX_OFFER_HANDLES; i++)
			hs[i] = 0x40000000u + i;
		for (i = 0; i < n; i++)
			if (one_in(f, 4))
				hs[i] = one_in(f, 2) ? hs[R(f) % n] :
					dead_bo(f);
		o.count = one_in(f, 2) ? n : b32(f, QGPU_MAX_OFFER_HANDLES);
		o.priority = b32(f, QGPU_OFFER_PRIORITY_HIGH);
		o.flags = one_in(f, 8) ? b32(f, 0) : 0;
		o.pad = one_in(f, 8) ? b32(f, 0) : 0;
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD) {
			/*
			 * (the list elsewhere, with what other calls left
			 * after it: no more than the list)
			 */
			o.handles = fz_ptr(f, kind, hs, n * 4, OF_OFF);
			if (o.count > n)
				o.count = n;
		}
	}
	a = argp(f, &o, sizeof(o), &k);
	e = fz_call(f, OP_OFFER, DRM_IOCTL_QGPU_GEM_OFFER, a,
		    arg_expect(k, expect), what);
	if (mode == 1 || (e && mode == 0)) {
		/* all or nothing: none of them offered (but the one before) */
		if (pre)
			offered_check(f, own, 1, true, "QGPU_GEM_OFFER", what);
		offered_check(f, own + pre, n - pre, false, "QGPU_GEM_OFFER",
			      what);
		return;
	}
	if (e || mode) {
		/* whatever it offered goes back */
		for (i = 0; i < n; i++)
			reclaim(f, &own[i], 1);
		return;
	}
	offered_refusals(f, own[R(f) % n]);
	/*
	 * One in VRAM evicted on request: its content is discarded (unless
	 * it is mapped in the address space, which keeps it); outside VRAM
	 * the content survives
	 */
	for (i = 0; i < n; i++) {
		if (qgpu_bo_info(f->fd, own[i], &gi) || maybe_mapped(f, own[i]))
			continue;
		if (gi.segment != QGPU_SEG_VISIBLE &&
		    gi.segment != QGPU_SEG_LOCAL)
			out[nout++] = own[i];
		else if (!ev && one_in(f, 2) && offer_evict(f, own[i], gi.size))
			ev = own[i];
	}
	/* all back, each with what became of its content */
	res = (uint32_t *)(f->rw + OF_RES);
	memset(res, 0xff, n * sizeof(*res));
	memset(&r, 0, sizeof(r));
	r.handles = (uintptr_t)own;
	r.results = (uintptr_t)res;
	r.count = n;
	r.discarded = R32(f);	/* an output */
	e = fz_call(f, OP_RECLAIM, DRM_IOCTL_QGPU_GEM_RECLAIM, (uintptr_t)&r,
		    0, "what was offered");
	for (i = 0; !e && i < n; i++) {
		bool outside = in_list(out, nout, own[i]);

		if (res[i] > QGPU_RECLAIM_DISCARDED ||
		    (own[i] == ev && res[i] != QGPU_RECLAIM_DISCARDED) ||
		    (outside && res[i] != QGPU_RECLAIM_OK))
			fz_failf(f, "QGPU_GEM_RECLAIM: allocation %u (%s): result %u",
				 own[i], own[i] == ev ? "evicted from VRAM" :
				 outside ? "outside VRAM" : "in VRAM", res[i]);
		nd += res[i] == QGPU_RECLAIM_DISCARDED;
	}
	if (!e && r.discarded != nd)
		fz_failf(f, "QGPU_GEM_RECLAIM: discarded %u, %u results say so",
			 r.discarded, nd);
}

static void fz_reclaim(struct fz *f)
{
	uint32_t *hs = (uint32_t *)(f->rw + OF_OFF), own[OF_MAX], n, i, x;
	uint32_t *res = (uint32_t *)(f->rw + OF_RES), kind, nd;
	int mode = R(f) % 4, k, e, expect = EXPECT_ANY;
	struct drm_qgpu_gem_reclaim r;
	const char *what = "random";
	uint64_t a;

	anchors(f);
	n = offer_list(f, own);
	if (!n || offer(f, own, n, QGPU_OFFER_PRIORITY_LOW + R32(f) % 3))
		return;
	memcpy(hs, own, n * sizeof(*hs));
	memset(&r, 0, sizeof(r));
	r.handles = (uintptr_t)hs;
	r.results = one_in(f, 4) ? 0 : (uintptr_t)res;
	r.count = n;
	if (mode == 0) {
		expect = 0;
		what = r.results ? "valid" : "valid, no results";
	} else if (mode == 1) {
		expect = EINVAL;
		switch (R(f) % 9) {
		case 0:
			r.flags = 1u << (R(f) % 32);
			what = "flag bit";
			break;
		case 1:
			r.pad = 1u << (R(f) % 32);
			what = "pad not zero";
			break;
		case 2:
			r.count = 0;
			what = "count 0";
			break;
		case 3:
			r.count = pick64(f, (const uint64_t[]){
				QGPU_MAX_OFFER_HANDLES + 1, 1u << 20, ~0u }, 3);
			what = "count above the maximum";
			break;
		case 4:
			hs[n] = hs[R(f) % n];
			r.count = n + 1;
			what = "an allocation twice";
			break;
		case 5:
			hs[n] = pick64(f, (const uint64_t[]){ 0, dead_bo(f),
				foreign_bo(f), ~0u }, 4);
			r.count = n + 1;
			expect = ENOENT;
			what = "no such allocation";
			break;
		case 6:
			/* one that is not offered */
			x = 0;
			for (i = 0; i < 4 && f->nbo && !x; i++) {
				x = f->bo[R(f) % f->nbo];
				if (in_list(own, n, x))
					x = 0;
			}
			if (!x) {
				x = dead_bo(f);
				expect = ENOENT;
			}
			hs[n] = x;
			r.count = n + 1;
			what = "an allocation not offered";
			break;
		case 7:
			kind = pick64(f, (const uint64_t[]){ P_NULL, P_SMALL,
				P_GONE, P_NONE, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			r.handles = fz_ptr(f, kind, hs, n * 4, OF_OFF);
			expect = EFAULT;
			what = "bad handle array";
			break;
		default:
			/* results the kernel cannot write: checked first */
			kind = pick64(f, (const uint64_t[]){ P_SMALL, P_GONE,
				P_NONE, P_RO, P_KERNEL, P_NONCANON, P_MAX,
				P_STRAD }, 8);
			r.results = fz_ptr(f, kind, NULL, n * 4, OF_RES);
			expect = EFAULT;
			what = "bad results array";
			break;
		}
	} else {
		for (i = n; i < QGPU_MAX_OFFER_HANDLES; i++)
			hs[i] = 0x40000000u + i;
		for (i = 0; i < n; i++)
			if (one_in(f, 4))
				hs[i] = one_in(f, 2) ? hs[R(f) % n] : any_bo(f);
		r.count = one_in(f, 2) ? n : b32(f, QGPU_MAX_OFFER_HANDLES);
		r.flags = one_in(f, 8) ? b32(f, 0) : 0;
		r.pad = one_in(f, 8) ? b32(f, 0) : 0;
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			r.handles = fz_ptr(f, kind, hs, n * 4, OF_OFF);
		kind = ptr_kind(f, 6);
		if (kind != P_GOOD)
			r.results = fz_ptr(f, kind, NULL, n * 4, OF_RES);
	}
	if (one_in(f, 4))
		r.discarded = R32(f);	/* an output */
	if (r.results == (uintptr_t)res)
		memset(res, 0xff, n * sizeof(*res));
	a = argp(f, &r, sizeof(r), &k);
	e = fz_call(f, OP_RECLAIM, DRM_IOCTL_QGPU_GEM_RECLAIM, a,
		    arg_expect(k, expect), what);
	if (mode == 1 && e && (k == P_GOOD || k == P_MISALIGNED)) {
		/* all or nothing: all of them still offered (taken back now) */
		offered_check(f, own, n, true, "QGPU_GEM_RECLAIM", what);
		return;
	}
	if (!e && mode == 0 && (k == P_GOOD || k == P_MISALIGNED)) {
		/* a result each, and their count of discards */
		nd = 0;
		for (i = 0; r.results && i < n; i++) {
			if (res[i] > QGPU_RECLAIM_DISCARDED)
				fz_failf(f, "QGPU_GEM_RECLAIM (%s): result %u for allocation %u",
					 what, res[i], own[i]);
			nd += res[i] == QGPU_RECLAIM_DISCARDED;
		}
		x = ((struct drm_qgpu_gem_reclaim *)(uintptr_t)a)->discarded;
		if (r.results ? x != nd : x > n)
			fz_failf(f, "QGPU_GEM_RECLAIM (%s): discarded %u, %u results say so",
				 what, x, nd);
		/* and none is offered any more */
		offered_check(f, own, n, false, "QGPU_GEM_RECLAIM", what);
		return;
	}
	/* whatever is still offered goes back */
	for (i = 0; i < n; i++)
		reclaim(f, &own[i], 1);
}

/* ------------------------------------------------------------------------ */
/* GPU virtual addressing: set-up and the end of a run                       */

static void vm_setup(struct fz *f)
{
	struct drm_qgpu_mfence_create oc = { .initial_value = OTHER_MFV };
	struct drm_qgpu_mmu_info mmu;
	uint64_t fence = 0;
	uint32_t *p;
	int ret;

	f->mmu = qgpu_dev_has_mmu(f->dev);
	if (!f->mmu)
		return;
	igt_expect_dmesg("device fault");
	igt_assert_eq(qgpu_query_mmu(f->fd, &mmu), 0);
	f->va_start = mmu.va_start;
	f->va_end = mmu.va_end;
	f->va_size = 1ull << mmu.va_bits;
	f->fva = (f->va_start + (f->va_end - f->va_start) / 2) & ~(SZ_64K - 1);
	p = malloc(SZ_64K);
	igt_assert(p);
	qgpu_pattern_fill(p, SZ_64K, FIX_SEED);
	f->rsum = qgpu_csum(p, SZ_64K / 4);
	free(p);
	igt_assert_eq(fix_make(f), 0);
	igt_assert_eq(qgpu_syncobj_create(f->fd, &f->vsync), 0);
	igt_assert_eq(qgpu_syncobj_create(f->fd, &f->fsync), 0);
	igt_assert_eq(qgpu_syncobj_create(f->fd, &f->usync), 0);
	avctx_make(f, false);
	igt_assert(f->avctx);
	/* another process: its data at the addresses of our hole, in VRAM */
	igt_assert_eq(qgpu_open(&f->odev, QGPU_NODE_RENDER), 0);
	igt_assert_eq(cpu_bo(f->odev.fd, &f->oh, &f->omap), 0);
	qgpu_pattern_fill((void *)f->omap, SZ_64K, OTHER_SEED);
	f->osum = qgpu_csum((const uint32_t *)f->omap, SZ_64K / 4);
	igt_assert_eq(qgpu_vm_reserve(f->odev.fd, f->fva + FIX_HOLE,
				      FIX_SIZE - FIX_HOLE,
				      QGPU_VM_RESERVE_FIXED, NULL), 0);
	igt_assert_eq(qgpu_vm_map(f->odev.fd, f->oh, f->fva + FIX_HOLE, 0,
				  SZ_64K, 0), 0);
	igt_assert_eq(qgpu_make_resident(f->odev.fd, &f->oh, 1, &fence), 0);
	ret = qgpu_paging_fence_wait(f->odev.fd, fence, VWAIT_S * SEC_NS);
	igt_assert_eq(ret, 0);
	/* and a monitored fence, which this file's pages must never show */
	igt_assert_eq(ioctl(f->odev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &oc), 0);
	f->omf_off = oc.mmap_offset;
	f->omf_in = oc.offset;
}

/*
 * Keep a reservation and some mappings around, so that the VM ops and
 * the virtual submits have something to work on.
 */
static void vm_replenish(struct fz *f)
{
	const struct drm_qgpu_vm_layout_entry *o;
	uint64_t at = 0, gap, size;
	uint32_t h;
	struct lay l;
	int i;

	if (!f->mmu)
		return;
	lay_get(f, &l);
	if (!lay_count(f, &l, QGPU_VM_LAYOUT_RESERVED)) {
		qgpu_vm_reserve(f->fd, 0, 16 * SZ_64K, 0, NULL);
		lay_put(&l);
		lay_get(f, &l);
	}
	for (i = lay_count(f, &l, QGPU_VM_LAYOUT_MAPPING); i < 3; i++) {
		o = lay_pick(f, &l, QGPU_VM_LAYOUT_RESERVED, false);
		h = live_bo(f, &size);
		gap = o && size ? lay_gap(f, &l, o, &at) : 0;
		if (!gap)
			break;
		note_mapped(f, h);
		qgpu_vm_map(f->fd, h, at, 0, gap < size ? gap : size,
			    i == 2 ? QGPU_VM_MAP_READ_ONLY : 0);
		lay_put(&l);
		lay_get(f, &l);
	}
	lay_put(&l);
}

/*
 * The end of a run: the read-only data once more, then every reservation
 * is freed, which must leave the address space empty (and release the
 * mappings' references on their allocations).
 */
static void vm_finish(struct fz *f)
{
	struct drm_qgpu_vm_info vi;
	unsigned int i;
	struct lay l;
	int ret;

	if (!f->mmu)
		return;
	vanchors(f, &l);
	lay_put(&l);
	fix_check_ro(f, "the end of the run");
	lay_get(f, &l);
	for (i = 0; i < l.n; i++) {
		if (l.e[i].kind != QGPU_VM_LAYOUT_RESERVED)
			continue;
		ret = qgpu_vm_free(f->fd, l.e[i].start, l.e[i].size);
		if (ret)
			fz_failf(f, "QGPU_VM_FREE of the reservation %#llx+%#llx at the end: %s",
				 (unsigned long long)l.e[i].start,
				 (unsigned long long)l.e[i].size,
				 strerror(-ret));
	}
	lay_put(&l);
	lay_get(f, &l);
	ret = qgpu_query_vm_info(f->fd, &vi);
	if (l.n || ret || vi.reserved_bytes || vi.mapped_bytes)
		fz_failf(f, "every reservation freed: %u layout entries left, %llu bytes reserved, %llu mapped",
			 l.n, (unsigned long long)vi.reserved_bytes,
			 (unsigned long long)vi.mapped_bytes);
	lay_put(&l);
	if (f->out)
		munmap((void *)f->out, SZ_64K);
	f->out = NULL;
}

/*
 * After this file is closed and its allocations are gone (so its work is
 * done): the other process's data and address space are as they were.
 * Then it is closed too.
 */
static void other_finish(struct fz *f, uint64_t base_allocs)
{
	struct drm_qgpu_vm_layout_entry *e = NULL;
	struct drm_qgpu_stats st;
	unsigned int n = 0;
	int i;

	if (!f->mmu)
		return;
	for (i = 0; i < 600; i++) {
		if (qgpu_query_stats(f->odev.fd, &st, NULL, 0, NULL) == 0 &&
		    st.allocations <= base_allocs + 1)
			break;
		usleep(50000);
	}
	other_check(f, "the end of the run");
	if (qgpu_query_vm_layout(f->odev.fd, &e, &n) || n != 2 ||
	    e[0].start != f->fva + FIX_HOLE ||
	    e[0].size != FIX_SIZE - FIX_HOLE ||
	    e[1].start != f->fva + FIX_HOLE || e[1].size != SZ_64K ||
	    e[1].kind != QGPU_VM_LAYOUT_MAPPING)
		fz_failf(f, "another process's address space changed: %u entries",
			 n);
	free(e);
	munmap((void *)f->omap, SZ_64K);
	f->omap = NULL;
	qgpu_close(&f->odev);
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

/*
 * PING: flags and pad must be zero, the input seqno is ignored, and every
 * answer is a later sequence number than the last (no other file pings
 * while the fuzzer runs; the raw calls may ping too, which only skips
 * numbers).
 */
static void fz_ping(struct fz *f)
{
	const char *what = "valid";
	struct drm_qgpu_ping p, *r;
	int k, e, expect = EXPECT_ANY;
	uint64_t a;

	memset(&p, 0, sizeof(p));
	if (one_in(f, 2))
		p.seqno = R(f);
	switch (R(f) % 4) {
	case 0:
		p.flags = 1u << (R(f) % 32);
		expect = EINVAL;
		what = "a flag bit";
		break;
	case 1:
		p.pad = 1u << (R(f) % 32);
		expect = EINVAL;
		what = "pad not zero";
		break;
	case 2:
		p.flags = one_in(f, 2) ? R32(f) : 0;
		p.pad = one_in(f, 2) ? R32(f) : 0;
		expect = p.flags || p.pad ? EINVAL : EXPECT_ANY;
		what = "random";
		break;
	default:
		break;
	}
	a = argp(f, &p, sizeof(p), &k);
	e = fz_call(f, OP_PING, DRM_IOCTL_QGPU_PING, a, arg_expect(k, expect),
		    what);
	if (expect == EXPECT_ANY && (k == P_GOOD || k == P_MISALIGNED) &&
	    (f->dev->info.caps & QGPU_INFO_CAP_PING) && e)
		fz_failf(f, "QGPU_PING (%s): %s on a device with PING", what,
			 strerror(e));
	if (e || (k != P_GOOD && k != P_MISALIGNED))
		return;
	r = (void *)(uintptr_t)a;
	if (f->ping_seq && (int32_t)(r->seqno - f->ping_seq) <= 0)
		fz_failf(f, "QGPU_PING: answered %#llx after %#llx",
			 (unsigned long long)r->seqno,
			 (unsigned long long)f->ping_seq);
	f->ping_seq = r->seqno;
}

/* Driver ioctl numbers with random directions, sizes and contents. */
static void fz_raw(struct fz *f)
{
	uint32_t nr = DRM_COMMAND_BASE + R32(f) % 0x20, size, dir, i;
	unsigned long req;
	uint64_t a;

	/*
	 * Not GEM_DESTROY: it unmaps the allocation's mappings later, when
	 * the work queued before it is done, and the VM ops' checks need an
	 * address space that changes only by their own calls (fz_gem_destroy()
	 * has the random ones). Not MFENCE_EXPORT: a small syncobj handle and
	 * a small value are all it needs to replace a syncobj's fence (the
	 * fences of the pool have every small value queued), and the checks
	 * that wait on the fuzzer's own syncobjs (vsync, fsync, psync) or
	 * find none on them (usync, xsync) need them to change only by their
	 * own calls (fz_mf_export() has the random ones).
	 */
	if (nr == DRM_COMMAND_BASE + DRM_QGPU_GEM_DESTROY ||
	    nr == DRM_COMMAND_BASE + DRM_QGPU_MFENCE_EXPORT)
		nr = DRM_COMMAND_BASE + 0x1f;
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

static void one_call_op(struct fz *f, int op);

static void one_call(struct fz *f, int op)
{
	int64_t t = qgpu_now_ns();

	one_call_op(f, op);
	f->ns[op] += qgpu_now_ns() - t;
}

static void one_call_op(struct fz *f, int op)
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
	case OP_MF_CREATE: fz_mf_create(f); break;
	case OP_MF_DESTROY: fz_mf_destroy(f); break;
	case OP_MF_WAIT: fz_mf_wait(f); break;
	case OP_MF_EXPORT: fz_mf_export(f); break;
	case OP_MF_MMAP: fz_mf_mmap(f); break;
	case OP_GEM_DESTROY: fz_gem_destroy(f); break;
	case OP_INVALIDATE: fz_invalidate(f); break;
	case OP_SET_PRIORITY: fz_set_priority(f); break;
	case OP_OFFER: fz_offer(f); break;
	case OP_RECLAIM: fz_reclaim(f); break;
	case OP_PING: fz_ping(f); break;
	case OP_VM_RESERVE: fz_vm_reserve(f); break;
	case OP_VM_FREE: fz_vm_free(f); break;
	case OP_VM_MAP: fz_vm_map(f); break;
	case OP_VM_UNMAP: fz_vm_unmap(f); break;
	case OP_MAKE_RESIDENT: fz_make_resident(f); break;
	case OP_VSUBMIT: fz_vsubmit(f); break;
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
		/* CPU-accessible, cached (for INVALIDATE_CACHE), neither */
		if (qgpu_bo_create(f->fd, 4096 << (i % 5),
				   QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
				   QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   i % 3 == 1 ? QGPU_GEM_CPU_ACCESS :
				   i % 3 == 2 ? QGPU_GEM_CPU_CACHED : 0, 0, &h))
			break;
		add_bo(f, h, 4096 << (i % 5));
		qgpu_bo_reside(f->fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL);
	}
	for (i = f->nmf; i < 4; i++) {
		struct mfen m;

		if (mf_make(f, mf_unique(f), &m))
			break;
		add_mf(f, &m);
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
	vm_replenish(f);
}

/*
 * Every how many rounds an op runs: the GPU virtual addressing ops a third
 * as often (their calls query the layout, the virtual submits wait for the
 * GPU), so that the group stays well within its time.
 */
static int op_period(struct fz *f, int op)
{
	if (op == OP_MF_MMAP)
		return 2;
	if (op < OP_VM_RESERVE || op > OP_VSUBMIT)
		return 1;
	if (!f->mmu)
		return 0;	/* never */
	return 3;
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
	f.mfseq = 1ull << 40;
	f.tiling = dev.info.caps & QGPU_INFO_CAP_TILING;
	f.max_alloc = dev.info.vram_size > dev.info.gart_size ?
		      dev.info.vram_size : dev.info.gart_size;
	if (f.max_alloc > 4096ull * MiB)
		f.max_alloc = 4096ull * MiB;
	f.rw = mmap(NULL, SCRATCH, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.ro = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Each unmapped page between two mapped ones, so that no later
	 * mapping (the CPU mappings of vm_setup(), malloc's big chunks) can
	 * take its place.
	 */
	f.strad = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f.gone = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	f.mfwin = mmap(NULL, MF_WIN * MF_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(f.rw != MAP_FAILED && f.ro != MAP_FAILED &&
		   f.none != MAP_FAILED && f.strad != MAP_FAILED &&
		   f.gone != MAP_FAILED && f.mfwin != MAP_FAILED);
	munmap(f.strad + 4096, 4096);
	f.gone += 4096;
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

	vm_setup(&f);
	prio_trace_setup(&f);
	igt_info("fuzz: %s node %s, seed %#llx, %ld calls per ioctl%s\n",
		 node == QGPU_NODE_PRIMARY ? "primary" : "render", dev.path,
		 (unsigned long long)seed, iters,
		 f.mmu ? "" : " (no MMU: no GPU virtual addressing)");
	replenish(&f);
	/* round robin over the ioctls, so that they interleave */
	for (i = 0; i < iters; i++) {
		for (op = 0; op < NUM_OPS; op++) {
			if (!op_period(&f, op) || i % op_period(&f, op))
				continue;
			if (i % 64 == 0)
				replenish(&f);
			one_call(&f, op);
		}
	}
	sigaction(SIGALRM, &old, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	cur_op = -1;
	vm_finish(&f);
	prio_trace_end(&f);

	/* close every handle and context explicitly, then the file */
	for (j = 0; j < f.nbo; j++)
		qgpu_bo_destroy(f.fd, f.bo[j]);
	for (j = 0; j < f.nctx; j++)
		qgpu_ctx_destroy(f.fd, f.ctx[j]);
	for (j = 0; j < f.nvctx; j++)
		qgpu_ctx_destroy(f.fd, f.vctx[j]);
	if (f.avctx)
		qgpu_ctx_destroy(f.fd, f.avctx);
	for (j = 0; j < f.nsync; j++)
		qgpu_syncobj_destroy(f.fd, f.sync[j]);
	if (f.abo)
		qgpu_bo_destroy(f.fd, f.abo);
	if (f.tbo)
		qgpu_bo_destroy(f.fd, f.tbo);
	if (f.actx)
		qgpu_ctx_destroy(f.fd, f.actx);
	while (f.nmf)
		forget_mf(&f, 0, true);
	mf_unmap(&f, &f.amf);
	mf_unmap(&f, &f.avmf);
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
		igt_info("  %-30s %6ld calls %6ld ok %7lld ms\n", op_name[op],
			 f.calls[op], f.ok[op],
			 (long long)(f.ns[op] / 1000000));
	if (f.mmu)
		igt_info("  virtual: %ld completions checked, %ld fault records checked, fixed area rebuilt %ld time(s), %ld mapped allocations destroyed\n",
			 f.vchecks, f.vfaults, f.fix_rebuilt,
			 f.destroys_mapped);
	igt_info("  monitored fences: %ld seen reaching their values; priorities: %ld calls checked through the tracepoint%s\n",
		 f.mfchecks, f.prio_checked,
		 qt_tdir[0] ? "" : " (no tracefs)");
	munmap(f.rw, SCRATCH);
	munmap(f.ro, 65536);
	munmap(f.none, 4096);
	munmap(f.strad, 4096);
	munmap(f.strad + 8192, 4096);
	munmap(f.gone - 4096, 4096);
	munmap(f.gone + 4096, 4096);
	munmap(f.mfwin, MF_WIN * MF_PAGE);

	/*
	 * A dma-buf holds its allocation. PRIME_HANDLE_TO_FD whose result
	 * could not be copied out (a bad pointer) leaves an fd nobody knows:
	 * close every dma-buf this process still has before the baseline.
	 */
	close_dmabufs();
	other_finish(&f, b.st.allocations);
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
