// SPDX-License-Identifier: MIT
/*
 * qgpu_failslab: every ioctl survives running out of memory at any of its
 * allocations. For every qgpu ioctl (DRM_IOCTL_QGPU_*; those of GPU virtual
 * addressing on a file of their own per round) and the DRM core ones qgpu's
 * user space uses (GEM_CLOSE, PRIME handle<->fd, SYNCOBJ create and destroy,
 * dumb create and map), a valid call is made over and over with the Nth slab
 * or page allocation of the calling thread failing, N = 1, 2, ...
 * until a call gets through without reaching an Nth allocation. Every call
 * that was failed must return a clean errno (never crash or warn: the VM
 * runner checks the kernel log), a call that succeeded anyway must have done
 * its job, and after each round the memory manager's counters, the segments'
 * usage and the process's open files are back where they were. At the end a
 * kmemleak scan must find nothing allocated by qgpu or DRM.
 *
 * Fault injection (Documentation/fault-injection/fault-injection.rst in the
 * kernel source) uses /proc/self/task/TID/fail-nth ("systematic faults"): it
 * counts the calling thread's allocations only, whatever the probability,
 * interval or task-filter settings, and reads back 0 once the failure was
 * injected. (The `space` knob counts bytes, not allocations, so it cannot
 * name "the Nth allocation".) The failslab and fail_page_alloc attributes are
 * opened up so that every allocation counts: GFP_KERNEL ones
 * (ignore-gfp-wait=N), order-0 pages (min-order=0) and highmem; verbose=0
 * keeps the injection itself out of the kernel log. The process is mlocked
 * so that no page fault needs memory while a failure is armed.
 *
 * Needs a kernel with CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (make test KERNEL=debug); skips (exit 77)
 * elsewhere. The kmemleak check needs CONFIG_DEBUG_KMEMLEAK.
 */
#include <dirent.h>
#include <sys/syscall.h>

#include "qgpu_test.h"

#define FI "/sys/kernel/debug/"
#define KMEMLEAK FI "kmemleak"
#define MAX_ROUNDS 4000
#define FENCE_VALUE 0xfa115ab0c0ffee01ull

static struct qgpu_dev dev;
static struct qgpu_dev card;	/* primary node: dumb buffers */
static int fd2 = -1;		/* a second file on the render node */
static int nth_fd = -1;
static uint32_t ctx;

/* ------------------------------------------------------------------------ */
/* Fault-injection knobs                                                     */

static const struct knob {
	const char *path;
	const char *value;
} knobs[] = {
	{ FI "failslab/probability", "0" },
	{ FI "failslab/verbose", "0" },
	{ FI "failslab/ignore-gfp-wait", "N" },
	{ FI "fail_page_alloc/probability", "0" },
	{ FI "fail_page_alloc/verbose", "0" },
	{ FI "fail_page_alloc/ignore-gfp-wait", "N" },
	{ FI "fail_page_alloc/ignore-gfp-highmem", "N" },
	{ FI "fail_page_alloc/min-order", "0" },
};
static char saved[ARRAY_SIZE(knobs)][32];

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

static void knobs_set(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		igt_assert_eq(read_file(knobs[i].path, saved[i],
					sizeof(saved[i])), 0);
		igt_assert_f(write_file(knobs[i].path, knobs[i].value) == 0,
			     "%s: %s\n", knobs[i].path, strerror(errno));
	}
}

static void knobs_restore(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (saved[i][0])
			write_file(knobs[i].path, saved[i]);
}

/*
 * One call with the thread's nth allocation failing. Between arming and
 * disarming only @call's single ioctl runs (pwrite/pread on fail-nth
 * allocate nothing). Sets *injected when the failure happened.
 */
static int armed_call(int (*call)(void), unsigned int nth, bool *injected)
{
	char arm[16], left[16] = "";
	int len = snprintf(arm, sizeof(arm), "%u", nth), ret;
	ssize_t n;

	igt_assert_eq(pwrite(nth_fd, arm, len, 0), len);
	ret = call();
	n = pread(nth_fd, left, sizeof(left) - 1, 0);
	igt_assert_eq(pwrite(nth_fd, "0", 1, 0), 1);
	igt_assert_lt(0, n);
	left[n] = 0;
	*injected = strtoul(left, NULL, 10) == 0;
	return ret;
}

static int io(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* ------------------------------------------------------------------------ */
/* What must not leak                                                        */

struct snap {
	struct drm_qgpu_stats st;
	struct drm_qgpu_segment_stats seg[8];
	unsigned int nseg;
	int fds;
};

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	igt_assert(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

static void snap_take(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	igt_assert_eq(qgpu_query_stats(dev.fd, &s->st, s->seg, 8, &s->nseg), 0);
	s->fds = count_fds();
}

/* The differences between two snapshots, as text ("" when equal). */
static void snap_diff(const struct snap *a, const struct snap *b, char *out,
		      size_t len)
{
	unsigned int i;
	size_t o = 0;

	out[0] = 0;
#define DIFF(...) (o += snprintf(out + o, o < len ? len - o : 0, __VA_ARGS__))
	if (a->st.allocations != b->st.allocations)
		DIFF(" allocations %llu->%llu", (unsigned long long)a->st.allocations,
		     (unsigned long long)b->st.allocations);
	if (a->st.allocated_bytes != b->st.allocated_bytes)
		DIFF(" allocated_bytes %llu->%llu",
		     (unsigned long long)a->st.allocated_bytes,
		     (unsigned long long)b->st.allocated_bytes);
	for (i = 0; i < a->nseg && i < 8; i++)
		if (a->seg[i].used != b->seg[i].used ||
		    a->seg[i].allocations != b->seg[i].allocations)
			DIFF(" segment %u used %llu->%llu allocations %u->%u",
			     a->seg[i].id, (unsigned long long)a->seg[i].used,
			     (unsigned long long)b->seg[i].used,
			     a->seg[i].allocations, b->seg[i].allocations);
	if (a->fds != b->fds)
		DIFF(" open fds %d->%d", a->fds, b->fds);
#undef DIFF
}

/* Back to @base, allowing a little time for releases done by workers. */
static void snap_expect(const struct snap *base, const char *what,
			unsigned int nth)
{
	char diff[512];
	struct snap now;
	int i;

	for (i = 0; i < 100; i++) {
		snap_take(&now);
		snap_diff(base, &now, diff, sizeof(diff));
		if (!diff[0])
			return;
		usleep(50 * 1000);
	}
	igt_assert_f(false, "%s, allocation %u failed: leaked:%s\n", what, nth,
		     diff);
}

/* ------------------------------------------------------------------------ */
/* The driver loop                                                           */

/*
 * One ioctl under test: setup() prepares (nothing armed), call() is the
 * single ioctl, done() checks a successful call's effect (ret == 0) and
 * releases everything either way.
 */
struct fcase {
	const char *name;
	void (*setup)(void);
	int (*call)(void);
	void (*done)(int ret);
};

/*
 * What a call may answer when an allocation failed. ENOSPC is the kernel's
 * own answer for some: shmem reports a failed inode allocation as ENOSPC
 * (GEM_CREATE and dumb create, through drm_gem_object_init()).
 */
static bool clean_errno(int ret)
{
	return ret == -ENOMEM || ret == -ENOSPC || ret == -EAGAIN ||
	       ret == -EMFILE || ret == -ENFILE;
}

static void run_case(const struct fcase *c)
{
	unsigned int nth, failed = 0, absorbed = 0;
	int errs[8] = { 0 }, nerrs = 0, i;
	struct snap base;
	bool injected = true;
	int ret;

	snap_take(&base);
	for (nth = 1; injected; nth++) {
		igt_assert_f(nth <= MAX_ROUNDS, "%s: still failing after %u allocations\n",
			     c->name, MAX_ROUNDS);
		if (c->setup)
			c->setup();
		ret = armed_call(c->call, nth, &injected);
		igt_assert_f(ret == 0 || injected,
			     "%s: failed with %s with no failure injected\n",
			     c->name, strerror(-ret));
		igt_assert_f(ret == 0 || clean_errno(ret),
			     "%s, allocation %u failed: returned %d (%s)\n",
			     c->name, nth, ret, strerror(-ret));
		if (ret) {
			failed++;
			for (i = 0; i < nerrs && errs[i] != -ret; i++)
				;
			if (i == nerrs && nerrs < 8)
				errs[nerrs++] = -ret;
		} else if (injected) {
			absorbed++;
		}
		c->done(ret);
		snap_expect(&base, c->name, nth);
	}
	igt_info("%s: %u allocation point(s): %u failed the call, %u absorbed;",
		 c->name, nth - 2, failed, absorbed);
	for (i = 0; i < nerrs; i++)
		igt_info(" %s", strerror(errs[i]));
	igt_info("\n");
}

/* ------------------------------------------------------------------------ */
/* The cases                                                                 */

/* State of the current round (static: the calls take no arguments). */
static struct {
	uint32_t h, h2, syncobj;
	uint32_t vctx, pctx, gate, sin, sout;	/* vm-unmap-queued */
	uint32_t *gate_map;
	uint64_t *map;
	int fd;
	uint32_t query_type;
	char buf[4096];
	union {
		struct drm_qgpu_query query;
		struct drm_qgpu_gem_create create;
		struct drm_qgpu_gem_lock lock;
		struct drm_qgpu_gem_unlock unlock;
		struct drm_qgpu_gem_reside reside;
		struct drm_qgpu_gem_info info;
		struct drm_qgpu_submit submit;
		struct drm_qgpu_ctx_create ctx_create;
		struct drm_qgpu_ctx_destroy ctx_destroy;
		struct drm_gem_close close;
		struct drm_prime_handle prime;
		struct drm_syncobj_create sync_create;
		struct drm_syncobj_destroy sync_destroy;
		struct drm_mode_create_dumb dumb;
		struct drm_mode_map_dumb map_dumb;
		struct drm_qgpu_mfence_create mfence;
		struct drm_qgpu_gem_offer offer;
		struct drm_qgpu_gem_reclaim reclaim;
		struct drm_qgpu_gem_set_priority prio;
		struct drm_qgpu_gem_destroy destroy;
		struct drm_qgpu_ping ping;
		struct drm_qgpu_vm_reserve reserve;
		struct drm_qgpu_vm_map vmap;
		struct drm_qgpu_vm_range range;
		struct drm_qgpu_mfence_destroy mfence_destroy;
		struct drm_qgpu_mfence_wait mfence_wait;
		struct drm_qgpu_mfence_export mfence_export;
		struct drm_qgpu_invalidate_cache inval;
		struct drm_qgpu_make_resident mres;
	} a;
	uint64_t u64;
	uint32_t u32[2];
	struct drm_qgpu_sync_entry out;
	struct qgpu_cb *cb;
} r;

static uint32_t bo(uint32_t mask, uint32_t flags)
{
	uint32_t h = 0;

	igt_assert_eq(qgpu_bo_create(dev.fd, 64 * 1024, mask, flags, 0, &h), 0);
	return h;
}

static uint32_t vram_bo(void)
{
	return bo(qt_vram_mask(&dev), 0);
}

static void close_h(void)
{
	if (r.h)
		igt_assert_eq(qgpu_bo_destroy(dev.fd, r.h), 0);
	r.h = 0;
}

/* QUERY: every type */
static void query_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
	r.a.query.type = r.query_type;
	r.a.query.arg = r.query_type == QGPU_QUERY_CONTEXT ? ctx : 0;
	r.a.query.size = sizeof(r.buf);
	r.a.query.ptr = (uintptr_t)r.buf;
}

static int query_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_QUERY, &r.a.query);
}

static void query_done(int ret)
{
	if (!ret)
		igt_assert_lte(1, r.a.query.count);
}

/* GEM_CREATE */
static void create_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
	r.a.create.size = 64 * 1024;
	r.a.create.segment_mask = qt_vram_mask(&dev) |
				  QGPU_SEGBIT(QGPU_SEG_APERTURE);
	r.a.create.flags = QGPU_GEM_CPU_ACCESS;
}

static int create_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_CREATE, &r.a.create);
}

static void create_done(int ret)
{
	r.h = ret ? 0 : r.a.create.handle;
	if (!ret)
		igt_assert_lte(1, r.h);
	close_h();
}

/*
 * GEM_LOCK: a CPU-accessible allocation (locked where it is), or one
 * without QGPU_GEM_CPU_ACCESS resident in VRAM, which the lock moves into
 * the aperture.
 */
static bool lock_moves;

static void lock_setup(void)
{
	r.h = bo(qt_vram_mask(&dev) | QGPU_SEGBIT(QGPU_SEG_APERTURE),
		 lock_moves ? 0 : QGPU_GEM_CPU_ACCESS);
	qt_reside(dev.fd, r.h, QGPU_RESIDE_MAKE_RESIDENT,
		  lock_moves ? QGPU_SEG_VISIBLE : 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.lock.handle = r.h;
}

static int lock_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_LOCK, &r.a.lock);
}

static void lock_done(int ret)
{
	if (!ret) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			       dev.fd, (off_t)r.a.lock.offset);

		igt_assert(p != MAP_FAILED);
		*(volatile uint32_t *)p = 0x1234;
		igt_assert_eq(*(volatile uint32_t *)p, 0x1234);
		munmap(p, 4096);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, r.h), 0);
	}
	close_h();
}

/* GEM_UNLOCK */
static void unlock_setup(void)
{
	uint64_t off;

	lock_setup();
	igt_assert_eq(qgpu_bo_lock(dev.fd, r.h, &off), 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.unlock.handle = r.h;
}

static int unlock_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_UNLOCK, &r.a.unlock);
}

static void unlock_done(int ret)
{
	/* still locked after a failure: a second unlock works */
	if (ret)
		igt_assert_eq(qgpu_bo_unlock(dev.fd, r.h), 0);
	igt_assert_eq(qgpu_bo_unlock(dev.fd, r.h), -EINVAL);
	close_h();
}

/* GEM_RESIDE: make resident in VRAM, and evict to system memory */
static uint32_t reside_op;

static void reside_setup(void)
{
	r.h = vram_bo();
	if (reside_op != QGPU_RESIDE_MAKE_RESIDENT)
		qt_reside(dev.fd, r.h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.reside.handle = r.h;
	r.a.reside.op = reside_op;
}

static int reside_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r.a.reside);
}

static void reside_done(int ret)
{
	struct drm_qgpu_gem_info info = qt_info(dev.fd, r.h);

	if (!ret && reside_op == QGPU_RESIDE_MAKE_RESIDENT)
		igt_assert_neq(info.segment, QGPU_SEG_SYSTEM);
	if (!ret && reside_op == QGPU_RESIDE_EVICT_SYSTEM)
		igt_assert_eq(info.segment, QGPU_SEG_SYSTEM);
	close_h();
}

/* GEM_INFO */
static void info_setup(void)
{
	r.h = vram_bo();
	memset(&r.a, 0, sizeof(r.a));
	r.a.info.handle = r.h;
}

static int info_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_INFO, &r.a.info);
}

static void info_done(int ret)
{
	if (!ret)
		igt_assert_eq_u64(r.a.info.size, 64 * 1024);
	close_h();
}

/*
 * SUBMIT: two allocations, a CPU-visible target and a VRAM-only source:
 *	FILL source, COPY 64 bytes of it into the target at 64, FENCE target+0
 */
static void submit_setup(void)
{
	r.h = bo(QGPU_SEGBIT(QGPU_SEG_VISIBLE) | QGPU_SEGBIT(QGPU_SEG_APERTURE),
		 QGPU_GEM_CPU_ACCESS);
	qt_reside(dev.fd, r.h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	igt_assert_eq(qgpu_bo_map(dev.fd, r.h, 4096, (void **)&r.map), 0);
	memset(r.map, 0, 4096);
	r.h2 = vram_bo();
	qgpu_cb_reset(r.cb);
	igt_assert_lte(0, qgpu_cb_bind(r.cb, 0, r.h, 0, 4096));
	igt_assert_lte(0, qgpu_cb_bind(r.cb, 1, r.h2, 0, 4096));
	igt_assert_eq(qgpu_cb_fill(r.cb, 1, 0, 4096, 0x5a5a0001), 0);
	igt_assert_eq(qgpu_cb_copy(r.cb, 0, 64, 1, 0, 64), 0);
	igt_assert_eq(qgpu_cb_fence(r.cb, 0, 0, FENCE_VALUE), 0);
	igt_assert_eq(r.cb->error, 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &r.syncobj), 0);
	memset(&r.a, 0, sizeof(r.a));
	qgpu_cb_to_submit(r.cb, ctx, &r.a.submit);
	r.out = (struct drm_qgpu_sync_entry){ .handle = r.syncobj };
	r.a.submit.out_syncs = (uintptr_t)&r.out;
	r.a.submit.num_out_syncs = 1;
}

static int submit_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_SUBMIT, &r.a.submit);
}

static void submit_done(int ret)
{
	struct drm_qgpu_context_status cs;

	if (!ret) {
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, r.syncobj, 0,
						30 * SEC_NS), 0);
		igt_assert_eq_u64(r.map[0], FENCE_VALUE);
		igt_assert_eq(((uint32_t *)r.map)[16], 0x5a5a0001);
		igt_assert_eq(((uint32_t *)r.map)[31], 0x5a5a0001);
	} else {
		/* nothing ran (an unsplit buffer has one portion) */
		igt_assert_eq(r.a.submit.portions, 0);
		igt_assert_eq_u64(r.map[0], 0);
		/* and the out-syncobj was not touched: it holds no fence */
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, r.syncobj, 0, 0),
			      -ETIME);
	}
	igt_assert_eq(qgpu_query_context(dev.fd, ctx, &cs), 0);
	igt_assert_eq(cs.state, QGPU_CTX_OK);
	igt_assert_eq(qgpu_syncobj_destroy(dev.fd, r.syncobj), 0);
	igt_assert_eq(qgpu_bo_unmap(dev.fd, r.h, r.map, 4096), 0);
	igt_assert_eq(qgpu_bo_destroy(dev.fd, r.h2), 0);
	close_h();
}

/* CTX_CREATE / CTX_DESTROY */
static void ctx_create_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
}

static int ctx_create_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_CTX_CREATE, &r.a.ctx_create);
}

static void ctx_create_done(int ret)
{
	struct drm_qgpu_context_status cs;

	if (!ret) {
		igt_assert_eq(qgpu_query_context(dev.fd, r.a.ctx_create.ctx, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_OK);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, r.a.ctx_create.ctx), 0);
	}
}

static void ctx_destroy_setup(void)
{
	uint32_t c;

	igt_assert_eq(qgpu_ctx_create(dev.fd, &c), 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.ctx_destroy.ctx = c;
}

static int ctx_destroy_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_CTX_DESTROY, &r.a.ctx_destroy);
}

static void ctx_destroy_done(int ret)
{
	if (ret)
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, r.a.ctx_destroy.ctx), 0);
	igt_assert_eq(qgpu_ctx_destroy(dev.fd, r.a.ctx_destroy.ctx), -ENOENT);
}

/* GEM_CLOSE */
static void gem_close_setup(void)
{
	r.h = vram_bo();
	memset(&r.a, 0, sizeof(r.a));
	r.a.close.handle = r.h;
}

static int gem_close_call(void)
{
	return io(dev.fd, DRM_IOCTL_GEM_CLOSE, &r.a.close);
}

/* GEM_CLOSE, GEM_DESTROY: the handle is gone once the call succeeded */
static void handle_gone_done(int ret)
{
	if (!ret)
		r.h = 0;
	close_h();
}

/* PRIME_HANDLE_TO_FD */
static void export_setup(void)
{
	r.h = vram_bo();
	memset(&r.a, 0, sizeof(r.a));
	r.a.prime.handle = r.h;
	r.a.prime.flags = DRM_CLOEXEC | DRM_RDWR;
	r.a.prime.fd = -1;
}

static int export_call(void)
{
	return io(dev.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &r.a.prime);
}

static void export_done(int ret)
{
	uint32_t h = 0;

	if (!ret) {
		igt_assert_lte(0, r.a.prime.fd);
		/* it is this allocation: importing it back gives the handle */
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, r.a.prime.fd, &h), 0);
		igt_assert_eq(h, r.h);
		close(r.a.prime.fd);
	}
	close_h();
}

/* PRIME_FD_TO_HANDLE, into a second file of the same device */
static void import_setup(void)
{
	int fd;

	r.h = vram_bo();
	igt_assert_eq(drmPrimeHandleToFD(dev.fd, r.h, DRM_CLOEXEC | DRM_RDWR,
					 &fd), 0);
	r.fd = fd;
	memset(&r.a, 0, sizeof(r.a));
	r.a.prime.fd = fd;
}

static int import_call(void)
{
	return io(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &r.a.prime);
}

static void import_done(int ret)
{
	struct drm_qgpu_gem_info info;

	if (!ret) {
		igt_assert_eq(qgpu_bo_info(fd2, r.a.prime.handle, &info), 0);
		igt_assert_eq_u64(info.size, 64 * 1024);
		igt_assert_eq(qgpu_bo_destroy(fd2, r.a.prime.handle), 0);
	}
	close(r.fd);
	close_h();
}

/* SYNCOBJ_CREATE / SYNCOBJ_DESTROY */
static void sync_create_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
}

static int sync_create_call(void)
{
	return io(dev.fd, DRM_IOCTL_SYNCOBJ_CREATE, &r.a.sync_create);
}

static void sync_create_done(int ret)
{
	if (!ret)
		igt_assert_eq(qgpu_syncobj_destroy(dev.fd, r.a.sync_create.handle), 0);
}

static void sync_destroy_setup(void)
{
	uint32_t h;

	igt_assert_eq(qgpu_syncobj_create(dev.fd, &h), 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.sync_destroy.handle = h;
}

static int sync_destroy_call(void)
{
	return io(dev.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &r.a.sync_destroy);
}

static void sync_destroy_done(int ret)
{
	if (ret)
		igt_assert_eq(qgpu_syncobj_destroy(dev.fd, r.a.sync_destroy.handle), 0);
	igt_assert_eq(qgpu_syncobj_destroy(dev.fd, r.a.sync_destroy.handle), -EINVAL);
}

/* MODE_CREATE_DUMB / MODE_MAP_DUMB (primary node) */
static void dumb_create_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
	r.a.dumb.width = 64;
	r.a.dumb.height = 64;
	r.a.dumb.bpp = 32;
}

static int dumb_create_call(void)
{
	return io(card.fd, DRM_IOCTL_MODE_CREATE_DUMB, &r.a.dumb);
}

static void dumb_create_done(int ret)
{
	if (!ret) {
		igt_assert_lte_u64(64 * 64 * 4, r.a.dumb.size);
		igt_assert_eq(qgpu_dumb_destroy(card.fd, r.a.dumb.handle), 0);
	}
}

static void dumb_map_setup(void)
{
	uint32_t h;

	igt_assert_eq(qgpu_dumb_create(card.fd, 64, 64, 32, &h, NULL, NULL), 0);
	r.h = h;
	memset(&r.a, 0, sizeof(r.a));
	r.a.map_dumb.handle = h;
}

static int dumb_map_call(void)
{
	return io(card.fd, DRM_IOCTL_MODE_MAP_DUMB, &r.a.map_dumb);
}

static void dumb_map_done(int ret)
{
	if (!ret) {
		uint32_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				   card.fd, (off_t)r.a.map_dumb.offset);

		igt_assert(p != MAP_FAILED);
		p[0] = 0xd0b;
		igt_assert_eq(p[0], 0xd0b);
		munmap(p, 4096);
	}
	igt_assert_eq(qgpu_dumb_destroy(card.fd, r.h), 0);
	r.h = 0;
}

/* MFENCE_CREATE */
static void mfence_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
	r.a.mfence.initial_value = 7;
}

static int mfence_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &r.a.mfence);
}

static void mfence_done(int ret)
{
	struct drm_qgpu_mfence_destroy d = { .handle = r.a.mfence.handle };

	if (!ret)
		igt_assert_eq(io(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), 0);
}

/* r.h: a VRAM allocation made resident; r.a cleared */
static void resident_bo(void)
{
	r.h = vram_bo();
	igt_assert_eq(qgpu_bo_reside(dev.fd, r.h, QGPU_RESIDE_MAKE_RESIDENT, 0,
				     NULL), 0);
	memset(&r.a, 0, sizeof(r.a));
}

/* GEM_OFFER and GEM_RECLAIM of a resident allocation */
static void offer_setup(void)
{
	resident_bo();
	r.a.offer.handles = (uintptr_t)&r.h;
	r.a.offer.count = 1;
	r.a.offer.priority = QGPU_OFFER_PRIORITY_NORMAL;
}

static int offer_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_OFFER, &r.a.offer);
}

static void offer_done(int ret)
{
	uint32_t res = ~0u;

	/* offered once it succeeded, not otherwise: reclaim tells */
	igt_assert_eq(qgpu_bo_reclaim(dev.fd, &r.h, 1, &res, NULL),
		      ret ? -EINVAL : 0);
	close_h();
}

static void reclaim_setup(void)
{
	r.h = vram_bo();
	igt_assert_eq(qgpu_bo_offer(dev.fd, &r.h, 1,
				    QGPU_OFFER_PRIORITY_NORMAL), 0);
	memset(&r.a, 0, sizeof(r.a));
	r.u32[0] = ~0u;
	r.a.reclaim.handles = (uintptr_t)&r.h;
	r.a.reclaim.results = (uintptr_t)&r.u32[0];
	r.a.reclaim.count = 1;
}

static int reclaim_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_RECLAIM, &r.a.reclaim);
}

static void reclaim_done(int ret)
{
	uint32_t res;

	if (!ret)
		igt_assert_lte(r.u32[0], QGPU_RECLAIM_DISCARDED);
	else
		igt_assert_eq(qgpu_bo_reclaim(dev.fd, &r.h, 1, &res, NULL), 0);
	close_h();
}

/* GEM_SET_PRIORITY */
static void prio_setup(void)
{
	r.h = vram_bo();
	memset(&r.a, 0, sizeof(r.a));
	r.u32[0] = QGPU_PRIORITY_HIGH;
	r.a.prio.handles = (uintptr_t)&r.h;
	r.a.prio.priorities = (uintptr_t)&r.u32[0];
	r.a.prio.count = 1;
}

static int prio_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_SET_PRIORITY, &r.a.prio);
}

/* Whatever the call answered: the allocation goes */
static void close_done(int ret)
{
	(void)ret;
	close_h();
}

/* GEM_DESTROY of a resident allocation */
static void destroy_setup(void)
{
	resident_bo();
	r.a.destroy.handle = r.h;
}

static int destroy_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_GEM_DESTROY, &r.a.destroy);
}

/* PING */
static void ping_setup(void)
{
	memset(&r.a, 0, sizeof(r.a));
}

static int ping_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_PING, &r.a.ping);
}

static void ping_done(int ret)
{
	(void)ret;
}

/*
 * The VM ioctls run on a file of their own per round, closed in done():
 * its address space (made at the first VM ioctl), page tables and all go
 * with it, and a round that left it broken does not spoil the next.
 */
static void vm_file(void)
{
	r.fd = qt_reopen(&dev);
	igt_assert_eq(qgpu_bo_create(r.fd, 64 * 1024, qt_vram_mask(&dev), 0, 0,
				     &r.h2), 0);
}

static void vm_file_done(void)
{
	qt_close(r.fd, r.h2);
	close(r.fd);
	r.fd = -1;
}

/* VM_RESERVE */
static void reserve_setup(void)
{
	vm_file();
	memset(&r.a, 0, sizeof(r.a));
	r.a.reserve.size = 1 << 20;
}

static int reserve_call(void)
{
	return io(r.fd, DRM_IOCTL_QGPU_VM_RESERVE, &r.a.reserve);
}

static void reserve_done(int ret)
{
	if (!ret)
		igt_assert_eq(qgpu_vm_free(r.fd, r.a.reserve.addr,
					   r.a.reserve.size), 0);
	vm_file_done();
}

/* VM_MAP into a reserved range */
static void vmap_setup(void)
{
	uint64_t va = 0;

	vm_file();
	igt_assert_eq(qgpu_vm_reserve(r.fd, 0, 1 << 20, 0, &va), 0);
	memset(&r.a, 0, sizeof(r.a));
	r.a.vmap.handle = r.h2;
	r.a.vmap.addr = va;
	r.a.vmap.size = 64 * 1024;
}

static int vmap_call(void)
{
	return io(r.fd, DRM_IOCTL_QGPU_VM_MAP, &r.a.vmap);
}

static void vmap_done(int ret)
{
	struct drm_qgpu_vm_info vi;

	igt_assert_eq(qgpu_query_vm_info(r.fd, &vi), 0);
	igt_assert_eq_u64(vi.mapped_bytes, ret ? 0 : 64 * 1024);
	vm_file_done();
}

/* vm_file() with a MiB reserved and r.h2 mapped at its start; returns it */
static uint64_t vm_file_mapped(void)
{
	uint64_t va = 0;

	vm_file();
	igt_assert_eq(qgpu_vm_reserve(r.fd, 0, 1 << 20, 0, &va), 0);
	igt_assert_eq(qgpu_vm_map(r.fd, r.h2, va, 0, 64 * 1024, 0), 0);
	memset(&r.a, 0, sizeof(r.a));
	return va;
}

/* VM_UNMAP of a mapping */
static void vunmap_setup(void)
{
	r.a.range.addr = vm_file_mapped();
	r.a.range.size = 64 * 1024;
}

static int vunmap_call(void)
{
	return io(r.fd, DRM_IOCTL_QGPU_VM_UNMAP, &r.a.range);
}

/*
 * VM_UNMAP of a mapping that a virtual DMA buffer queued before it fills,
 * held back behind a physical one that waits for a word the test writes.
 * The buffer finds the mapping (it was queued first). A call that fails
 * changes nothing: the mapping is still there. Never may a failed call
 * leave the mapping out of the address space while its entries, which the
 * buffer walks, still reach memory the kernel let go.
 */
static void vunmap_queued_setup(void)
{
	struct drm_qgpu_sync_entry in = { 0 }, out = { 0 };
	struct qgpu_vcb vcb;
	struct qgpu_cb *cb;
	uint64_t va = vm_file_mapped();

	igt_assert_eq(qgpu_ctx_create_virtual(r.fd, &r.vctx), 0);
	igt_assert_eq(qgpu_ctx_create(r.fd, &r.pctx), 0);
	igt_assert_eq(qgpu_syncobj_create(r.fd, &r.sin), 0);
	igt_assert_eq(qgpu_syncobj_create(r.fd, &r.sout), 0);
	in.handle = r.sin;
	out.handle = r.sout;
	/* the gate: a WAIT for the word to become 1 */
	r.gate = qt_result_buf(r.fd, 4096, &r.gate_map);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, r.gate, 0, 4096);
	qgpu_cb_wait(cb, 0, 0, 1);
	igt_assert_eq(qgpu_submit(r.fd, r.pctx, cb, NULL, 0, &in, 1, NULL), 0);
	qt_cb_free(cb);
	igt_assert_eq(qgpu_vcb_init(&vcb), 0);
	qgpu_vcb_fill(&vcb, va, 64 * 1024, 0x5a5a5a5a);
	igt_assert_eq(qgpu_vcb_submit(r.fd, r.vctx, &vcb, &in, 1, &out, 1),
		      0);
	qgpu_vcb_fini(&vcb);
	r.a.range.addr = va;
	r.a.range.size = 64 * 1024;
}

static void vunmap_queued_done(int ret)
{
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_vm_info vi;

	igt_assert_eq(qgpu_query_vm_info(r.fd, &vi), 0);
	__atomic_store_n((uint64_t *)r.gate_map, 1, __ATOMIC_SEQ_CST);
	igt_assert_eq(qgpu_syncobj_wait(r.fd, r.sout, 0, 20 * SEC_NS), 0);
	igt_assert_eq(qgpu_query_context(r.fd, r.vctx, &cs), 0);
	/* the buffer was queued first: it finds the mapping either way */
	igt_assert_f(cs.state == QGPU_CTX_OK, "the queued buffer: %s\n",
		     qgpu_ctx_state_name(cs.state));
	igt_assert_eq_u64(vi.mapped_bytes, ret ? 64 * 1024 : 0);
	qgpu_syncobj_destroy(r.fd, r.sin);
	qgpu_syncobj_destroy(r.fd, r.sout);
	qgpu_ctx_destroy(r.fd, r.vctx);
	qgpu_ctx_destroy(r.fd, r.pctx);
	qt_unmap(r.fd, r.gate, r.gate_map, 4096);
	qt_close(r.fd, r.gate);
	vm_file_done();
}

/* VM_FREE of a reserved range with a mapping in it */
static void vfree_setup(void)
{
	r.a.range.addr = vm_file_mapped();
	r.a.range.size = 1 << 20;
}

static int vfree_call(void)
{
	return io(r.fd, DRM_IOCTL_QGPU_VM_FREE, &r.a.range);
}

static void vfree_done(int ret)
{
	struct drm_qgpu_vm_info vi;

	if (!ret) {
		igt_assert_eq(qgpu_query_vm_info(r.fd, &vi), 0);
		igt_assert_eq_u64(vi.mapped_bytes, 0);
		igt_assert_eq_u64(vi.reserved_bytes, 0);
	}
	vm_file_done();
}

static void vunmap_done(int ret)
{
	struct drm_qgpu_vm_info vi;

	if (!ret) {
		igt_assert_eq(qgpu_query_vm_info(r.fd, &vi), 0);
		igt_assert_eq_u64(vi.mapped_bytes, 0);
	}
	vm_file_done();
}

/* MFENCE_DESTROY, MFENCE_WAIT (on a value reached), MFENCE_EXPORT */
static void mfence_new(void)
{
	struct drm_qgpu_mfence_create c = { .initial_value = 7 };

	igt_assert_eq(io(dev.fd, DRM_IOCTL_QGPU_MFENCE_CREATE, &c), 0);
	r.h2 = c.handle;
	memset(&r.a, 0, sizeof(r.a));
}

static void mfence_gone(void)
{
	struct drm_qgpu_mfence_destroy d = { .handle = r.h2 };

	igt_assert_eq(io(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), 0);
}

static void mfence_destroy_setup(void)
{
	mfence_new();
	r.a.mfence_destroy.handle = r.h2;
}

static int mfence_destroy_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &r.a.mfence_destroy);
}

static void mfence_destroy_done(int ret)
{
	struct drm_qgpu_mfence_destroy d = { .handle = r.h2 };

	if (ret)
		mfence_gone();
	igt_assert_eq(io(dev.fd, DRM_IOCTL_QGPU_MFENCE_DESTROY, &d), -ENOENT);
}

static void mfence_wait_setup(void)
{
	mfence_new();
	r.u64 = 7;
	r.a.mfence_wait.handles = (uintptr_t)&r.h2;
	r.a.mfence_wait.values = (uintptr_t)&r.u64;
	r.a.mfence_wait.count = 1;
}

static int mfence_wait_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_MFENCE_WAIT, &r.a.mfence_wait);
}

static void mfence_wait_done(int ret)
{
	(void)ret;
	mfence_gone();
}

static void mfence_export_setup(void)
{
	mfence_new();
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &r.syncobj), 0);
	r.a.mfence_export.handle = r.h2;
	r.a.mfence_export.syncobj = r.syncobj;
	r.a.mfence_export.value = 7;
}

static int mfence_export_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_MFENCE_EXPORT, &r.a.mfence_export);
}

static void mfence_export_done(int ret)
{
	uint32_t first = 0;
	int w;

	/* "reached 7" is there at once, or the syncobj has no fence */
	w = drmSyncobjWait(dev.fd, &r.syncobj, 1, 0, 0, &first) ? -errno : 0;
	igt_assert_eq(w, ret ? -EINVAL : 0);
	igt_assert_eq(qgpu_syncobj_destroy(dev.fd, r.syncobj), 0);
	r.syncobj = 0;
	mfence_gone();
}

/* INVALIDATE_CACHE of a CPU-accessible allocation */
static void inval_setup(void)
{
	r.h = bo(QGPU_SEGBIT(QGPU_SEG_VISIBLE) | QGPU_SEGBIT(QGPU_SEG_APERTURE),
		 QGPU_GEM_CPU_ACCESS);
	memset(&r.a, 0, sizeof(r.a));
	r.a.inval.handle = r.h;
	r.a.inval.size = 64 * 1024;
}

static int inval_call(void)
{
	return io(dev.fd, DRM_IOCTL_QGPU_INVALIDATE_CACHE, &r.a.inval);
}

/* MAKE_RESIDENT (GPU virtual addressing), on a file of its own */
static void vm_file(void);
static void vm_file_done(void);

static void mres_setup(void)
{
	vm_file();
	memset(&r.a, 0, sizeof(r.a));
	r.a.mres.handles = (uintptr_t)&r.h2;
	r.a.mres.count = 1;
}

static int mres_call(void)
{
	return io(r.fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &r.a.mres);
}

static void mres_done(int ret)
{
	struct drm_qgpu_gem_info info;
	uint64_t pf;

	if (!ret) {
		/*
		 * The paging is queued by the ioctl; a failure of it (an
		 * allocation of the memory manager's) is the paging fence's
		 * error, which a signalled timeline point no longer shows
		 * (UAPI: what was placed stays, the rest stays reachable in
		 * system memory). Either way the allocation is usable: one
		 * more MakeResident, without a failure, places it.
		 */
		igt_assert_eq(qgpu_paging_fence_wait(r.fd, r.a.mres.paging_fence,
						     20 * SEC_NS), 0);
		igt_assert_eq(qgpu_bo_info(r.fd, r.h2, &info), 0);
		if (info.segment == QGPU_SEG_SYSTEM) {
			igt_assert_eq(qgpu_make_resident(r.fd, &r.h2, 1, &pf),
				      0);
			igt_assert_eq(qgpu_paging_fence_wait(r.fd, pf,
							     20 * SEC_NS), 0);
			igt_assert_eq(qgpu_bo_info(r.fd, r.h2, &info), 0);
			igt_assert_neq(info.segment, QGPU_SEG_SYSTEM);
		}
	}
	vm_file_done();
}

static const struct fcase cases[] = {
	{ "query", query_setup, query_call, query_done },
	{ "gem-create", create_setup, create_call, create_done },
	{ "gem-lock", lock_setup, lock_call, lock_done },
	{ "gem-unlock", unlock_setup, unlock_call, unlock_done },
	{ "gem-reside", reside_setup, reside_call, reside_done },
	{ "gem-info", info_setup, info_call, info_done },
	{ "submit", submit_setup, submit_call, submit_done },
	{ "ctx-create", ctx_create_setup, ctx_create_call, ctx_create_done },
	{ "ctx-destroy", ctx_destroy_setup, ctx_destroy_call, ctx_destroy_done },
	{ "gem-close", gem_close_setup, gem_close_call, handle_gone_done },
	{ "prime-handle-to-fd", export_setup, export_call, export_done },
	{ "prime-fd-to-handle", import_setup, import_call, import_done },
	{ "syncobj-create", sync_create_setup, sync_create_call, sync_create_done },
	{ "syncobj-destroy", sync_destroy_setup, sync_destroy_call, sync_destroy_done },
	{ "dumb-create", dumb_create_setup, dumb_create_call, dumb_create_done },
	{ "dumb-map", dumb_map_setup, dumb_map_call, dumb_map_done },
	{ "mfence-create", mfence_setup, mfence_call, mfence_done },
	{ "gem-offer", offer_setup, offer_call, offer_done },
	{ "gem-reclaim", reclaim_setup, reclaim_call, reclaim_done },
	{ "gem-set-priority", prio_setup, prio_call, close_done },
	{ "gem-destroy", destroy_setup, destroy_call, handle_gone_done },
	{ "ping", ping_setup, ping_call, ping_done },
	{ "vm-reserve", reserve_setup, reserve_call, reserve_done },
	{ "vm-map", vmap_setup, vmap_call, vmap_done },
	{ "vm-unmap", vunmap_setup, vunmap_call, vunmap_done },
	{ "vm-unmap-queued", vunmap_queued_setup, vunmap_call,
	  vunmap_queued_done },
	{ "vm-free", vfree_setup, vfree_call, vfree_done },
	{ "make-resident", mres_setup, mres_call, mres_done },
	{ "mfence-destroy", mfence_destroy_setup, mfence_destroy_call,
	  mfence_destroy_done },
	{ "mfence-wait", mfence_wait_setup, mfence_wait_call, mfence_wait_done },
	{ "mfence-export", mfence_export_setup, mfence_export_call,
	  mfence_export_done },
	{ "invalidate-cache", inval_setup, inval_call, close_done },
};

static const struct fcase *find_case(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!strcmp(cases[i].name, name))
			return &cases[i];
	igt_assert_f(false, "no case %s\n", name);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* kmemleak                                                                  */

/* Entries of the kmemleak report whose allocation trace names qgpu or DRM. */
static int kmemleak_ours(bool print)
{
	char line[512], block[8192] = "";
	int ours = 0;
	FILE *f = fopen(KMEMLEAK, "r");
	size_t o = 0;

	igt_assert(f);
	for (;;) {
		bool end = !fgets(line, sizeof(line), f);

		if (end || !strncmp(line, "unreferenced object", 19)) {
			if (o && (strstr(block, "qgpu") || strstr(block, "drm") ||
				  strstr(block, "dma_buf") || strstr(block, "dma_fence"))) {
				ours++;
				if (print)
					fputs(block, stderr);
			}
			o = 0;
			block[0] = 0;
		}
		if (end)
			break;
		o += snprintf(block + o, o < sizeof(block) ? sizeof(block) - o : 0,
			      "%s", line);
	}
	fclose(f);
	return ours;
}

igt_main
{
	igt_fixture {
		char path[64];

		igt_require_f(access(FI "failslab", F_OK) == 0 &&
			      access(FI "fail_page_alloc", F_OK) == 0,
			      "no %sfailslab or fail_page_alloc: kernel without fault injection\n",
			      FI);
		snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
			 (long)syscall(SYS_gettid));
		nth_fd = open(path, O_RDWR);
		igt_require_f(nth_fd >= 0, "%s: %s\n", path, strerror(errno));
		qt_open(&dev, QGPU_NODE_RENDER);
		qt_open(&card, QGPU_NODE_PRIMARY);
		fd2 = qt_reopen(&dev);
		ctx = qt_ctx(dev.fd);
		r.cb = qt_cb(&dev);
		/* kmemleak: forget what was suspected before this test */
		if (access(KMEMLEAK, F_OK) == 0) {
			write_file(KMEMLEAK, "scan");
			write_file(KMEMLEAK, "clear");
		}
		/* no page fault may need memory while a failure is armed */
		igt_assert_f(mlockall(MCL_CURRENT | MCL_FUTURE) == 0,
			     "mlockall: %s\n", strerror(errno));
		knobs_set();
	}

	igt_subtest("query") {
		static const uint32_t types[] = {
			QGPU_QUERY_DEVICE, QGPU_QUERY_SEGMENTS, QGPU_QUERY_STATS,
			QGPU_QUERY_FILE_STATS, QGPU_QUERY_CONTEXT,
		};
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(types); i++) {
			r.query_type = types[i];
			run_case(find_case("query"));
		}
	}

	igt_subtest("gem-create")
		run_case(find_case("gem-create"));
	igt_subtest("gem-lock") {
		lock_moves = false;
		run_case(find_case("gem-lock"));
		lock_moves = true;
		run_case(find_case("gem-lock"));
	}
	igt_subtest("gem-unlock") {
		lock_moves = false;
		run_case(find_case("gem-unlock"));
	}
	igt_subtest("gem-reside") {
		reside_op = QGPU_RESIDE_MAKE_RESIDENT;
		run_case(find_case("gem-reside"));
		reside_op = QGPU_RESIDE_EVICT_SYSTEM;
		run_case(find_case("gem-reside"));
	}
	igt_subtest("gem-info")
		run_case(find_case("gem-info"));
	igt_subtest("submit")
		run_case(find_case("submit"));
	igt_subtest("ctx-create")
		run_case(find_case("ctx-create"));
	igt_subtest("ctx-destroy")
		run_case(find_case("ctx-destroy"));
	igt_subtest("gem-close")
		run_case(find_case("gem-close"));
	igt_subtest("prime-handle-to-fd")
		run_case(find_case("prime-handle-to-fd"));
	igt_subtest("prime-fd-to-handle")
		run_case(find_case("prime-fd-to-handle"));
	igt_subtest("syncobj-create")
		run_case(find_case("syncobj-create"));
	igt_subtest("syncobj-destroy")
		run_case(find_case("syncobj-destroy"));
	igt_subtest("dumb-create")
		run_case(find_case("dumb-create"));
	igt_subtest("dumb-map")
		run_case(find_case("dumb-map"));
	igt_subtest("mfence-create")
		run_case(find_case("mfence-create"));
	igt_subtest("gem-offer")
		run_case(find_case("gem-offer"));
	igt_subtest("gem-reclaim")
		run_case(find_case("gem-reclaim"));
	igt_subtest("gem-set-priority")
		run_case(find_case("gem-set-priority"));
	igt_subtest("gem-destroy")
		run_case(find_case("gem-destroy"));
	igt_subtest("ping")
		run_case(find_case("ping"));
	igt_subtest("vm-reserve") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("vm-reserve"));
	}
	igt_subtest("vm-map") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("vm-map"));
	}
	igt_subtest("vm-unmap") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("vm-unmap"));
	}
	igt_subtest("vm-unmap-queued") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("vm-unmap-queued"));
	}
	igt_subtest("vm-free") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("vm-free"));
	}
	igt_subtest("make-resident") {
		igt_require(qgpu_dev_has_mmu(&dev));
		run_case(find_case("make-resident"));
	}
	igt_subtest("mfence-destroy")
		run_case(find_case("mfence-destroy"));
	igt_subtest("mfence-wait")
		run_case(find_case("mfence-wait"));
	igt_subtest("mfence-export")
		run_case(find_case("mfence-export"));
	igt_subtest("invalidate-cache")
		run_case(find_case("invalidate-cache"));

	igt_subtest("no-leaks") {
		qt_assert_no_allocations(dev.fd);
	}

	/* After the files are closed: what they held is freed too. */
	igt_fixture {
		knobs_restore();
		qt_cb_free(r.cb);
		qgpu_ctx_destroy(dev.fd, ctx);
		close(fd2);
		qgpu_close(&card);
		qgpu_close(&dev);
	}

	igt_subtest("kmemleak") {
		int n;

		igt_require_f(access(KMEMLEAK, F_OK) == 0, "no %s\n", KMEMLEAK);
		/* kmemleak reports objects unreferenced for 5 s and longer */
		sleep(6);
		igt_assert_eq(write_file(KMEMLEAK, "scan"), 0);
		n = kmemleak_ours(true);
		igt_assert_f(n == 0, "kmemleak: %d leak(s) from qgpu/DRM (above)\n", n);
	}
}
