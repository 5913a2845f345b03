// SPDX-License-Identifier: MIT
/*
 * qgpu_vm: GPU virtual addressing ("GpuMmu Example Scenarios", WDK) from
 * user space, against the rules of include/uapi/drm/qgpu_drm.h: the MMU's
 * capabilities, reserving, mapping and unmapping ranges of a file's
 * address space and every bad argument's errno, MakeResident/Evict and the
 * paging-fence timeline, zero-filled first placement, virtual-mode compute
 * that equals the host's and the physical model's, oversubscription with
 * evicted allocations still reached through system entries, 64 KiB and
 * 4 KiB pages over one allocation, faults (unmapped, read-only) that lose
 * one context only, isolation of two processes at the same virtual
 * address, the virtual-submit rules, and the order of the paging commands
 * a MakeResident and an eviction queue (tracepoints).
 *
 * Arguments: the device properties, key=value (tests/vm/qgpu_test.h).
 * Meant for a small VRAM with non-visible VRAM, e.g. vram-size=32M
 * visible-vram-size=8M.
 */
#define _GNU_SOURCE
#include <linux/dma-buf.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "qgpu_swsync.h"
#include "qgpu_tracefs.h"

#define SZ_4K		0x1000ull
#define SZ_64K		0x10000ull
#define SZ_1M		0x100000ull
/* allocations that share QGPU_VM_MAX_MAPPINGS mappings below their cap */
#define NBO_SPREAD	(QGPU_VM_MAX_MAPPINGS / QGPU_BO_MAX_MAPPINGS + 1)
#define APT		QGPU_SEGBIT(QGPU_SEG_APERTURE)
#define TIMEOUT		(60 * SEC_NS)

static struct qgpu_dev dev;
static struct qt_props props;
static struct drm_qgpu_mmu_info mmu;
static uint32_t vram_mask;	/* every VRAM segment, and the aperture */

/* ------------------------------------------------------------------------ */
/* Files of their own                                                        */

/*
 * A subtest's own DRM file (a new process's address space). Remembered
 * until file_close(), so that a subtest that failed half-way does not leave
 * a file whose mappings keep allocations alive for the checks after it.
 */
static int open_fds[64];

/* Forget what qt_bo()/cpu_view() tracked for @fd: it goes with the file. */
static void qt_cleanup_fd(int fd)
{
	unsigned int i;

	for (i = 0; i < QT_MAX_TRACKED; i++)
		if (qt_tracked[i].fd == fd && (qt_tracked[i].handle ||
					       qt_tracked[i].map)) {
			if (qt_tracked[i].map)
				munmap(qt_tracked[i].map, qt_tracked[i].size);
			memset(&qt_tracked[i], 0, sizeof(qt_tracked[i]));
		}
}

static int file_open(void)
{
	int fd = qt_reopen(&dev);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_fds); i++)
		if (!open_fds[i]) {
			open_fds[i] = fd;
			break;
		}
	return fd;
}

static void file_forget(int fd)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_fds); i++)
		if (open_fds[i] == fd)
			open_fds[i] = 0;
}

static void file_close(int fd)
{
	file_forget(fd);
	qt_cleanup_fd(fd);
	close(fd);
}

/* Close every file a failed subtest left open. */
static void files_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(open_fds); i++)
		if (open_fds[i])
			file_close(open_fds[i]);
}

/* ------------------------------------------------------------------------ */
/* Address spaces, allocations, CPU views                                    */

static uint64_t reserve(int fd, uint64_t size)
{
	uint64_t va = 0;
	int ret = qgpu_vm_reserve(fd, 0, size, 0, &va);

	igt_assert_f(ret == 0, "VM_RESERVE %#llx: %s\n",
		     (unsigned long long)size, strerror(-ret));
	return va;
}

static void reserve_at(int fd, uint64_t va, uint64_t size)
{
	uint64_t got = 0;
	int ret = qgpu_vm_reserve(fd, va, size, QGPU_VM_RESERVE_FIXED, &got);

	igt_assert_f(ret == 0, "VM_RESERVE fixed %#llx+%#llx: %s\n",
		     (unsigned long long)va, (unsigned long long)size,
		     strerror(-ret));
	igt_assert_eq_u64(got, va);
}

static void vmap(int fd, uint32_t h, uint64_t va, uint64_t off, uint64_t size,
		 uint32_t flags)
{
	int ret = qgpu_vm_map(fd, h, va, off, size, flags);

	igt_assert_f(ret == 0, "VM_MAP handle %u at %#llx offset %#llx size %#llx: %s\n",
		     h, (unsigned long long)va, (unsigned long long)off,
		     (unsigned long long)size, strerror(-ret));
}

/* MakeResident (or Evict) and wait for the paging fence; returns it. */
static uint64_t residency_wait(int fd, const uint32_t *h, uint32_t n,
			       bool evict)
{
	uint64_t fence = 0;
	int ret;

	ret = evict ? qgpu_evict(fd, h, n, &fence) :
		      qgpu_make_resident(fd, h, n, &fence);
	igt_assert_f(ret == 0, "%s of %u allocations: %s\n",
		     evict ? "Evict" : "MakeResident", n, strerror(-ret));
	igt_assert_lt(0, fence);
	ret = qgpu_paging_fence_wait(fd, fence, TIMEOUT);
	igt_assert_f(ret == 0, "paging fence %llu: %s\n",
		     (unsigned long long)fence, strerror(-ret));
	return fence;
}

static uint64_t make_resident(int fd, const uint32_t *h, uint32_t n)
{
	return residency_wait(fd, h, n, false);
}

static uint64_t evict(int fd, const uint32_t *h, uint32_t n)
{
	return residency_wait(fd, h, n, true);
}

/* A CPU-accessible allocation any segment may hold */
static uint32_t cpu_bo(int fd, uint64_t size)
{
	return qt_bo(fd, size, vram_mask, QGPU_GEM_CPU_ACCESS, 0);
}

/*
 * A CPU mapping that stays valid while the allocation is not locked (Lock2
 * ends, the mapping keeps following the allocation), so that MakeResident
 * takes it. Released by qt_cleanup() or cpu_unview().
 */
static void *cpu_view(int fd, uint32_t h, uint64_t size)
{
	void *p = NULL;
	int ret = qgpu_bo_map(fd, h, size, &p);

	igt_assert_f(ret == 0, "lock+mmap handle %u: %s\n", h, strerror(-ret));
	igt_assert_eq(qgpu_bo_unlock(fd, h), 0);
	qt_track(fd, h, p, size);
	return p;
}

static void cpu_unview(int fd, uint32_t h, void *p, uint64_t size)
{
	qt_untrack(fd, h, p);
	igt_assert_eq(munmap(p, size), 0);
}

/* Fill [off, off + size) of an allocation with pattern @seed via the CPU */
static void cpu_fill(int fd, uint32_t h, uint64_t off, uint64_t size,
		     uint32_t seed)
{
	uint8_t *p = cpu_view(fd, h, off + size);

	qgpu_pattern_fill(p + off, size, seed);
	cpu_unview(fd, h, p, off + size);
}

/* FNV-1a of words [first, first + n) of pattern @seed */
static uint32_t pattern_csum(uint32_t seed, uint64_t first, uint64_t n)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = first; i < first + n; i++)
		h = (h ^ qgpu_pattern(seed, i)) * QGPU_CSUM_PRIME;
	return h;
}

static uint32_t segment_of(int fd, uint32_t h)
{
	return qt_info(fd, h).segment;
}

static bool in_vram(uint32_t seg)
{
	return seg == QGPU_SEG_VISIBLE || seg == QGPU_SEG_LOCAL;
}

static struct drm_qgpu_vm_info vm_info(int fd)
{
	struct drm_qgpu_vm_info vm;

	igt_assert_eq(qgpu_query_vm_info(fd, &vm), 0);
	igt_assert_eq(vm.pad, 0);
	return vm;
}

/* ------------------------------------------------------------------------ */
/* A process: a file, a virtual context, a result buffer in its VM           */

struct vproc {
	int fd;
	uint32_t ctx;
	uint32_t res;
	volatile uint32_t *out;	/* CPU view of res */
	uint64_t out_va;	/* res in the VM */
};

static void vproc_init(struct vproc *p, int fd)
{
	p->fd = fd;
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &p->ctx), 0);
	p->res = qt_bo(fd, SZ_4K, APT, QGPU_GEM_CPU_ACCESS, 0);
	p->out = cpu_view(fd, p->res, SZ_4K);
	p->out_va = reserve(fd, SZ_64K);
	vmap(fd, p->res, p->out_va, 0, SZ_4K, 0);
}

static void vproc_fini(struct vproc *p)
{
	igt_assert_eq(qgpu_vm_free(p->fd, p->out_va, SZ_64K), 0);
	cpu_unview(p->fd, p->res, (void *)p->out, SZ_4K);
	qt_close(p->fd, p->res);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, p->ctx), 0);
}

static struct qgpu_vcb *vcb_new(void)
{
	struct qgpu_vcb *v = calloc(1, sizeof(*v));

	igt_assert(v);
	igt_assert_eq(qgpu_vcb_init(v), 0);
	return v;
}

static void vcb_free(struct qgpu_vcb *v)
{
	qgpu_vcb_fini(v);
	free(v);
}

static void ctx_ok(int fd, uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_OK,
		     "context %u lost: %s, fault %s at DMA offset %u addr %#llx\n",
		     ctx, qgpu_ctx_state_name(cs.state),
		     qgpu_fault_name(cs.fault_reason), cs.fault_offset,
		     (unsigned long long)cs.fault_addr);
}

/* Submit a virtual buffer, wait, and require the context to be healthy. */
static void vrun(int fd, uint32_t ctx, const struct qgpu_vcb *v)
{
	int ret;

	igt_assert_eq(v->error, 0);
	ret = qgpu_vcb_submit_wait(fd, ctx, v, TIMEOUT);
	igt_assert_f(ret == 0, "virtual submit+wait: %s\n", strerror(-ret));
	ctx_ok(fd, ctx);
}

/*
 * Submit a buffer that must fault: the context is lost with @reason at
 * @addr, and its next submit is ECANCELED.
 */
static void vfault(int fd, uint32_t ctx, const struct qgpu_vcb *v,
		   uint32_t reason, uint64_t addr)
{
	struct drm_qgpu_context_status cs;

	igt_expect_dmesg("device fault");
	igt_assert_eq(qgpu_vcb_submit_wait(fd, ctx, v, TIMEOUT), 0);
	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_LOST_FAULT,
		     "context %u state %s after a faulting buffer\n", ctx,
		     qgpu_ctx_state_name(cs.state));
	igt_assert_f(cs.fault_reason == reason,
		     "fault reason %s, expected %s\n",
		     qgpu_fault_name(cs.fault_reason), qgpu_fault_name(reason));
	igt_assert_eq_u64(cs.fault_addr, addr);
	igt_assert_eq(qgpu_vcb_submit_wait(fd, ctx, v, TIMEOUT), -ECANCELED);
}

/* GPU checksum of [va, va + size) through @p's VM */
static uint32_t vcsum(struct vproc *p, uint64_t va, uint32_t size)
{
	struct qgpu_vcb *v = vcb_new();
	uint32_t r;

	p->out[0] = 0x5eed5eed;
	qgpu_vcb_checksum(v, va, size, p->out_va);
	vrun(p->fd, p->ctx, v);
	r = p->out[0];
	vcb_free(v);
	return r;
}

/* ------------------------------------------------------------------------ */
/* Children: a second process with its own file                              */

#define CHECK(cond) do { \
		if (!(cond)) { \
			printf("child %d: line %d: %s failed (errno %d)\n", \
			       (int)getpid(), __LINE__, #cond, errno); \
			return __LINE__ % 250 + 1; \
		} \
	} while (0)

/* A child's GPU checksum of [va, va + size) through its own VM */
static int child_csum(int fd, uint32_t ctx, uint64_t va, uint32_t size,
		      uint64_t out_va, volatile uint32_t *out, uint32_t *csum)
{
	struct qgpu_vcb v;
	struct drm_qgpu_context_status cs;
	int ret;

	qgpu_vcb_init(&v);
	out[0] = 0x5eed5eed;
	qgpu_vcb_checksum(&v, va, size, out_va);
	ret = qgpu_vcb_submit_wait(fd, ctx, &v, TIMEOUT);
	qgpu_vcb_fini(&v);
	if (ret)
		return ret;
	ret = qgpu_query_context(fd, ctx, &cs);
	if (ret)
		return ret;
	if (cs.state != QGPU_CTX_OK)
		return -EIO;
	*csum = out[0];
	return 0;
}

/* A child's result buffer, mapped in its VM at *va; CPU view in *out */
static int child_result(int fd, uint64_t *va, volatile uint32_t **out)
{
	uint32_t h;
	void *p;

	if (qgpu_bo_create(fd, SZ_4K, APT, QGPU_GEM_CPU_ACCESS, 0, &h) ||
	    qgpu_bo_map(fd, h, SZ_4K, &p) || qgpu_bo_unlock(fd, h) ||
	    qgpu_vm_reserve(fd, 0, SZ_64K, 0, va) ||
	    qgpu_vm_map(fd, h, *va, 0, SZ_4K, 0))
		return -errno;
	*out = p;
	return 0;
}

/*
 * MakeResident and at once a submit that uses the allocations, without
 * waiting for the paging fence, round after round: the submission waits
 * for the paging fence, and the memory manager's moves wait for the work
 * already queued on the allocations; neither may end up waiting for the
 * other. A chain A[i] = fill(i) ^ A[i - 1] over more allocations than
 * VRAM holds, checked against the host.
 */
static int child_make_resident_then_submit(void *arg)
{
	const uint32_t n = 12, size = 4 * SZ_1M;
	uint32_t h[12], ctx, c = 0, i, want;
	volatile uint32_t *out;
	uint64_t base, fence, out_va;
	struct qgpu_vcb v;
	int fd = qt_reopen(&dev);

	(void)arg;
	CHECK(qgpu_ctx_create_virtual(fd, &ctx) == 0);
	CHECK(child_result(fd, &out_va, &out) == 0);
	CHECK(qgpu_vm_reserve(fd, 0, n * size, 0, &base) == 0);
	for (i = 0; i < n; i++) {
		CHECK(qgpu_bo_create(fd, size, qt_vram_mask(&dev), 0, 0,
				     &h[i]) == 0);
		CHECK(qgpu_vm_map(fd, h[i], base + i * size, 0, size, 0) == 0);
	}
	CHECK(qgpu_vcb_init(&v) == 0);
	for (i = 0; i < n; i++) {
		uint32_t two[2] = { h[i], h[i ? i - 1 : 0] };
		uint64_t a = base + i * size;

		CHECK(qgpu_make_resident(fd, two, i ? 2 : 1, &fence) == 0);
		qgpu_vcb_reset(&v);
		qgpu_vcb_fill(&v, a, size, 0x01000193u * (i + 3));
		if (i)
			qgpu_vcb_xor(&v, a, a, a - size, size / 4);
		qgpu_vcb_checksum(&v, a, size, out_va + 4 * i);
		CHECK(v.error == 0);
		CHECK(qgpu_vcb_submit(fd, ctx, &v, NULL, 0, NULL, 0) == 0);
	}
	CHECK(qgpu_paging_fence_wait(fd, fence, 20 * SEC_NS) == 0);
	qgpu_vcb_reset(&v);
	qgpu_vcb_nop(&v, 1);
	CHECK(qgpu_vcb_submit_wait(fd, ctx, &v, 20 * SEC_NS) == 0);
	for (i = 0; i < n; i++) {
		c = i ? c ^ 0x01000193u * (i + 3) : 0x01000193u * (i + 3);
		want = qt_csum_const(c, size / 4);
		CHECK(out[i] == want);
	}
	qgpu_vcb_fini(&v);
	return 0;
}

/*
 * A paging fence is a dependency of a physical DMA buffer (an in-sync)
 * whose allocation then moves: the move waits for the DMA buffer, the DMA
 * buffer for the paging fence. The paging fence must not wait for the
 * move, or the paging engine, which every process shares, stops for good.
 * The requests queued ahead (6 moves of 1024 allocations) gave the memory
 * manager's worker of an earlier version time to let the DMA buffer and
 * the move be queued before it decided what the fence waited for. With
 * @arg non-NULL the DMA buffer waits for the fence implicitly: a sync_file
 * of it imported into x's dma-buf.
 */
static int child_paging_fence_cycle(void *arg)
{
	const uint32_t nbusy = 1024, rounds = 6, size = SZ_64K;
	uint32_t *busy, x, y, pctx, i, r, *m;
	struct drm_qgpu_sync_entry in = { 0 }, done = { 0 };
	struct drm_qgpu_vm_info vm;
	uint64_t fence, n;
	struct qgpu_cb cb;
	int fd = qt_reopen(&dev);

	busy = calloc(nbusy, sizeof(*busy));
	CHECK(busy);
	for (i = 0; i < nbusy; i++)
		CHECK(qgpu_bo_create(fd, 4096, qt_vram_mask(&dev), 0, 0,
				     &busy[i]) == 0);
	CHECK(qgpu_bo_create(fd, 4096, qt_vram_mask(&dev), 0, 0, &y) == 0);
	CHECK(qgpu_bo_create(fd, size, qt_vram_mask(&dev) |
			     QGPU_SEGBIT(QGPU_SEG_APERTURE),
			     QGPU_GEM_CPU_ACCESS, 0, &x) == 0);
	CHECK(qgpu_ctx_create(fd, &pctx) == 0);
	CHECK(qgpu_query_vm_info(fd, &vm) == 0);
	CHECK(qgpu_syncobj_create(fd, &done.handle) == 0);
	CHECK(qgpu_cb_init(&cb, dev.info.max_slots) == 0);
	/* in and out of VRAM in turns: each request moves them all */
	for (r = 0; r < rounds; r++)
		CHECK((r % 2 ? qgpu_evict(fd, busy, nbusy, &fence) :
		       qgpu_make_resident(fd, busy, nbusy, &fence)) == 0);
	CHECK(qgpu_make_resident(fd, &y, 1, &n) == 0);
	/* a DMA buffer that uses x waits for paging fence n */
	in.handle = vm.paging_fence_syncobj;
	in.point = n;
	if (arg) {
		struct dma_buf_import_sync_file imp = {
			.flags = DMA_BUF_SYNC_WRITE,
		};
		uint32_t bin;
		int dfd;

		CHECK(qgpu_syncobj_create(fd, &bin) == 0);
		CHECK(drmSyncobjTransfer(fd, bin, 0, in.handle, n, 0) == 0);
		CHECK(drmSyncobjExportSyncFile(fd, bin, &imp.fd) == 0);
		CHECK(drmPrimeHandleToFD(fd, x, DRM_CLOEXEC, &dfd) == 0);
		CHECK(ioctl(dfd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp) == 0);
		close(imp.fd);
		close(dfd);
	}
	qgpu_cb_bind(&cb, 0, x, 0, size);
	qgpu_cb_fill(&cb, 0, 0, size, 0x5eed);
	CHECK(qgpu_submit(fd, pctx, &cb, arg ? NULL : &in, arg ? 0 : 1,
			  &done, 1, NULL) == 0);
	/* x moves: the move waits for that DMA buffer */
	CHECK(qgpu_bo_reside(fd, x, QGPU_RESIDE_MAKE_RESIDENT,
			     QGPU_SEG_APERTURE, NULL) == 0);
	CHECK(qgpu_paging_fence_wait(fd, n, 20 * SEC_NS) == 0);
	CHECK(qgpu_syncobj_wait(fd, done.handle, 0, 20 * SEC_NS) == 0);
	m = qt_map(fd, x, size);
	for (i = 0; i < size / 4; i++)
		CHECK(m[i] == 0x5eed);
	qgpu_cb_fini(&cb);
	free(busy);
	close(fd);
	return 0;
}

static void run_child(int (*fn)(void *), void *arg, const char *what)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	st = qt_wait_child(pid);
	igt_assert_f(st == 0, "%s: child failed (status %d)\n", what, st);
}

/*
 * Another process maps, makes resident and computes in both models: it
 * still works.
 */
static int child_works(void *arg)
{
	struct drm_qgpu_context_status cs;
	volatile uint32_t *out;
	uint64_t out_va, va, fence;
	uint32_t h, ctx, pctx, csum;
	struct qgpu_cb cb;
	int fd;

	(void)arg;
	fd = open(dev.path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(qgpu_ctx_create_virtual(fd, &ctx) == 0);
	CHECK(child_result(fd, &out_va, &out) == 0);
	CHECK(qgpu_bo_create(fd, SZ_64K, vram_mask, 0, 0, &h) == 0);
	CHECK(qgpu_vm_reserve(fd, 0, SZ_64K, 0, &va) == 0);
	CHECK(qgpu_vm_map(fd, h, va, 0, SZ_64K, 0) == 0);
	CHECK(qgpu_make_resident(fd, &h, 1, &fence) == 0);
	CHECK(qgpu_paging_fence_wait(fd, fence, TIMEOUT) == 0);
	CHECK(child_csum(fd, ctx, va, SZ_64K, out_va, out, &csum) == 0);
	CHECK(csum == qt_csum_const(0, SZ_64K / 4));
	/* and a physical context of its own */
	CHECK(qgpu_ctx_create(fd, &pctx) == 0);
	CHECK(qgpu_cb_init(&cb, dev.info.max_slots) == 0);
	qgpu_cb_bind(&cb, 0, h, 0, SZ_64K);
	qgpu_cb_fill(&cb, 0, 0, SZ_64K, 0x7e57);
	CHECK(qgpu_submit_wait(fd, pctx, &cb, TIMEOUT, NULL) == 0);
	CHECK(qgpu_query_context(fd, pctx, &cs) == 0);
	CHECK(cs.state == QGPU_CTX_OK);
	qgpu_cb_fini(&cb);
	CHECK(child_csum(fd, ctx, va, SZ_64K, out_va, out, &csum) == 0);
	CHECK(csum == qt_csum_const(0x7e57, SZ_64K / 4));
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Tracepoints                                                               */

static void trace_begin(void)
{
	qt_twrite("tracing_on", "0");
	qt_twrite("trace", "");
	qt_twrite("buffer_size_kb", "4096");
	qt_twrite("events/qgpu/enable", "1");
	qt_twrite("tracing_on", "1");
}

static char *trace_end(void)
{
	qt_twrite("tracing_on", "0");
	qt_twrite("events/qgpu/enable", "0");
	return qt_tread();
}

/*
 * The paging operations of "GpuMmu Example Scenarios" as the driver's
 * tracepoints name them (kernel/qgpu_trace.h). One place to adjust.
 */
#define EV_UPDATE_PT	"qgpu_update_pt"
#define EV_FLUSH_TLB	"qgpu_flush_tlb"
#define EV_TRANSFER	"qgpu_transfer_virtual"
#define EV_FILL		"qgpu_fill_virtual"
#define EV_SIGNAL	"qgpu_paging_signal"

/*
 * A step of an expected sequence: an event and up to three field
 * conditions "key=VALUE". VALUE is a number, or $PROC (the process's root
 * descriptor), $PAGING (the paging process's root: the UAPI does not name
 * it, so every other root the trace shows is tried), $SIZE (the
 * allocation's size), $FENCE (the paging fence).
 */
struct tstep {
	const char *event;
	const char *cond[3];
	const char *what;
};

struct tvars {
	uint64_t proc, paging, size, fence;
	bool paging_known;
};

/* The value of field @key in trace line @line (numbers in any C base) */
static bool tfield(const char *line, const char *key, uint64_t *v)
{
	char k[40];
	const char *at;

	snprintf(k, sizeof(k), " %s=", key);
	at = strstr(line, k);
	if (!at)
		return false;
	*v = strtoull(at + strlen(k), NULL, 0);
	return true;
}

static bool tcond(const char *line, const char *cond, const struct tvars *tv)
{
	char key[40];
	const char *eq = strchr(cond, '='), *val;
	uint64_t v, want;

	igt_assert(eq && eq - cond < (int)sizeof(key));
	snprintf(key, sizeof(key), "%.*s", (int)(eq - cond), cond);
	if (!tfield(line, key, &v))
		return false;
	val = eq + 1;
	if (!strcmp(val, "$PROC"))
		want = tv->proc;
	else if (!strcmp(val, "$PAGING"))
		want = tv->paging;
	else if (!strcmp(val, "$SIZE"))
		want = tv->size;
	else if (!strcmp(val, "$FENCE"))
		want = tv->fence;
	else
		want = strtoull(val, NULL, 0);
	return v == want;
}

/*
 * Find the steps in @trace in order (other lines may come between).
 * Returns the index of the first step not found, or -1.
 */
static int tmatch(const char *trace, const struct tstep *steps, int n,
		  const struct tvars *tv)
{
	const char *p = trace;
	int s = 0;

	while (s < n && *p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char line[512], ev[64];

		snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), p);
		snprintf(ev, sizeof(ev), " %s: ", steps[s].event);
		if (strstr(line, ev)) {
			bool ok = true;
			int c;

			for (c = 0; c < 3 && steps[s].cond[c] && ok; c++)
				ok = tcond(line, steps[s].cond[c], tv);
			if (ok)
				s++;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	return s < n ? s : -1;
}

/*
 * tmatch() with the paging process's root bound to each root the trace's
 * UPDATE_PT and FLUSH_TLB events name but the process's own, unless it is
 * known already; binds it on success. Returns as tmatch() (the furthest).
 */
static int tmatch_paging(const char *trace, const struct tstep *steps, int n,
			 struct tvars *tv)
{
	uint64_t cand[32];
	const char *p = trace;
	int nc = 0, best = 0, miss, i;

	if (tv->paging_known)
		return tmatch(trace, steps, n, tv);
	while (p && *p && nc < 32) {
		const char *end = strchr(p, '\n');
		char line[512];
		uint64_t root;
		size_t len = end ? (size_t)(end - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), p);
		if ((strstr(line, " " EV_UPDATE_PT ": ") ||
		     strstr(line, " " EV_FLUSH_TLB ": ")) &&
		    tfield(line, "root", &root) && root != tv->proc) {
			for (i = 0; i < nc && cand[i] != root; i++)
				;
			if (i == nc)
				cand[nc++] = root;
		}
		p = end ? end + 1 : NULL;
	}
	for (i = 0; i < nc; i++) {
		struct tvars t = *tv;

		t.paging = cand[i];
		miss = tmatch(trace, steps, n, &t);
		if (miss < 0) {
			tv->paging = cand[i];
			tv->paging_known = true;
			return -1;
		}
		if (miss > best)
			best = miss;
	}
	return best;
}

static void tassert_sequence(const char *trace, const struct tstep *steps,
			     int n, struct tvars *tv, const char *scenario)
{
	int miss = tmatch_paging(trace, steps, n, tv);

	if (miss >= 0) {
		const char *p = trace;
		int lines = 0;

		/* the paging events, for the log */
		while (p && *p && lines < 80) {
			const char *end = strchr(p, '\n');

			if (strstr(p, " qgpu_") && (!end || strstr(p, " qgpu_") < end) &&
			    (strstr(p, EV_UPDATE_PT) || strstr(p, EV_FLUSH_TLB) ||
			     strstr(p, EV_TRANSFER) || strstr(p, EV_FILL) ||
			     strstr(p, EV_SIGNAL))) {
				fprintf(stderr, "  %.*s\n",
					(int)(end ? end - p : (long)strlen(p)), p);
				lines++;
			}
			p = end ? end + 1 : NULL;
		}
	}
	igt_assert_f(miss < 0,
		     "%s: step %d (%s: %s %s) not found in order (process root %#llx, paging root %#llx)\n",
		     scenario, miss, miss >= 0 ? steps[miss].event : "",
		     miss >= 0 ? steps[miss].what : "",
		     miss >= 0 && steps[miss].cond[0] ? steps[miss].cond[0] : "",
		     (unsigned long long)tv->proc,
		     (unsigned long long)tv->paging);
}

/* MakeResident of a new allocation of a fresh process */
static const struct tstep make_resident_steps[] = {
	{ EV_UPDATE_PT, { "root=$PAGING" },
	  "paging process's entries mapping the process's page tables" },
	{ EV_FLUSH_TLB, { "root=$PAGING" }, "FlushTLB(paging process root)" },
	{ EV_UPDATE_PT, { "root=$PROC" }, "the process's page-table entries" },
	{ EV_FLUSH_TLB, { "root=$PROC" }, "FlushTLB(process root)" },
	{ EV_FILL, { "size=$SIZE", "pattern=0" },
	  "zero fill of the allocation in local memory" },
	{ EV_SIGNAL, { "fence=$FENCE", "signalled=1", "error=0" },
	  "the paging fence" },
};

/* Evict (MakeResident with QGPU_MAKE_RESIDENT_EVICT) of a resident one */
static const struct tstep evict_steps[] = {
	{ EV_UPDATE_PT, { "root=$PAGING" }, "scratch source/destination" },
	{ EV_FLUSH_TLB, { "root=$PAGING" }, "FlushTLB(paging process root)" },
	{ EV_TRANSFER, { "size=$SIZE" }, "TransferVirtual to system memory" },
	{ EV_UPDATE_PT, { "root=$PROC" }, "the process's entries, to system" },
	{ EV_FLUSH_TLB, { "root=$PROC" }, "FlushTLB(process root)" },
	{ EV_SIGNAL, { "fence=$FENCE", "signalled=1", "error=0" },
	  "the paging fence" },
};

/* ------------------------------------------------------------------------ */
/* Subtest bodies                                                            */

static void check_mmu_caps(void)
{
	struct drm_qgpu_mmu_info m;
	uint32_t size = 8, count = 0;

	igt_assert_eq(qgpu_query_mmu(dev.fd, &m), 0);
	igt_assert_eq(m.va_bits, QGPU_MMU_VA_BITS);
	igt_assert_eq(m.va_bits, 39);
	igt_assert_eq(m.levels, 3);
	igt_assert_eq(m.page_sizes, (1u << 0) | (1u << 4));	/* 4K | 64K */
	igt_assert_eq(m.pte_size, 8);
	igt_assert_eq(m.tlb_entries, 64);
	igt_assert_eq(m.pad, 0);
	igt_assert_f(m.va_start < m.va_end, "VA range %#llx-%#llx\n",
		     (unsigned long long)m.va_start,
		     (unsigned long long)m.va_end);
	igt_assert_lte_u64(m.va_end, 1ull << 39);
	igt_assert_eq_u64(m.va_start % SZ_64K, 0);
	igt_assert_eq_u64(m.va_end % SZ_64K, 0);
	/* the paging process's tables exist from the start */
	igt_assert_lt(0, m.page_tables);
	igt_assert_lte_u64(m.page_tables * QGPU_MMU_TABLE_SIZE,
			   m.page_table_bytes);
	/* the query's own rules */
	igt_assert_eq(qgpu_query(dev.fd, QGPU_QUERY_MMU, 0, &m, &size, &count),
		      -ENOSPC);
	igt_assert_eq(size, sizeof(m));
	size = sizeof(m);
	igt_assert_eq(qgpu_query(dev.fd, QGPU_QUERY_MMU, 1, &m, &size, NULL),
		      -EINVAL);
	igt_assert_lte(0x10002, dev.info.version);
}

static void check_reserve_lowest(void)
{
	int fd = file_open();
	struct drm_qgpu_vm_layout_entry *e;
	uint64_t a, b, c, d, x;
	unsigned int n;

	a = reserve(fd, SZ_64K);
	b = reserve(fd, 3 * SZ_64K);
	c = reserve(fd, SZ_1M);
	igt_assert_eq_u64(a, mmu.va_start);
	igt_assert_eq_u64(b, a + SZ_64K);
	igt_assert_eq_u64(c, b + 3 * SZ_64K);
	igt_assert_eq_u64(vm_info(fd).reserved_bytes,
			  SZ_64K + 3 * SZ_64K + SZ_1M);
	/* the lowest free range, where it fits */
	igt_assert_eq(qgpu_vm_free(fd, b, 3 * SZ_64K), 0);
	d = reserve(fd, 2 * SZ_64K);
	igt_assert_eq_u64(d, b);
	x = reserve(fd, 2 * SZ_64K);	/* does not fit the 64K hole left */
	igt_assert_eq_u64(x, c + SZ_1M);
	d = reserve(fd, SZ_64K);
	igt_assert_eq_u64(d, b + 2 * SZ_64K);
	igt_assert_eq(qgpu_query_vm_layout(fd, &e, &n), 0);
	igt_assert_eq(n, 5);
	for (unsigned int i = 0; i < n; i++) {
		igt_assert_eq(e[i].kind, QGPU_VM_LAYOUT_RESERVED);
		igt_assert_eq_u64(e[i].start % SZ_64K, 0);
		igt_assert_eq(e[i].flags | e[i].offset | e[i].segment |
			      e[i].pad, 0);
		if (i)
			igt_assert_lte_u64(e[i - 1].start + e[i - 1].size,
					   e[i].start);
	}
	free(e);
	file_close(fd);
}

static void check_reserve_fixed(void)
{
	int fd = file_open();
	uint64_t x = mmu.va_start + 16 * SZ_1M, top = mmu.va_end - SZ_64K;
	int ret;

	reserve_at(fd, x, 4 * SZ_64K);
	reserve_at(fd, top, SZ_64K);
	/* a non-fixed one still takes the lowest */
	igt_assert_eq_u64(reserve(fd, SZ_64K), mmu.va_start);
	/* overlaps, each way */
	igt_assert_eq(qgpu_vm_reserve(fd, x - SZ_64K, 2 * SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq(qgpu_vm_reserve(fd, x + SZ_64K, SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq(qgpu_vm_reserve(fd, x + 3 * SZ_64K, 2 * SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq(qgpu_vm_reserve(fd, x - SZ_64K, 6 * SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq(qgpu_vm_reserve(fd, x, 4 * SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq(qgpu_vm_reserve(fd, mmu.va_start, SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL), -EEXIST);
	igt_assert_eq_u64(vm_info(fd).reserved_bytes, 6 * SZ_64K);
	/* touching is not overlapping */
	reserve_at(fd, x - SZ_64K, SZ_64K);
	reserve_at(fd, x + 4 * SZ_64K, SZ_64K);
	ret = qgpu_vm_free(fd, x, 4 * SZ_64K);
	igt_assert_eq(ret, 0);
	reserve_at(fd, x + SZ_64K, SZ_64K);
	igt_assert_eq_u64(vm_info(fd).reserved_bytes, 5 * SZ_64K);
	file_close(fd);
}

static void check_reserve_einval(void)
{
	int fd = file_open();
	struct drm_qgpu_vm_reserve r;
	uint64_t x = mmu.va_start + 16 * SZ_1M;
	unsigned int n = 1;
	int ret;
	struct drm_qgpu_vm_layout_entry *e;
	const struct {
		uint64_t addr, size;
		uint32_t flags, pad;
		const char *what;
	} bad[] = {
		{ 0, 0, 0, 0, "size 0" },
		{ 0, SZ_4K, 0, 0, "size 4K" },
		{ 0, SZ_64K + SZ_4K, 0, 0, "size not a multiple of 64K" },
		{ x + SZ_4K, SZ_64K, QGPU_VM_RESERVE_FIXED, 0,
		  "fixed address 4K aligned only" },
		{ x + 1, SZ_64K, QGPU_VM_RESERVE_FIXED, 0, "fixed address odd" },
		{ x, SZ_64K, 0, 0, "address without FIXED" },
		{ 0, SZ_64K, 1u << 1, 0, "unknown flag" },
		{ 0, SZ_64K, 1u << 31, 0, "unknown flag 31" },
		{ x, SZ_64K, QGPU_VM_RESERVE_FIXED | 1u << 1, 0,
		  "FIXED and an unknown flag" },
		{ 0, SZ_64K, 0, 1, "pad" },
		{ mmu.va_end, SZ_64K, QGPU_VM_RESERVE_FIXED, 0, "at va_end" },
		{ mmu.va_end - SZ_64K, 2 * SZ_64K, QGPU_VM_RESERVE_FIXED, 0,
		  "across va_end" },
		{ 1ull << 39, SZ_64K, QGPU_VM_RESERVE_FIXED, 0,
		  "beyond the VA size" },
		{ ~(SZ_64K - 1), 2 * SZ_64K, QGPU_VM_RESERVE_FIXED, 0,
		  "wrapping" },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		r = (struct drm_qgpu_vm_reserve){
			.addr = bad[i].addr, .size = bad[i].size,
			.flags = bad[i].flags, .pad = bad[i].pad,
		};
		ret = igt_ioctl(fd, DRM_IOCTL_QGPU_VM_RESERVE, &r);
		igt_assert_f(ret == -EINVAL, "%s: %s, expected EINVAL\n",
			     bad[i].what, strerror(-ret));
	}
	if (mmu.va_start >= SZ_64K) {
		ret = qgpu_vm_reserve(fd, mmu.va_start - SZ_64K, SZ_64K,
				      QGPU_VM_RESERVE_FIXED, NULL);
		igt_assert_eq(ret, -EINVAL);
	}
	/* more than the whole range: no free range (or a bad size) */
	ret = qgpu_vm_reserve(fd, 0, mmu.va_end - mmu.va_start + SZ_64K, 0,
			      NULL);
	igt_assert_f(ret == -ENOSPC || ret == -EINVAL,
		     "reserving more than the address space: %s\n",
		     strerror(-ret));
	/* none of it reserved anything */
	igt_assert_eq_u64(vm_info(fd).reserved_bytes, 0);
	igt_assert_eq(qgpu_query_vm_layout(fd, &e, &n), 0);
	igt_assert_eq(n, 0);
	free(e);
	file_close(fd);
}

static void check_free_enoent(void)
{
	int fd = file_open();
	uint64_t x = reserve(fd, 4 * SZ_64K);

	igt_assert_eq(qgpu_vm_free(fd, x, 2 * SZ_64K), -ENOENT);
	igt_assert_eq(qgpu_vm_free(fd, x + SZ_64K, 3 * SZ_64K), -ENOENT);
	igt_assert_eq(qgpu_vm_free(fd, x + SZ_4K, 4 * SZ_64K - SZ_4K),
		      -ENOENT);
	igt_assert_eq(qgpu_vm_free(fd, x, 8 * SZ_64K), -ENOENT);
	igt_assert_eq(qgpu_vm_free(fd, x + SZ_1M, SZ_64K), -ENOENT);
	/* the range's own rules come first */
	igt_assert_eq(qgpu_vm_free(fd, x, 0), -EINVAL);
	igt_assert_eq(qgpu_vm_free(fd, x + 8, 4 * SZ_64K), -EINVAL);
	igt_assert_eq(qgpu_vm_free(fd, x, 4 * SZ_64K + 8), -EINVAL);
	igt_assert_eq(qgpu_vm_free(fd, 1ull << 39, SZ_4K), -EINVAL);
	igt_assert_eq(qgpu_vm_free(fd, ~(SZ_4K - 1), 2 * SZ_4K), -EINVAL);
	igt_assert_eq_u64(vm_info(fd).reserved_bytes, 4 * SZ_64K);
	igt_assert_eq(qgpu_vm_free(fd, x, 4 * SZ_64K), 0);
	igt_assert_eq(qgpu_vm_free(fd, x, 4 * SZ_64K), -ENOENT);
	igt_assert_eq_u64(vm_info(fd).reserved_bytes, 0);
	file_close(fd);
}

static void check_free_unmaps(struct vproc *p)
{
	const uint64_t size = 4 * SZ_4K;
	struct drm_qgpu_vm_layout_entry *e;
	uint32_t h = cpu_bo(p->fd, size), ctx2;
	struct drm_qgpu_vm_info vm0;
	struct qgpu_vcb *v = vcb_new();
	uint64_t x = reserve(p->fd, SZ_64K);
	unsigned int n, i;
	void *m;

	vm0 = vm_info(p->fd);
	cpu_fill(p->fd, h, 0, size, 77);
	vmap(p->fd, h, x, 0, size, 0);
	make_resident(p->fd, &h, 1);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, vm0.mapped_bytes + size);
	igt_assert_eq(vcsum(p, x, size), pattern_csum(77, 0, size / 4));
	igt_assert_eq(qgpu_vm_free(p->fd, x, SZ_64K), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, vm0.mapped_bytes);
	igt_assert_eq_u64(vm_info(p->fd).reserved_bytes, vm0.reserved_bytes -
			  SZ_64K);
	igt_assert_eq(qgpu_query_vm_layout(p->fd, &e, &n), 0);
	for (i = 0; i < n; i++)
		igt_assert_f(e[i].start + e[i].size <= x ||
			     e[i].start >= x + SZ_64K,
			     "layout still has %#llx+%#llx (kind %u)\n",
			     (unsigned long long)e[i].start,
			     (unsigned long long)e[i].size, e[i].kind);
	free(e);
	/* a later access faults, on a context of its own */
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &ctx2), 0);
	qgpu_vcb_checksum(v, x, size, p->out_va);
	vfault(p->fd, ctx2, v, QGPU_FAULT_PAGE_NOT_PRESENT, x);
	/* the allocation itself is untouched */
	m = cpu_view(p->fd, h, size);
	qt_check_pattern(m, size, 77, "allocation after VM_FREE");
	cpu_unview(p->fd, h, m, size);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, ctx2), 0);
	vcb_free(v);
	qt_close(p->fd, h);
}

/*
 * VM_UNMAP and VM_FREE of a range over more leaf tables than one paging
 * buffer rewrites (about 680; here 800, each with one 4 KiB mapping): the
 * rewrite spans several buffers, the unmap succeeds, an access to any of
 * the old addresses faults (the entries were rewritten, none left behind
 * for work queued later), and the address space stays usable.
 */
static void check_unmap_many_tables(struct vproc *p)
{
	const uint64_t n = 800, span = 2 * SZ_1M;
	const uint64_t probe[] = { 0, n / 2, n - 1 };
	uint32_t h = cpu_bo(p->fd, SZ_4K), ctx2;
	struct qgpu_vcb *v = vcb_new();
	struct drm_qgpu_vm_info vm0;
	uint64_t va, i;
	void *m;

	igt_require(QGPU_VM_MAX_PAGE_TABLES > n + 16);
	cpu_fill(p->fd, h, 0, SZ_4K, 91);
	vm0 = vm_info(p->fd);
	va = reserve(p->fd, n * span);
	for (i = 0; i < n; i++)
		vmap(p->fd, h, va + i * span, 0, SZ_4K, 0);
	make_resident(p->fd, &h, 1);
	igt_assert_eq(vcsum(p, va + (n - 1) * span, SZ_4K),
		      pattern_csum(91, 0, SZ_4K / 4));
	igt_assert_eq(qgpu_vm_unmap(p->fd, va, n * span), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, vm0.mapped_bytes);
	for (i = 0; i < ARRAY_SIZE(probe); i++) {
		igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &ctx2), 0);
		qgpu_vcb_reset(v);
		qgpu_vcb_checksum(v, va + probe[i] * span, SZ_4K, p->out_va);
		vfault(p->fd, ctx2, v, QGPU_FAULT_PAGE_NOT_PRESENT,
		       va + probe[i] * span);
		igt_assert_eq(qgpu_ctx_destroy(p->fd, ctx2), 0);
	}
	/* the address space still works; VM_FREE over it all too */
	for (i = 0; i < n; i++)
		vmap(p->fd, h, va + i * span, 0, SZ_4K, 0);
	igt_assert_eq(vcsum(p, va + (n / 2) * span, SZ_4K),
		      pattern_csum(91, 0, SZ_4K / 4));
	igt_assert_eq(qgpu_vm_free(p->fd, va, n * span), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, vm0.mapped_bytes);
	m = cpu_view(p->fd, h, SZ_4K);
	qt_check_pattern(m, SZ_4K, 91, "allocation after the unmaps");
	cpu_unview(p->fd, h, m, SZ_4K);
	vcb_free(v);
	qt_close(p->fd, h);
}

/*
 * A move rewrites the entries of every mapping of what it moves. An
 * allocation mapped 400 times takes more page-table commands than one
 * paging job holds: the move must still happen (before, it failed with
 * ENOSPC, and so did every eviction that picked the allocation, for every
 * process), and after each move every mapping shows the content where
 * it is now.
 */
static void check_move_many_mappings(struct vproc *p)
{
	const uint64_t n = 400, step = SZ_64K;
	const uint64_t probe[] = { 0, n / 2, n - 1 };
	uint32_t h = cpu_bo(p->fd, SZ_64K);
	struct qgpu_vcb *v = vcb_new();
	struct drm_qgpu_stats st0, st1;
	uint64_t va, i;
	void *m;

	cpu_fill(p->fd, h, 0, SZ_64K, 93);
	evict(p->fd, &h, 1);
	va = reserve(p->fd, n * step);
	for (i = 0; i < n; i++)
		vmap(p->fd, h, va + i * step, 0, SZ_64K, 0);
	qt_stats(p->fd, &st0);
	make_resident(p->fd, &h, 1);
	qt_stats(p->fd, &st1);
	igt_assert_f(in_vram(segment_of(p->fd, h)),
		     "MakeResident left the allocation in segment %u\n",
		     segment_of(p->fd, h));
	/* the rewrite did not fit one job: more than one was queued */
	igt_assert_lte_u64(st0.paging_buffers + 2, st1.paging_buffers);
	for (i = 0; i < ARRAY_SIZE(probe); i++)
		igt_assert_f(vcsum(p, va + probe[i] * step, SZ_64K) ==
			     pattern_csum(93, 0, SZ_64K / 4),
			     "mapping %llu after the move into VRAM\n",
			     (unsigned long long)probe[i]);
	/* written through the last mapping, out to system memory */
	qgpu_vcb_fill(v, va + (n - 1) * step, SZ_4K, 0x5a5a0001);
	vrun(p->fd, p->ctx, v);
	evict(p->fd, &h, 1);
	igt_assert_eq(segment_of(p->fd, h), QGPU_SEG_SYSTEM);
	for (i = 0; i < ARRAY_SIZE(probe); i++) {
		igt_assert_f(vcsum(p, va + probe[i] * step, SZ_4K) ==
			     qt_csum_const(0x5a5a0001, SZ_4K / 4),
			     "mapping %llu after the move out of VRAM\n",
			     (unsigned long long)probe[i]);
		igt_assert_eq(vcsum(p, va + probe[i] * step + SZ_4K,
				    SZ_64K - SZ_4K),
			      pattern_csum(93, SZ_4K / 4,
					   (SZ_64K - SZ_4K) / 4));
	}
	igt_assert_eq(qgpu_vm_free(p->fd, va, n * step), 0);
	m = cpu_view(p->fd, h, SZ_64K);
	/* and the CPU sees what the device wrote before the moves */
	igt_assert_eq(qgpu_csum(m, SZ_4K / 4),
		      qt_csum_const(0x5a5a0001, SZ_4K / 4));
	igt_assert_eq(qgpu_csum((uint32_t *)m + SZ_4K / 4,
				(SZ_64K - SZ_4K) / 4),
		      pattern_csum(93, SZ_4K / 4, (SZ_64K - SZ_4K) / 4));
	cpu_unview(p->fd, h, m, SZ_64K);
	vcb_free(v);
	qt_close(p->fd, h);
}

/*
 * VM_UNMAP behind queued work: a buffer that waits (VWAIT on a value the
 * CPU writes) and then fills A is queued; A is unmapped while it waits;
 * released, the fill still finds A (no fault, A filled), while a buffer
 * queued after the unmap faults. A mapped twice, destroyed: mapped_bytes
 * drops by both mappings.
 */
static void check_unmap_behind_work(struct vproc *p)
{
	const uint64_t size = SZ_64K;
	uint32_t a = cpu_bo(p->fd, size), w = cpu_bo(p->fd, SZ_4K), ctx2;
	struct drm_qgpu_vm_info vm0;
	struct qgpu_vcb *v = vcb_new();
	uint64_t x = reserve(p->fd, 4 * SZ_64K);
	struct drm_qgpu_sync_entry late = { 0 };
	struct drm_qgpu_context_status cs;
	volatile uint64_t *wm;
	uint32_t *m, i;
	uint32_t two[2] = { a, w };

	vm0 = vm_info(p->fd);
	vmap(p->fd, a, x, 0, size, 0);
	vmap(p->fd, w, x + SZ_64K, 0, SZ_4K, 0);
	make_resident(p->fd, two, 2);
	wm = cpu_view(p->fd, w, SZ_4K);
	wm[0] = 0;
	qgpu_vcb_wait(v, x + SZ_64K, 1);
	qgpu_vcb_fill(v, x, size, 0xa11ce);
	igt_assert_eq(v->error, 0);
	igt_assert_eq(qgpu_vcb_submit(p->fd, p->ctx, v, NULL, 0, NULL, 0), 0);
	igt_assert_eq(qgpu_vm_unmap(p->fd, x, size), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes,
			  vm0.mapped_bytes + SZ_4K);
	/* queued after the unmap: faults, on a context of its own */
	igt_expect_dmesg("device fault");
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &ctx2), 0);
	igt_assert_eq(qgpu_syncobj_create(p->fd, &late.handle), 0);
	qgpu_vcb_reset(v);
	qgpu_vcb_fill(v, x, SZ_4K, 1);
	igt_assert_eq(qgpu_vcb_submit(p->fd, ctx2, v, NULL, 0, &late, 1), 0);
	usleep(200000);
	__atomic_store_n(&wm[0], 1, __ATOMIC_SEQ_CST);
	qgpu_vcb_reset(v);
	qgpu_vcb_nop(v, 1);
	vrun(p->fd, p->ctx, v);		/* the waiting fill did not fault */
	m = cpu_view(p->fd, a, size);
	for (i = 0; i < size / 4; i++)
		igt_assert_f(m[i] == 0xa11ce, "word %u: %#x\n", i, m[i]);
	cpu_unview(p->fd, a, m, size);
	igt_assert_eq(qgpu_syncobj_wait(p->fd, late.handle, 0, TIMEOUT), 0);
	igt_assert_eq(qgpu_query_context(p->fd, ctx2, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_LOST_FAULT &&
		     cs.fault_reason == QGPU_FAULT_PAGE_NOT_PRESENT &&
		     cs.fault_addr == x,
		     "a buffer queued after the unmap: state %s, fault %s at %#llx\n",
		     qgpu_ctx_state_name(cs.state),
		     qgpu_fault_name(cs.fault_reason),
		     (unsigned long long)cs.fault_addr);
	qgpu_syncobj_destroy(p->fd, late.handle);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, ctx2), 0);
	cpu_unview(p->fd, w, (void *)wm, SZ_4K);
	/* twice mapped, then destroyed: both mappings leave mapped_bytes */
	vmap(p->fd, a, x, 0, size, 0);
	vmap(p->fd, a, x + 2 * SZ_64K, 0, SZ_4K, 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes,
			  vm0.mapped_bytes + 2 * SZ_4K + size);
	igt_assert_eq(qgpu_bo_destroy_flags(p->fd, a,
					    QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE),
		      0);
	qt_untrack(p->fd, a, NULL);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes,
			  vm0.mapped_bytes + SZ_4K);
	igt_assert_eq(qgpu_vm_free(p->fd, x, 4 * SZ_64K), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, vm0.mapped_bytes);
	vcb_free(v);
	qt_close(p->fd, w);
}

static void check_map_einval(void)
{
	int fd = file_open();
	const uint64_t asz = 4 * SZ_64K;
	uint32_t h = cpu_bo(fd, asz);
	uint64_t x = reserve(fd, SZ_1M), y;
	struct drm_qgpu_vm_map m;
	int ret;
	const struct {
		uint64_t addr, off, size;
		uint32_t flags;
		const char *what;
	} bad[] = {
		{ x + 1, 0, SZ_4K, 0, "address odd" },
		{ x + 2048, 0, SZ_4K, 0, "address 2K" },
		{ x, 2048, SZ_4K, 0, "offset 2K" },
		{ x, 0, 2048, 0, "size 2K" },
		{ x, 0, SZ_4K + 4, 0, "size 4K + 4" },
		{ x, 0, 0, 0, "size 0" },
		{ x, 0, asz + SZ_4K, 0, "size beyond the allocation" },
		{ x, 2 * SZ_64K, 3 * SZ_64K, 0, "offset + size beyond" },
		{ x, asz, SZ_4K, 0, "offset at the end" },
		{ x, ~(SZ_4K - 1), 2 * SZ_4K, 0, "offset + size wraps" },
		{ x + SZ_1M - SZ_4K, 0, 2 * SZ_4K, 0, "past the reservation" },
		{ x - SZ_4K, 0, SZ_4K, 0, "below the reservation" },
		{ x + SZ_1M, 0, SZ_4K, 0, "not reserved" },
		{ x, 0, SZ_4K, 1u << 1, "unknown flag" },
		{ x, 0, SZ_4K, 1u << 31, "unknown flag 31" },
		{ ~(SZ_4K - 1), 0, 2 * SZ_4K, 0, "address wraps" },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		m = (struct drm_qgpu_vm_map){
			.handle = h, .flags = bad[i].flags,
			.addr = bad[i].addr, .offset = bad[i].off,
			.size = bad[i].size,
		};
		ret = igt_ioctl(fd, DRM_IOCTL_QGPU_VM_MAP, &m);
		igt_assert_f(ret == -EINVAL, "%s: %s, expected EINVAL\n",
			     bad[i].what, strerror(-ret));
	}
	/* one reservation each side of x + 1M: still not one reservation */
	reserve_at(fd, x + SZ_1M, SZ_1M);
	igt_assert_eq(qgpu_vm_map(fd, h, x + SZ_1M - SZ_4K, 0, 2 * SZ_4K, 0),
		      -EINVAL);
	/* handles: none, never given out, closed */
	igt_assert_eq(qgpu_vm_map(fd, 0, x, 0, SZ_4K, 0), -ENOENT);
	igt_assert_eq(qgpu_vm_map(fd, 0xdead, x, 0, SZ_4K, 0), -ENOENT);
	y = qt_bo(fd, SZ_4K, APT, 0, 0);
	qt_close(fd, (uint32_t)y);
	igt_assert_eq(qgpu_vm_map(fd, (uint32_t)y, x, 0, SZ_4K, 0), -ENOENT);
	/* nothing got mapped */
	igt_assert_eq_u64(vm_info(fd).mapped_bytes, 0);
	qt_close(fd, h);
	file_close(fd);
}

static void check_map_eexist(void)
{
	int fd = file_open();
	uint32_t h = cpu_bo(fd, 4 * SZ_64K), h2 = cpu_bo(fd, 2 * SZ_64K);
	uint64_t x = reserve(fd, SZ_1M);

	vmap(fd, h, x + SZ_64K, 0, 2 * SZ_64K, 0);
	igt_assert_eq(qgpu_vm_map(fd, h, x + SZ_64K, 0, 2 * SZ_64K, 0),
		      -EEXIST);
	igt_assert_eq(qgpu_vm_map(fd, h2, x, 0, SZ_64K + SZ_4K, 0), -EEXIST);
	igt_assert_eq(qgpu_vm_map(fd, h2, x + 2 * SZ_64K, 0, SZ_64K, 0),
		      -EEXIST);
	igt_assert_eq(qgpu_vm_map(fd, h2, x + 3 * SZ_64K - SZ_4K, 0, SZ_64K,
				  0), -EEXIST);
	igt_assert_eq(qgpu_vm_map(fd, h, x, 0, 4 * SZ_64K, 0), -EEXIST);
	/* read-only does not make an overlap any better */
	igt_assert_eq(qgpu_vm_map(fd, h2, x + SZ_64K, 0, SZ_4K,
				  QGPU_VM_MAP_READ_ONLY), -EEXIST);
	igt_assert_eq_u64(vm_info(fd).mapped_bytes, 2 * SZ_64K);
	/* right next to it on both sides is fine; the same allocation twice too */
	vmap(fd, h2, x, 0, SZ_64K, 0);
	vmap(fd, h, x + 3 * SZ_64K, 0, SZ_64K, QGPU_VM_MAP_READ_ONLY);
	igt_assert_eq_u64(vm_info(fd).mapped_bytes, 4 * SZ_64K);
	qt_close(fd, h);
	qt_close(fd, h2);
	file_close(fd);
}

static void check_unmap_partial(struct vproc *p)
{
	const uint64_t size = SZ_64K;
	struct drm_qgpu_vm_layout_entry *e;
	uint32_t h = cpu_bo(p->fd, size), ctx2;
	struct qgpu_vcb *v = vcb_new();
	uint64_t x = reserve(p->fd, 2 * SZ_64K), mapped0;
	unsigned int n, i, found = 0;

	cpu_fill(p->fd, h, 0, size, 501);
	vmap(p->fd, h, x, 0, size, 0);
	make_resident(p->fd, &h, 1);
	mapped0 = vm_info(p->fd).mapped_bytes;
	/* pages 4..7 go */
	igt_assert_eq(qgpu_vm_unmap(p->fd, x + 4 * SZ_4K, 4 * SZ_4K), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, mapped0 - 4 * SZ_4K);
	/* the rest is still there, with the same bytes */
	igt_assert_eq(vcsum(p, x, 4 * SZ_4K), pattern_csum(501, 0, 4096));
	igt_assert_eq(vcsum(p, x + 8 * SZ_4K, 8 * SZ_4K),
		      pattern_csum(501, 8192, 8192));
	igt_assert_eq(qgpu_query_vm_layout(p->fd, &e, &n), 0);
	for (i = 0; i < n; i++) {
		if (e[i].kind != QGPU_VM_LAYOUT_MAPPING ||
		    e[i].start < x || e[i].start >= x + 2 * SZ_64K)
			continue;
		if (e[i].start == x) {
			igt_assert_eq_u64(e[i].size, 4 * SZ_4K);
			igt_assert_eq_u64(e[i].offset, 0);
		} else {
			igt_assert_eq_u64(e[i].start, x + 8 * SZ_4K);
			igt_assert_eq_u64(e[i].size, 8 * SZ_4K);
			igt_assert_eq_u64(e[i].offset, 8 * SZ_4K);
		}
		found++;
	}
	free(e);
	igt_assert_eq(found, 2);
	/* nothing mapped there: not an error; bad ranges are */
	igt_assert_eq(qgpu_vm_unmap(p->fd, x + 4 * SZ_4K, 4 * SZ_4K), 0);
	igt_assert_eq(qgpu_vm_unmap(p->fd, x + SZ_64K, SZ_64K), 0);
	igt_assert_eq(qgpu_vm_unmap(p->fd, x + 8, SZ_4K), -EINVAL);
	igt_assert_eq(qgpu_vm_unmap(p->fd, x, 0), -EINVAL);
	igt_assert_eq(qgpu_vm_unmap(p->fd, x, SZ_4K + 8), -EINVAL);
	igt_assert_eq(qgpu_vm_unmap(p->fd, (1ull << 39) - SZ_4K, 2 * SZ_4K),
		      -EINVAL);
	igt_assert_eq(qgpu_vm_unmap(p->fd, ~(SZ_4K - 1), 2 * SZ_4K), -EINVAL);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, mapped0 - 4 * SZ_4K);
	/* the hole faults */
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &ctx2), 0);
	qgpu_vcb_checksum(v, x + 4 * SZ_4K, SZ_4K, p->out_va);
	vfault(p->fd, ctx2, v, QGPU_FAULT_PAGE_NOT_PRESENT, x + 4 * SZ_4K);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, ctx2), 0);
	/* one range over both pieces and the hole */
	igt_assert_eq(qgpu_vm_unmap(p->fd, x, 2 * SZ_64K), 0);
	igt_assert_eq_u64(vm_info(p->fd).mapped_bytes, mapped0 - size);
	igt_assert_eq(qgpu_vm_free(p->fd, x, 2 * SZ_64K), 0);
	vcb_free(v);
	qt_close(p->fd, h);
}

static void check_layout(void)
{
	int fd = file_open();
	uint32_t h = cpu_bo(fd, 2 * SZ_64K), h2 = cpu_bo(fd, 2 * SZ_64K);
	struct drm_qgpu_vm_layout_entry e[8], *pe;
	uint64_t r1 = reserve(fd, 4 * SZ_64K), r2 = r1 + SZ_1M;
	uint32_t size = 0, count = 0, seg;
	unsigned int i, n;

	reserve_at(fd, r2, 2 * SZ_64K);
	vmap(fd, h, r1 + SZ_64K, SZ_64K, SZ_64K, QGPU_VM_MAP_READ_ONLY);
	vmap(fd, h2, r2, 0, 2 * SZ_64K, 0);
	make_resident(fd, &h2, 1);
	seg = segment_of(fd, h2);
	igt_assert(in_vram(seg));
	/* two calls: the size first */
	igt_assert_eq(qgpu_query(fd, QGPU_QUERY_VM_LAYOUT, 0, NULL, &size,
				 &count), 0);
	igt_assert_eq(count, 4);
	igt_assert_eq(size, 4 * sizeof(e[0]));
	size = 3 * sizeof(e[0]);
	igt_assert_eq(qgpu_query(fd, QGPU_QUERY_VM_LAYOUT, 0, e, &size, NULL),
		      -ENOSPC);
	igt_assert_eq(size, 4 * sizeof(e[0]));
	size = 1;
	igt_assert_eq(qgpu_query(fd, QGPU_QUERY_VM_LAYOUT, 1, e, &size, NULL),
		      -EINVAL);
	igt_assert_eq(qgpu_query_vm_layout(fd, &pe, &n), 0);
	igt_assert_eq(n, 4);
	for (i = 0; i < n; i++) {
		igt_assert_eq(pe[i].pad, 0);
		if (i)
			igt_assert_lte_u64(pe[i - 1].start, pe[i].start);
	}
	/* reservations: r1, r2 in order; mappings inside them */
	for (i = 0; i < n; i++) {
		if (pe[i].kind == QGPU_VM_LAYOUT_RESERVED) {
			igt_assert(pe[i].start == r1 || pe[i].start == r2);
			igt_assert_eq_u64(pe[i].size, pe[i].start == r1 ?
					  4 * SZ_64K : 2 * SZ_64K);
			igt_assert_eq(pe[i].flags | pe[i].offset |
				      pe[i].segment, 0);
		} else {
			igt_assert_eq(pe[i].kind, QGPU_VM_LAYOUT_MAPPING);
			if (pe[i].start == r1 + SZ_64K) {
				igt_assert_eq_u64(pe[i].size, SZ_64K);
				igt_assert_eq_u64(pe[i].offset, SZ_64K);
				igt_assert_eq(pe[i].flags,
					      QGPU_VM_MAP_READ_ONLY);
				/* never made resident */
				igt_assert_eq(pe[i].segment, QGPU_SEG_SYSTEM);
			} else {
				igt_assert_eq_u64(pe[i].start, r2);
				igt_assert_eq_u64(pe[i].size, 2 * SZ_64K);
				igt_assert_eq(pe[i].flags, 0);
				igt_assert_eq(pe[i].segment, seg);
			}
		}
	}
	free(pe);
	/* the segment follows the allocation */
	evict(fd, &h2, 1);
	igt_assert_eq(qgpu_query_vm_layout(fd, &pe, &n), 0);
	for (i = 0; i < n; i++)
		if (pe[i].kind == QGPU_VM_LAYOUT_MAPPING && pe[i].start == r2)
			igt_assert_eq(pe[i].segment, QGPU_SEG_SYSTEM);
	free(pe);
	qt_close(fd, h);
	qt_close(fd, h2);
	file_close(fd);
}

static void check_make_resident_einval(void)
{
	int fd = file_open();
	uint32_t h = cpu_bo(fd, SZ_64K), *many;
	struct drm_qgpu_make_resident mr;
	uint32_t two[2] = { h, h }, bogus[2] = { h, 0xdead };
	uint64_t x = reserve(fd, SZ_64K);
	int ret;

	vmap(fd, h, x, 0, SZ_64K, 0);
	mr = (struct drm_qgpu_make_resident){ .handles = (uintptr_t)&h };
	igt_assert_eq(igt_ioctl(fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &mr),
		      -EINVAL);				/* count 0 */
	many = calloc(QGPU_MAX_RESIDENT + 1, sizeof(*many));
	igt_assert(many);
	for (unsigned int i = 0; i <= QGPU_MAX_RESIDENT; i++)
		many[i] = h;
	mr.handles = (uintptr_t)many;
	mr.count = QGPU_MAX_RESIDENT + 1;
	igt_assert_eq(igt_ioctl(fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &mr),
		      -EINVAL);
	free(many);
	igt_assert_eq(qgpu_make_resident(fd, two, 2, NULL), -EINVAL);
	igt_assert_eq(qgpu_evict(fd, two, 2, NULL), -EINVAL);
	mr = (struct drm_qgpu_make_resident){
		.handles = (uintptr_t)&h, .count = 1, .flags = 1u << 1,
	};
	igt_assert_eq(igt_ioctl(fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &mr),
		      -EINVAL);
	mr.flags = 1u << 31;
	igt_assert_eq(igt_ioctl(fd, DRM_IOCTL_QGPU_MAKE_RESIDENT, &mr),
		      -EINVAL);
	igt_assert_eq(qgpu_make_resident(fd, bogus, 2, NULL), -ENOENT);
	igt_assert_eq(qgpu_make_resident(fd, &bogus[1], 1, NULL), -ENOENT);
	ret = qgpu_make_resident(fd, NULL, 1, NULL);
	igt_assert_eq(ret, -EFAULT);
	/* none of them moved anything or took a paging fence */
	igt_assert_eq(segment_of(fd, h), QGPU_SEG_SYSTEM);
	igt_assert_eq_u64(vm_info(fd).paging_fence, 0);
	qt_close(fd, h);
	file_close(fd);
}

static void check_make_resident_ebusy(void)
{
	int fd = file_open();
	/* no CPU access: while locked it may not go to VRAM (Lock2) */
	uint32_t h = qt_bo(fd, SZ_64K, vram_mask, 0, 0);
	uint64_t off, fence = 0, x = reserve(fd, SZ_64K);
	int ret;

	vmap(fd, h, x, 0, SZ_64K, 0);
	igt_assert_eq(qgpu_bo_lock(fd, h, &off), 0);
	ret = qgpu_make_resident(fd, &h, 1, &fence);
	if (!ret)
		qgpu_paging_fence_wait(fd, fence, TIMEOUT);
	igt_assert_f(ret == -EBUSY,
		     "MakeResident of a locked allocation without CPU access: %d, expected EBUSY (then in segment %u)\n",
		     ret, segment_of(fd, h));
	igt_assert_eq(segment_of(fd, h), QGPU_SEG_SYSTEM);
	igt_assert_eq(qgpu_bo_unlock(fd, h), 0);
	make_resident(fd, &h, 1);
	igt_assert(in_vram(segment_of(fd, h)));
	qt_close(fd, h);
	file_close(fd);
}

/* A file's address space and its paging-fence syncobj are there from open */
static void check_vm_info_fresh(void)
{
	int fd = file_open();
	struct drm_qgpu_vm_info vm = vm_info(fd);
	uint32_t sync = vm.paging_fence_syncobj;
	uint64_t point = 1;

	igt_assert_f(sync != 0,
		     "QGPU_QUERY_VM_INFO of a new file: no paging-fence syncobj\n");
	igt_assert_eq(drmSyncobjQuery(fd, &sync, &point, 1), 0);
	igt_assert_eq_u64(point, 0);
	igt_assert_eq_u64(vm.paging_fence, 0);
	igt_assert_eq_u64(vm.reserved_bytes, 0);
	igt_assert_eq_u64(vm.mapped_bytes, 0);
	/* the same handle once the address space is in use */
	reserve(fd, SZ_64K);
	igt_assert_eq(vm_info(fd).paging_fence_syncobj, sync);
	file_close(fd);
}

static void check_paging_fence(void)
{
	int fd = file_open();
	uint32_t h[2] = { cpu_bo(fd, SZ_64K), cpu_bo(fd, SZ_64K) };
	uint64_t x = reserve(fd, 2 * SZ_64K), f[5], point = 0;
	struct drm_qgpu_vm_info vm = vm_info(fd);
	uint32_t sync = vm.paging_fence_syncobj;
	int i;

	igt_assert_neq(sync, 0);
	igt_assert_eq_u64(vm.paging_fence, 0);
	igt_assert_eq(drmSyncobjQuery(fd, &sync, &point, 1), 0);
	igt_assert_eq_u64(point, 0);
	vmap(fd, h[0], x, 0, SZ_64K, 0);
	vmap(fd, h[1], x + SZ_64K, 0, SZ_64K, 0);
	igt_assert_eq(qgpu_make_resident(fd, &h[0], 1, &f[0]), 0);
	igt_assert_eq(qgpu_make_resident(fd, &h[1], 1, &f[1]), 0);
	igt_assert_eq(qgpu_evict(fd, &h[0], 1, &f[2]), 0);
	igt_assert_eq(qgpu_make_resident(fd, h, 2, &f[3]), 0);
	igt_assert_eq(qgpu_evict(fd, h, 2, &f[4]), 0);
	igt_assert_lt(0, f[0]);
	for (i = 1; i < 5; i++)
		igt_assert_f(f[i] > f[i - 1],
			     "paging fence %d: %llu after %llu\n", i,
			     (unsigned long long)f[i],
			     (unsigned long long)f[i - 1]);
	igt_assert_eq_u64(vm_info(fd).paging_fence, f[4]);
	/* the last point signals, and every earlier one with it */
	igt_assert_eq(qgpu_syncobj_wait(fd, sync, f[4], TIMEOUT), 0);
	for (i = 0; i < 4; i++)
		igt_assert_eq(qgpu_syncobj_wait(fd, sync, f[i], 0), 0);
	igt_assert_eq(drmSyncobjQuery(fd, &sync, &point, 1), 0);
	igt_assert_lte_u64(f[4], point);
	/* a point nobody handed out does not signal */
	igt_assert_eq(qgpu_syncobj_wait(fd, sync, f[4] + 1, SEC_NS / 10),
		      -ETIME);
	igt_assert_eq(segment_of(fd, h[0]), QGPU_SEG_SYSTEM);
	igt_assert_eq(segment_of(fd, h[1]), QGPU_SEG_SYSTEM);
	/* another file's timeline is its own */
	{
		int g = file_open();

		igt_assert_eq_u64(vm_info(g).paging_fence, 0);
		file_close(g);
	}
	qt_close(fd, h[0]);
	qt_close(fd, h[1]);
	file_close(fd);
}

static void check_zero_fill(struct vproc *p)
{
	const uint64_t size = SZ_1M;
	uint32_t h = cpu_bo(p->fd, size);
	uint64_t x = reserve(p->fd, size), i;
	struct qgpu_vcb *v = vcb_new();
	volatile uint32_t *m;

	vmap(p->fd, h, x, 0, size, 0);
	igt_assert_eq(segment_of(p->fd, h), QGPU_SEG_SYSTEM);
	make_resident(p->fd, &h, 1);
	igt_assert_f(in_vram(segment_of(p->fd, h)),
		     "after MakeResident the allocation is in segment %u\n",
		     segment_of(p->fd, h));
	igt_assert_eq(vcsum(p, x, size), qt_csum_const(0, size / 4));
	m = cpu_view(p->fd, h, size);
	for (i = 0; i < size / 4; i++)
		igt_assert_f(m[i] == 0, "word %llu is %#x in a new allocation\n",
			     (unsigned long long)i, m[i]);
	/* a GPU write stays through Evict: system entries then */
	qgpu_vcb_fill(v, x, size, 0xc0ffee00);
	vrun(p->fd, p->ctx, v);
	evict(p->fd, &h, 1);
	igt_assert_eq(segment_of(p->fd, h), QGPU_SEG_SYSTEM);
	igt_assert_eq(vcsum(p, x, size), qt_csum_const(0xc0ffee00, size / 4));
	for (i = 0; i < size / 4; i++)
		igt_assert_eq(m[i], 0xc0ffee00);
	cpu_unview(p->fd, h, (void *)m, size);
	igt_assert_eq(qgpu_vm_free(p->fd, x, size), 0);
	vcb_free(v);
	qt_close(p->fd, h);
}

/* ------------------------------------------------------------------------ */
/* Compute                                                                   */

#define CSZ	(256 * 1024)

/*
 * Inputs A, B (random, written through the CPU) and outputs C = A + B,
 * D = A ^ B, E = the upper half of A then the lower half of B, F =
 * fill(pattern); checksums of each. Host computes the same.
 */
struct compute {
	uint32_t a[CSZ / 4], b[CSZ / 4];
	uint32_t c[CSZ / 4], d[CSZ / 4], e[CSZ / 4], f[CSZ / 4];
	uint32_t csum[4];
};

#define FILL_PAT	0x600dcafe

static void compute_host(struct compute *w, uint32_t seed)
{
	uint32_t i;

	srandom(seed);
	for (i = 0; i < CSZ / 4; i++) {
		w->a[i] = (uint32_t)random() ^ (uint32_t)random() << 16;
		w->b[i] = (uint32_t)random() ^ (uint32_t)random() << 16;
	}
	for (i = 0; i < CSZ / 4; i++) {
		w->c[i] = w->a[i] + w->b[i];
		w->d[i] = w->a[i] ^ w->b[i];
		w->e[i] = i < CSZ / 8 ? w->a[CSZ / 8 + i] : w->b[i - CSZ / 8];
		w->f[i] = FILL_PAT;
	}
	w->csum[0] = qgpu_csum(w->c, CSZ / 4);
	w->csum[1] = qgpu_csum(w->d, CSZ / 4);
	w->csum[2] = qgpu_csum(w->e, CSZ / 4);
	w->csum[3] = qgpu_csum(w->f, CSZ / 4);
}

static void put(int fd, uint32_t h, const void *src, uint64_t size)
{
	void *m = cpu_view(fd, h, size);

	memcpy(m, src, size);
	cpu_unview(fd, h, m, size);
}

static void expect_bytes(int fd, uint32_t h, const uint32_t *want,
			 uint64_t size, const char *what)
{
	const volatile uint32_t *m = cpu_view(fd, h, size);
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		igt_assert_f(m[i] == want[i], "%s: word %llu is %#x, expected %#x\n",
			     what, (unsigned long long)i, m[i], want[i]);
	cpu_unview(fd, h, (void *)m, size);
}

/* The workload in the virtual model: h[0..5] = A..F; returns checksums */
static void compute_virtual(struct vproc *p, const struct compute *w,
			    uint32_t h[6], uint32_t csum[4])
{
	struct qgpu_vcb *v = vcb_new();
	uint64_t x = reserve(p->fd, 6 * CSZ), va[6];
	volatile uint64_t *q = (volatile uint64_t *)(p->out + 16);
	int i;

	for (i = 0; i < 6; i++) {
		h[i] = cpu_bo(p->fd, CSZ);
		va[i] = x + i * CSZ;
		vmap(p->fd, h[i], va[i], 0, CSZ, i < 2 ?
		     QGPU_VM_MAP_READ_ONLY : 0);
	}
	put(p->fd, h[0], w->a, CSZ);
	put(p->fd, h[1], w->b, CSZ);
	make_resident(p->fd, h, 6);
	memset((void *)p->out, 0, 256);
	qgpu_vcb_add(v, va[2], va[0], va[1], CSZ / 4);
	qgpu_vcb_xor(v, va[3], va[0], va[1], CSZ / 4);
	qgpu_vcb_copy(v, va[4], va[0] + CSZ / 2, CSZ / 2);
	qgpu_vcb_copy(v, va[4] + CSZ / 2, va[1], CSZ / 2);
	qgpu_vcb_fill(v, va[5], CSZ, FILL_PAT);
	for (i = 0; i < 4; i++)
		qgpu_vcb_checksum(v, va[2 + i], CSZ, p->out_va + 4 * i);
	qgpu_vcb_fence(v, p->out_va + 64, 0x1234567887654321ull);
	qgpu_vcb_timestamp(v, p->out_va + 72);
	vrun(p->fd, p->ctx, v);
	for (i = 0; i < 4; i++)
		csum[i] = p->out[i];
	igt_assert_eq_u64(q[0], 0x1234567887654321ull);
	igt_assert_neq_u64(q[1], 0);
	vcb_free(v);
	igt_assert_eq(qgpu_vm_free(p->fd, x, 6 * CSZ), 0);
}

/* The same in the physical model (slots, allocation and patch lists) */
static void compute_physical(int fd, const struct compute *w, uint32_t h[6],
			     uint32_t csum[4])
{
	struct qgpu_cb *cb = qt_cb(&dev);
	uint32_t ctx = qt_ctx(fd), *r, res = qt_result_buf(fd, SZ_4K, &r);
	int i;

	for (i = 0; i < 6; i++) {
		h[i] = cpu_bo(fd, CSZ);
		qgpu_cb_bind(cb, i, h[i], 0, CSZ);
	}
	put(fd, h[0], w->a, CSZ);
	put(fd, h[1], w->b, CSZ);
	qgpu_cb_bind(cb, 6, res, 0, SZ_4K);
	qgpu_cb_add(cb, 2, 0, 0, 0, 1, 0, CSZ / 4);
	qgpu_cb_xor(cb, 3, 0, 0, 0, 1, 0, CSZ / 4);
	qgpu_cb_copy(cb, 4, 0, 0, CSZ / 2, CSZ / 2);
	qgpu_cb_copy(cb, 4, CSZ / 2, 1, 0, CSZ / 2);
	qgpu_cb_fill(cb, 5, 0, CSZ, FILL_PAT);
	for (i = 0; i < 4; i++)
		qgpu_cb_checksum(cb, 2 + i, 0, CSZ, 6, 4 * i);
	qt_run(fd, ctx, cb, 60);
	for (i = 0; i < 4; i++)
		csum[i] = r[i];
	qt_cb_free(cb);
	qt_unmap(fd, res, r, SZ_4K);
	qt_close(fd, res);
	igt_assert_eq(qgpu_ctx_destroy(fd, ctx), 0);
}

static void check_compute(struct vproc *p, bool physical_too)
{
	struct compute *w = calloc(1, sizeof(*w));
	const uint32_t *want[4];
	uint32_t hv[6], hp[6], cv[4], cp[4];
	int i;

	igt_assert(w);
	compute_host(w, 0x5eed);
	want[0] = w->c;
	want[1] = w->d;
	want[2] = w->e;
	want[3] = w->f;
	compute_virtual(p, w, hv, cv);
	for (i = 0; i < 4; i++) {
		igt_assert_f(cv[i] == w->csum[i],
			     "virtual checksum %d: %#x, host %#x\n", i, cv[i],
			     w->csum[i]);
		expect_bytes(p->fd, hv[2 + i], want[i], CSZ, "virtual result");
	}
	/* inputs read through read-only mappings are unchanged */
	expect_bytes(p->fd, hv[0], w->a, CSZ, "input A");
	if (physical_too) {
		compute_physical(p->fd, w, hp, cp);
		for (i = 0; i < 4; i++) {
			igt_assert_eq(cp[i], cv[i]);
			expect_bytes(p->fd, hp[2 + i], want[i], CSZ,
				     "physical result");
		}
		for (i = 0; i < 6; i++)
			qt_close(p->fd, hp[i]);
	}
	for (i = 0; i < 6; i++)
		qt_close(p->fd, hv[i]);
	free(w);
}

/* ------------------------------------------------------------------------ */
/* Oversubscription                                                          */

/* FNV-1a of pattern @seed xor'ed with @key, @n words */
static uint32_t pattern_xor_csum(uint32_t seed, uint32_t key, uint64_t n)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (qgpu_pattern(seed, i) ^ key)) * QGPU_CSUM_PRIME;
	return h;
}

static void check_oversubscription(struct vproc *p, int rounds)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t chunk = (vram / 8) & ~(SZ_64K - 1);
	unsigned int n = (unsigned int)(4 * vram / chunk), i, per, sys;
	uint32_t *h, key = 0, kh, csum_ok;
	struct drm_qgpu_stats s0, s1;
	struct qgpu_vcb *v = vcb_new();
	uint64_t x, kva;
	int r;

	per = n / 8 ? n / 8 : 1;
	h = calloc(n, sizeof(*h));
	igt_assert(h);
	x = reserve(p->fd, (n + 1) * chunk);
	kva = x + n * chunk;
	qt_stats(p->fd, &s0);
	for (i = 0; i < n; i++) {
		h[i] = cpu_bo(p->fd, chunk);
		cpu_fill(p->fd, h[i], 0, chunk, 9000 + i);
		vmap(p->fd, h[i], x + i * chunk, 0, chunk, 0);
	}
	kh = cpu_bo(p->fd, chunk);
	vmap(p->fd, kh, kva, 0, chunk, QGPU_VM_MAP_READ_ONLY);
	igt_info("%u allocations of %llu KiB (%.1fx VRAM), %u made resident per round\n",
		 n, (unsigned long long)chunk >> 10, (double)n * chunk / vram,
		 per);
	for (r = 0; r < rounds; r++) {
		uint32_t set[64], old[64], k = 0, ko = 0;
		uint32_t rkey = 0x9e3779b9u * (r + 1);

		/* Evict the set of two rounds ago, and one of the last */
		for (i = 0; i < n && r >= 2; i++)
			if (i % 8 == (unsigned int)(r - 2) % 8 && ko < 64)
				old[ko++] = h[i];
		if (ko)
			evict(p->fd, old, ko);
		for (i = 0; i < ko; i++)
			igt_assert_eq(segment_of(p->fd, old[i]),
				      QGPU_SEG_SYSTEM);
		if (r >= 1)
			qt_reside(p->fd, h[(r - 1) % 8], QGPU_RESIDE_EVICT_SYSTEM,
				  0);
		for (i = 0; i < n; i++)
			if (i % 8 == (unsigned int)r % 8 && k < 64)
				set[k++] = h[i];
		make_resident(p->fd, set, k);
		/* the key: this round's word everywhere */
		qgpu_vcb_reset(v);
		{
			uint32_t *km = cpu_view(p->fd, kh, chunk);

			for (i = 0; i < chunk / 4; i++)
				km[i] = rkey;
			cpu_unview(p->fd, kh, km, chunk);
		}
		key ^= rkey;
		/* every allocation, resident or not, through its entries */
		for (sys = 0, i = 0; i < n; i++) {
			sys += segment_of(p->fd, h[i]) == QGPU_SEG_SYSTEM;
			qgpu_vcb_xor(v, x + i * chunk, x + i * chunk, kva,
				     chunk / 4);
		}
		igt_assert_lt(0, sys);
		vrun(p->fd, p->ctx, v);
		for (i = 0; i < n; i++) {
			uint32_t want = pattern_xor_csum(9000 + i, key,
							 chunk / 4);

			csum_ok = vcsum(p, x + i * chunk, chunk);
			igt_assert_f(csum_ok == want,
				     "round %d allocation %u (segment %u): GPU checksum %#x, host %#x\n",
				     r, i, segment_of(p->fd, h[i]), csum_ok,
				     want);
		}
	}
	qt_stats(p->fd, &s1);
	igt_assert_lt(0, s1.bytes_from_vram - s0.bytes_from_vram);
	igt_assert_lt(0, s1.bytes_to_vram - s0.bytes_to_vram);
	/* and the CPU sees the same bytes */
	for (i = 0; i < n; i++) {
		const volatile uint32_t *m = cpu_view(p->fd, h[i], chunk);
		uint64_t w;

		for (w = 0; w < chunk / 4; w++)
			igt_assert_f(m[w] == (qgpu_pattern(9000 + i, w) ^ key),
				     "allocation %u word %llu: %#x, expected %#x\n",
				     i, (unsigned long long)w, m[w],
				     qgpu_pattern(9000 + i, w) ^ key);
		cpu_unview(p->fd, h[i], (void *)m, chunk);
	}
	igt_assert_eq(qgpu_vm_free(p->fd, x, (n + 1) * chunk), 0);
	for (i = 0; i < n; i++)
		qt_close(p->fd, h[i]);
	qt_close(p->fd, kh);
	vcb_free(v);
	free(h);
}

/* ------------------------------------------------------------------------ */
/* Page sizes                                                                */

static void check_page_sizes(struct vproc *p)
{
	const uint64_t size = 8 * SZ_64K;
	uint32_t h = cpu_bo(p->fd, size), *host;
	uint64_t x = reserve(p->fd, 16 * SZ_64K);
	struct qgpu_vcb *v = vcb_new();
	const struct {
		uint64_t va, off, size;
	} m[] = {
		{ x, 0, 2 * SZ_64K },				/* 64K pages */
		{ x + 4 * SZ_64K + SZ_4K, SZ_64K, SZ_64K },	/* VA 4K off */
		{ x + 8 * SZ_64K, SZ_4K, SZ_64K },		/* offset 4K off */
		{ x + 10 * SZ_64K, 5 * SZ_64K, 3 * SZ_64K },	/* 64K again */
		{ x + 14 * SZ_64K, 3 * SZ_4K, 5 * SZ_4K },	/* small */
	};
	unsigned int i, j;
	int pass;

	host = malloc(size);
	igt_assert(host);
	qgpu_pattern_fill(host, size, 64);
	put(p->fd, h, host, size);
	for (i = 0; i < ARRAY_SIZE(m); i++)
		vmap(p->fd, h, m[i].va, m[i].off, m[i].size, 0);
	make_resident(p->fd, &h, 1);
	for (pass = 0; pass < 2; pass++) {
		/* every view shows its part of the allocation */
		for (i = 0; i < ARRAY_SIZE(m); i++)
			igt_assert_f(vcsum(p, m[i].va, m[i].size) ==
				     qgpu_csum(host + m[i].off / 4,
					       m[i].size / 4),
				     "pass %d: mapping %u (VA %#llx offset %#llx) shows other bytes\n",
				     pass, i, (unsigned long long)m[i].va,
				     (unsigned long long)m[i].off);
		/* written through one view, read through another */
		qgpu_vcb_reset(v);
		qgpu_vcb_fill(v, m[2].va, SZ_4K, 0xf111 + pass);  /* off 4K */
		for (j = 0; j < SZ_4K / 4; j++)
			host[SZ_4K / 4 + j] = 0xf111 + pass;
		/* offsets 64K..128K (view 0 upper half) <- 320K..384K */
		qgpu_vcb_copy(v, m[0].va + SZ_64K, m[3].va, SZ_64K);
		memcpy(host + SZ_64K / 4, host + 5 * SZ_64K / 4, SZ_64K);
		vrun(p->fd, p->ctx, v);
		igt_assert_eq(vcsum(p, x + SZ_4K, SZ_4K),
			      qt_csum_const(0xf111 + pass, SZ_4K / 4));
		igt_assert_eq(vcsum(p, m[1].va, SZ_64K),
			      qgpu_csum(host + SZ_64K / 4, SZ_64K / 4));
		expect_bytes(p->fd, h, host, size, "allocation");
		/* again through system entries: no 64K pages there */
		evict(p->fd, &h, 1);
	}
	igt_assert_eq(qgpu_vm_free(p->fd, x, 16 * SZ_64K), 0);
	free(host);
	vcb_free(v);
	qt_close(p->fd, h);
}

/* ------------------------------------------------------------------------ */
/* Faults                                                                    */

static void check_fault_unmapped(struct vproc *p)
{
	uint32_t h = cpu_bo(p->fd, SZ_64K), bad, other, pctx;
	uint64_t x = reserve(p->fd, 2 * SZ_64K);
	struct qgpu_vcb *v = vcb_new();
	struct qgpu_cb *cb = qt_cb(&dev);
	uint32_t *r, res;

	cpu_fill(p->fd, h, 0, SZ_64K, 31);
	vmap(p->fd, h, x, 0, SZ_64K, 0);
	make_resident(p->fd, &h, 1);
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &bad), 0);
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &other), 0);
	/* reserved, not mapped */
	qgpu_vcb_copy(v, x + SZ_64K, x, SZ_4K);
	vfault(p->fd, bad, v, QGPU_FAULT_PAGE_NOT_PRESENT, x + SZ_64K);
	/* not even reserved, on another context: the same */
	igt_assert_eq(qgpu_ctx_destroy(p->fd, bad), 0);
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &bad), 0);
	qgpu_vcb_reset(v);
	qgpu_vcb_fill(v, mmu.va_end - SZ_64K, SZ_4K, 0);
	vfault(p->fd, bad, v, QGPU_FAULT_PAGE_NOT_PRESENT,
	       mmu.va_end - SZ_64K);
	/* the same file's other contexts, virtual and physical, go on */
	qgpu_vcb_reset(v);
	qgpu_vcb_checksum(v, x, SZ_64K, p->out_va);
	p->out[0] = 0;
	vrun(p->fd, other, v);
	igt_assert_eq(p->out[0], pattern_csum(31, 0, SZ_64K / 4));
	igt_assert_eq(vcsum(p, x, SZ_64K), pattern_csum(31, 0, SZ_64K / 4));
	pctx = qt_ctx(p->fd);
	res = qt_result_buf(p->fd, SZ_4K, &r);
	qgpu_cb_bind(cb, 0, res, 0, SZ_4K);
	qgpu_cb_fill(cb, 0, 0, SZ_4K, 0xabcdef);
	qt_run(p->fd, pctx, cb, 30);
	igt_assert_eq(r[7], 0xabcdef);
	/* and another process */
	run_child(child_works, NULL, "another process after a fault");
	qt_cb_free(cb);
	qt_unmap(p->fd, res, r, SZ_4K);
	qt_close(p->fd, res);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, pctx), 0);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, bad), 0);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, other), 0);
	igt_assert_eq(qgpu_vm_free(p->fd, x, 2 * SZ_64K), 0);
	vcb_free(v);
	qt_close(p->fd, h);
}

static void check_fault_read_only(struct vproc *p)
{
	uint32_t h = cpu_bo(p->fd, SZ_64K), bad;
	uint64_t x = reserve(p->fd, SZ_64K);
	struct qgpu_vcb *v = vcb_new();
	void *m;

	cpu_fill(p->fd, h, 0, SZ_64K, 41);
	vmap(p->fd, h, x, 0, SZ_64K, QGPU_VM_MAP_READ_ONLY);
	make_resident(p->fd, &h, 1);
	/* reading is allowed */
	igt_assert_eq(vcsum(p, x, SZ_64K), pattern_csum(41, 0, SZ_64K / 4));
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &bad), 0);
	qgpu_vcb_fill(v, x + SZ_4K, SZ_4K, 0xbad);
	vfault(p->fd, bad, v, QGPU_FAULT_PAGE_READ_ONLY, x + SZ_4K);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, bad), 0);
	/* a copy into it too, resident in system memory this time */
	evict(p->fd, &h, 1);
	igt_assert_eq(qgpu_ctx_create_virtual(p->fd, &bad), 0);
	qgpu_vcb_reset(v);
	qgpu_vcb_copy(v, x, p->out_va, 64);
	vfault(p->fd, bad, v, QGPU_FAULT_PAGE_READ_ONLY, x);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, bad), 0);
	m = cpu_view(p->fd, h, SZ_64K);
	qt_check_pattern(m, SZ_64K, 41, "read-only mapping's allocation");
	cpu_unview(p->fd, h, m, SZ_64K);
	ctx_ok(p->fd, p->ctx);
	igt_assert_eq(qgpu_vm_free(p->fd, x, SZ_64K), 0);
	vcb_free(v);
	qt_close(p->fd, h);
}

/* ------------------------------------------------------------------------ */
/* Isolation                                                                 */

#define SECRET_SIZE	SZ_1M
#define SECRET_SEED	0x5ec7e7

struct iso {
	uint64_t x, x2;		/* A's secret at both */
	int to_child, from_child;
};

static int iso_child(void *arg)
{
	struct iso *is = arg;
	volatile uint32_t *out;
	uint64_t out_va, fence;
	uint32_t h, ctx, bad, csum, hs[8], i;
	const uint32_t zero = qt_csum_const(0, SECRET_SIZE / 4);
	struct qgpu_vcb v;
	struct drm_qgpu_context_status cs;
	char c;
	int fd;

	fd = open(dev.path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(qgpu_ctx_create_virtual(fd, &ctx) == 0);
	CHECK(qgpu_ctx_create_virtual(fd, &bad) == 0);
	CHECK(child_result(fd, &out_va, &out) == 0);
	/* the same VA as A's secret: B's own address space */
	CHECK(qgpu_vm_reserve(fd, is->x, SECRET_SIZE, QGPU_VM_RESERVE_FIXED,
			      NULL) == 0);
	CHECK(qgpu_bo_create(fd, SECRET_SIZE, vram_mask, 0, 0, &h) == 0);
	CHECK(qgpu_vm_map(fd, h, is->x, 0, SECRET_SIZE, 0) == 0);
	/* not resident yet: zeros from system memory */
	CHECK(child_csum(fd, ctx, is->x, SECRET_SIZE, out_va, out, &csum) == 0);
	CHECK(csum == zero);
	CHECK(qgpu_make_resident(fd, &h, 1, &fence) == 0);
	CHECK(qgpu_paging_fence_wait(fd, fence, TIMEOUT) == 0);
	CHECK(child_csum(fd, ctx, is->x, SECRET_SIZE, out_va, out, &csum) == 0);
	CHECK(csum == zero);
	/* B writes its own X */
	qgpu_vcb_init(&v);
	qgpu_vcb_fill(&v, is->x, SECRET_SIZE, 0xbbbbbbbb);
	CHECK(qgpu_vcb_submit_wait(fd, ctx, &v, TIMEOUT) == 0);
	/* A's other VA is nothing in B's space: a fault */
	qgpu_vcb_reset(&v);
	qgpu_vcb_copy(&v, is->x, is->x2, SZ_4K);
	CHECK(qgpu_vcb_submit_wait(fd, bad, &v, TIMEOUT) == 0);
	CHECK(qgpu_query_context(fd, bad, &cs) == 0);
	CHECK(cs.state == QGPU_CTX_LOST_FAULT);
	CHECK(cs.fault_reason == QGPU_FAULT_PAGE_NOT_PRESENT);
	CHECK(cs.fault_addr == is->x2);
	CHECK(child_csum(fd, ctx, is->x, SECRET_SIZE, out_va, out, &csum) == 0);
	CHECK(csum == qt_csum_const(0xbbbbbbbb, SECRET_SIZE / 4));
	CHECK(write(is->from_child, "a", 1) == 1);
	CHECK(read(is->to_child, &c, 1) == 1);
	/* A freed its secret: whatever B gets now reads zeros */
	for (i = 0; i < 8; i++) {
		uint64_t va;

		CHECK(qgpu_bo_create(fd, SECRET_SIZE, vram_mask, 0, 0,
				     &hs[i]) == 0);
		CHECK(qgpu_vm_reserve(fd, 0, SECRET_SIZE, 0, &va) == 0);
		CHECK(qgpu_vm_map(fd, hs[i], va, 0, SECRET_SIZE, 0) == 0);
		CHECK(qgpu_make_resident(fd, &hs[i], 1, &fence) == 0);
		CHECK(qgpu_paging_fence_wait(fd, fence, TIMEOUT) == 0);
		CHECK(child_csum(fd, ctx, va, SECRET_SIZE, out_va, out,
				 &csum) == 0);
		CHECK(csum == zero);
	}
	qgpu_vcb_fini(&v);
	close(fd);
	return 0;
}

static void check_isolation(void)
{
	int fd = file_open(), down[2], up[2];
	struct vproc a;
	struct iso is;
	uint32_t h;
	pid_t pid;
	char c;
	int st;

	vproc_init(&a, fd);
	is.x = mmu.va_start + 64 * SZ_1M;
	is.x2 = is.x + 16 * SZ_1M;
	reserve_at(fd, is.x, SECRET_SIZE);
	reserve_at(fd, is.x2, SECRET_SIZE);
	h = cpu_bo(fd, SECRET_SIZE);
	cpu_fill(fd, h, 0, SECRET_SIZE, SECRET_SEED);
	vmap(fd, h, is.x, 0, SECRET_SIZE, 0);
	vmap(fd, h, is.x2, 0, SECRET_SIZE, 0);
	make_resident(fd, &h, 1);
	igt_assert(in_vram(segment_of(fd, h)));
	igt_assert_eq(vcsum(&a, is.x, SECRET_SIZE),
		      pattern_csum(SECRET_SEED, 0, SECRET_SIZE / 4));
	igt_assert_eq(pipe(down), 0);
	igt_assert_eq(pipe(up), 0);
	is.to_child = down[0];
	is.from_child = up[1];
	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		_exit(iso_child(&is));
	}
	close(down[0]);
	close(up[1]);
	if (read(up[0], &c, 1) == 1) {
		/* B's writes at the same VA did not reach A's memory */
		igt_assert_eq(vcsum(&a, is.x, SECRET_SIZE),
			      pattern_csum(SECRET_SEED, 0, SECRET_SIZE / 4));
		igt_assert_eq(vcsum(&a, is.x2, SECRET_SIZE),
			      pattern_csum(SECRET_SEED, 0, SECRET_SIZE / 4));
		igt_assert_eq(qgpu_vm_unmap(fd, is.x, SECRET_SIZE), 0);
		igt_assert_eq(qgpu_vm_free(fd, is.x2, SECRET_SIZE), 0);
		qt_close(fd, h);
	}
	igt_assert_eq(write(down[1], "b", 1), 1);
	st = qt_wait_child(pid);
	close(down[1]);
	close(up[0]);
	igt_assert_f(st == 0, "process B failed (status %d)\n", st);
	vproc_fini(&a);
	file_close(fd);
}

/* ------------------------------------------------------------------------ */
/* Virtual-submit rules                                                      */

static void check_submit_rules(struct vproc *p)
{
	uint32_t h = cpu_bo(p->fd, SZ_64K), pctx = qt_ctx(p->fd), c;
	uint64_t x = reserve(p->fd, SZ_64K);
	struct drm_qgpu_alloc_entry ae = { .handle = h };
	struct drm_qgpu_patch_entry pe = { 0 };
	struct qgpu_vcb *v = vcb_new();
	struct qgpu_cb *cb = qt_cb(&dev);
	struct drm_qgpu_submit s;
	uint32_t slot_fill[QGPU_DMA_FILL_LEN] = {
		QGPU_CMD_HDR(QGPU_DMA_FILL, 0, QGPU_DMA_FILL_LEN), 0, 0, 4, 1,
	};
	uint32_t unknown[1] = { QGPU_CMD_HDR(QGPU_DMA_VTIMESTAMP + 1, 0, 1) };
	struct qgpu_vcb vf;
	void *m;

	cpu_fill(p->fd, h, 0, SZ_64K, 55);
	vmap(p->fd, h, x, 0, SZ_64K, 0);
	make_resident(p->fd, &h, 1);
	/* a fill that would show if anything ran */
	qgpu_vcb_fill(v, x, SZ_64K, 0);
	qgpu_vcb_to_submit(v, p->ctx, &s);
	s.allocs = (uintptr_t)&ae;
	s.num_allocs = 1;
	igt_assert_eq(qgpu_submit_raw(p->fd, &s), -EINVAL);
	qgpu_vcb_to_submit(v, p->ctx, &s);
	s.patches = (uintptr_t)&pe;
	s.num_patches = 1;
	igt_assert_eq(qgpu_submit_raw(p->fd, &s), -EINVAL);
	/* slot commands on a virtual context */
	qgpu_vcb_emit_raw(v, slot_fill, QGPU_DMA_FILL_LEN);
	igt_assert_eq(qgpu_vcb_submit(p->fd, p->ctx, v, NULL, 0, NULL, 0),
		      -EINVAL);
	qgpu_vcb_reset(v);
	qgpu_vcb_fill(v, x, SZ_64K, 0);
	qgpu_vcb_emit_raw(v, unknown, 1);
	igt_assert_eq(qgpu_vcb_submit(p->fd, p->ctx, v, NULL, 0, NULL, 0),
		      -EINVAL);
	/* virtual commands on a physical context, with or without lists */
	qgpu_vcb_reset(v);
	qgpu_vcb_fill(v, x, SZ_64K, 0);
	igt_assert_eq(qgpu_vcb_submit(p->fd, pctx, v, NULL, 0, NULL, 0),
		      -EINVAL);
	qgpu_cb_bind(cb, 0, h, 0, SZ_64K);
	qgpu_cb_emit_raw(cb, v->dw, v->ndw);
	igt_assert_eq(qgpu_submit(p->fd, pctx, cb, NULL, 0, NULL, 0, NULL),
		      -EINVAL);
	/* nothing ran, and both contexts still work */
	m = cpu_view(p->fd, h, SZ_64K);
	qt_check_pattern(m, SZ_64K, 55, "after refused submits");
	cpu_unview(p->fd, h, m, SZ_64K);
	ctx_ok(p->fd, p->ctx);
	ctx_ok(p->fd, pctx);
	igt_assert_eq(vcsum(p, x, SZ_64K), pattern_csum(55, 0, SZ_64K / 4));
	/* context flags */
	igt_assert_eq(qgpu_ctx_create_flags(p->fd, 1u << 1, &c), -EINVAL);
	igt_assert_eq(qgpu_ctx_create_flags(p->fd, 1u << 31, &c), -EINVAL);
	/* an empty virtual buffer's rules are the physical ones */
	qgpu_vcb_init(&vf);
	igt_assert_eq(qgpu_vcb_submit(p->fd, p->ctx, &vf, NULL, 0, NULL, 0),
		      -EINVAL);
	qgpu_vcb_fini(&vf);
	igt_assert_eq(qgpu_ctx_destroy(p->fd, pctx), 0);
	igt_assert_eq(qgpu_vm_free(p->fd, x, SZ_64K), 0);
	qt_cb_free(cb);
	vcb_free(v);
	qt_close(p->fd, h);
}

/* ------------------------------------------------------------------------ */
/* "GpuMmu Example Scenarios": the paging commands, in order                 */

static void check_scenario_order(void)
{
	const uint64_t size = 256 * 1024;
	struct tvars tv = { 0 };
	uint64_t x, fence;
	uint32_t h;
	char *t;
	int fd;

	trace_begin();
	fd = file_open();	/* a fresh process: no page tables yet */
	h = qt_bo(fd, size, vram_mask, 0, 0);
	x = reserve(fd, size);
	vmap(fd, h, x, 0, size, 0);
	fence = make_resident(fd, &h, 1);
	t = trace_end();
	igt_assert(in_vram(segment_of(fd, h)));
	tv.proc = vm_info(fd).root;
	tv.size = size;
	tv.fence = fence;
	igt_assert_neq_u64(tv.proc, 0);
	tassert_sequence(t, make_resident_steps,
			 ARRAY_SIZE(make_resident_steps), &tv,
			 "MakeResident of a new allocation of a new process");
	free(t);

	/* Eviction: TransferVirtual through the paging process's scratch */
	trace_begin();
	fence = evict(fd, &h, 1);
	t = trace_end();
	igt_assert_eq(segment_of(fd, h), QGPU_SEG_SYSTEM);
	tv.fence = fence;
	tassert_sequence(t, evict_steps, ARRAY_SIZE(evict_steps), &tv,
			 "Evict of a resident allocation");
	free(t);
	qt_close(fd, h);
	file_close(fd);
}

static void check_close_releases_tables(void)
{
	struct drm_qgpu_mmu_info m0, m1;
	struct drm_qgpu_vm_info vm;
	int fd = file_open(), i;
	uint64_t x, big = 4 * SZ_1M;
	uint32_t h;

	igt_assert_eq(qgpu_query_mmu(dev.fd, &m0), 0);
	h = qt_bo(fd, big, vram_mask, 0, 0);
	/* across a 1 GiB boundary (two level-1 tables) and several 2 MiB */
	x = ((mmu.va_start + (1ull << 30)) & ~((1ull << 30) - 1)) - 2 * SZ_1M;
	if (x < mmu.va_start)
		x += 1ull << 30;
	reserve_at(fd, x, big);
	vmap(fd, h, x, 0, big, 0);
	make_resident(fd, &h, 1);
	vm = vm_info(fd);
	/* root, two level-1 tables, two leaves at least */
	igt_assert_lte(5, vm.page_tables);
	igt_assert_lte_u64(vm.page_tables * QGPU_MMU_TABLE_SIZE,
			   vm.page_table_bytes);
	igt_assert_eq(qgpu_query_mmu(dev.fd, &m1), 0);
	/* the paging process's tables, and this file's */
	igt_assert_lt(vm.page_tables, m1.page_tables);
	qt_untrack(fd, h, NULL);
	file_close(fd);
	/* deferred: give the worker a moment */
	for (i = 0; i < 100; i++) {
		igt_assert_eq(qgpu_query_mmu(dev.fd, &m1), 0);
		if (m1.page_tables <= m0.page_tables)
			break;
		usleep(50 * 1000);
	}
	igt_assert_f(m1.page_tables <= m0.page_tables &&
		     m1.page_table_bytes <= m0.page_table_bytes,
		     "page tables %llu (%llu bytes) after close, %llu (%llu) before\n",
		     (unsigned long long)m1.page_tables,
		     (unsigned long long)m1.page_table_bytes,
		     (unsigned long long)m0.page_tables,
		     (unsigned long long)m0.page_table_bytes);
}

static uint64_t device_page_tables(void)
{
	struct drm_qgpu_mmu_info m;

	igt_assert_eq(qgpu_query_mmu(dev.fd, &m), 0);
	return m.page_tables;
}

/*
 * A closed file's tables go behind its work (deferred): wait until the
 * device holds no more than @base again, so that the next subtest starts
 * from what it measures.
 */
static void wait_tables_back(uint64_t base)
{
	uint64_t pt = device_page_tables();
	int i;

	for (i = 0; i < 200 && pt > base; i++) {
		usleep(25 * 1000);
		pt = device_page_tables();
	}
	igt_assert_f(pt <= base, "page tables %llu after close, %llu before\n",
		     (unsigned long long)pt, (unsigned long long)base);
}

/*
 * Page tables stay until the file is closed and the paging process's window
 * onto them is shared by every process: one process mapping a page in
 * every 2 MiB of a large range must run out of tables of its own
 * (QGPU_VM_MAX_PAGE_TABLES, ENOSPC) long before it has taken the window's
 * slots or VRAM every other process needs for its own address space.
 */
static void check_page_tables_capped(void)
{
	uint64_t n = 4 * QGPU_VM_MAX_PAGE_TABLES + 64, va, vb, i;
	uint64_t base = device_page_tables();
	struct drm_qgpu_vm_info vi;
	int a = file_open(), b, ret = 0;
	uint32_t h, hb;

	h = qt_bo(a, SZ_4K, vram_mask, 0, 0);
	va = reserve(a, n * (2 * SZ_1M));
	for (i = 0; i < n && !ret; i++)
		ret = qgpu_vm_map(a, h, va + i * (2 * SZ_1M), 0, SZ_4K, 0);
	vi = vm_info(a);
	igt_assert_f(ret == -ENOSPC,
		     "%llu sparse mappings: %s, %llu page tables\n",
		     (unsigned long long)i, strerror(-ret),
		     (unsigned long long)vi.page_tables);
	igt_assert_lte_u64(vi.page_tables, QGPU_VM_MAX_PAGE_TABLES);
	/* it did get about as many as its share */
	igt_assert_lte_u64(QGPU_VM_MAX_PAGE_TABLES - 2, vi.page_tables);
	/* another process still builds its address space and uses it */
	b = file_open();
	hb = qt_bo(b, SZ_64K, vram_mask, 0, 0);
	vb = reserve(b, SZ_64K);
	vmap(b, hb, vb, 0, SZ_64K, 0);
	make_resident(b, &hb, 1);
	vi = vm_info(b);
	igt_assert_lte_u64(3, vi.page_tables);
	file_close(b);
	file_close(a);
	wait_tables_back(base);
}

/*
 * The window's slots are counted per user too: a user who is not root
 * cannot take them all by opening more files. User 65534 opens two files,
 * builds one address space of about 600 tables, then maps sparsely in the
 * other until ENOSPC: both together hold at most QGPU_VM_MAX_PAGE_TABLES,
 * and another user (65533) still builds its address space and makes an
 * allocation resident in it while the first holds its share.
 */
struct user_tables {
	int res[2];	/* child -> parent: results */
	int go[2];	/* parent -> child: let go */
};

/* Become @uid and open the device as that user */
static int open_as(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return open(dev.path, O_RDWR | O_CLOEXEC);
}

static int child_user_first(struct user_tables *u)
{
	const uint64_t span = 2 * SZ_1M;
	struct drm_qgpu_vm_info va_info, vb_info;
	uint64_t va, vb, i;
	int64_t out[3];
	uint32_t h, hb;
	int a, b, ret = 0;
	char c;

	a = open_as(65534);
	CHECK(a >= 0);
	b = open(dev.path, O_RDWR | O_CLOEXEC);
	CHECK(b >= 0);
	CHECK(qgpu_bo_create(a, SZ_4K, vram_mask, 0, 0, &h) == 0);
	CHECK(qgpu_vm_reserve(a, 0, 600 * span, 0, &va) == 0);
	for (i = 0; i < 600; i++)
		CHECK(qgpu_vm_map(a, h, va + i * span, 0, SZ_4K, 0) == 0);
	CHECK(qgpu_bo_create(b, SZ_4K, vram_mask, 0, 0, &hb) == 0);
	CHECK(qgpu_vm_reserve(b, 0, 1100 * span, 0, &vb) == 0);
	for (i = 0; i < 1100 && !ret; i++)
		ret = qgpu_vm_map(b, hb, vb + i * span, 0, SZ_4K, 0);
	CHECK(qgpu_query_vm_info(a, &va_info) == 0);
	CHECK(qgpu_query_vm_info(b, &vb_info) == 0);
	out[0] = ret;
	out[1] = va_info.page_tables;
	out[2] = vb_info.page_tables;
	CHECK(write(u->res[1], out, sizeof(out)) == sizeof(out));
	CHECK(read(u->go[0], &c, 1) == 1);
	close(a);
	close(b);
	return 0;
}

static int child_user_second(struct user_tables *u)
{
	struct drm_qgpu_vm_info vi;
	uint64_t va, fence;
	uint32_t h;
	int fd;

	(void)u;
	fd = open_as(65533);
	CHECK(fd >= 0);
	CHECK(qgpu_bo_create(fd, SZ_64K, vram_mask, 0, 0, &h) == 0);
	CHECK(qgpu_vm_reserve(fd, 0, SZ_64K, 0, &va) == 0);
	CHECK(qgpu_vm_map(fd, h, va, 0, SZ_64K, 0) == 0);
	CHECK(qgpu_make_resident(fd, &h, 1, &fence) == 0);
	CHECK(qgpu_paging_fence_wait(fd, fence, TIMEOUT) == 0);
	CHECK(qgpu_query_vm_info(fd, &vi) == 0);
	CHECK(vi.page_tables >= 3);
	close(fd);
	return 0;
}

static void check_page_tables_capped_per_user(void)
{
	uint64_t base = device_page_tables();
	struct user_tables u;
	pid_t first, second;
	struct stat node;
	int64_t out[3];
	int st;

	/* the users open the device themselves: their files count as theirs */
	igt_assert_eq(stat(dev.path, &node), 0);
	igt_assert_eq(chmod(dev.path, 0666), 0);
	igt_assert_eq(pipe(u.res), 0);
	igt_assert_eq(pipe(u.go), 0);
	fflush(stdout);
	first = fork();
	igt_assert(first >= 0);
	if (first == 0)
		_exit(child_user_first(&u));
	close(u.res[1]);
	close(u.go[0]);
	st = read(u.res[0], out, sizeof(out));
	if (st != sizeof(out))
		chmod(dev.path, node.st_mode & 07777);
	igt_assert_f(st == sizeof(out), "first user's child ended early (%d)\n",
		     qt_wait_child(first));
	igt_info("user 65534: %lld + %lld page tables, then %s\n",
		 (long long)out[1], (long long)out[2],
		 strerror(-(int)out[0]));
	/* another user, while the first holds its share */
	fflush(stdout);
	second = fork();
	igt_assert(second >= 0);
	if (second == 0)
		_exit(child_user_second(&u));
	st = qt_wait_child(second);
	igt_assert_eq(write(u.go[1], "x", 1), 1);
	chmod(dev.path, node.st_mode & 07777);
	igt_assert_f(st == 0, "second user's child failed (status %d)\n", st);
	st = qt_wait_child(first);
	igt_assert_f(st == 0, "first user's child failed (status %d)\n", st);
	close(u.res[0]);
	close(u.go[1]);
	igt_assert_eq(out[0], -ENOSPC);
	igt_assert_lte(out[1] + out[2], QGPU_VM_MAX_PAGE_TABLES);
	igt_assert_lte(QGPU_VM_MAX_PAGE_TABLES - 4, out[1] + out[2]);
	igt_assert_lte(out[2], QGPU_VM_MAX_PAGE_TABLES / 2);
	wait_tables_back(base);
}

/*
 * An address space's root counts in its user's tables from the moment it
 * exists, and a query creates it: user 65534 opens more files than its
 * share of tables and asks each about its address space
 * (QGPU_QUERY_VM_INFO). Past QGPU_VM_MAX_PAGE_TABLES the query fails with
 * ENOSPC and takes no VRAM; closing the files gives every root back.
 */
#define ROOT_FILES (QGPU_VM_MAX_PAGE_TABLES + 16)
static int child_roots(int *out)
{
	struct rlimit rl = { ROOT_FILES + 64, ROOT_FILES + 64 };
	struct drm_qgpu_vm_info vi;
	int fd[ROOT_FILES], i, n = 0, nospc = 0, ret;

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHECK(setresgid(65534, 65534, 65534) == 0);
	CHECK(setresuid(65534, 65534, 65534) == 0);
	for (i = 0; i < ROOT_FILES; i++) {
		fd[i] = open(dev.path, O_RDWR | O_CLOEXEC);
		CHECK(fd[i] >= 0);
		ret = qgpu_query_vm_info(fd[i], &vi);
		if (!ret)
			n++;
		else if (ret == -ENOSPC)
			nospc++;
		else
			return 10;
	}
	out[0] = n;
	out[1] = nospc;
	for (i = 0; i < ROOT_FILES; i++)
		close(fd[i]);
	return 0;
}

static void check_roots_capped_per_user(void)
{
	uint64_t base = device_page_tables();
	struct stat node;
	int p[2], out[2] = { 0, 0 }, st;
	pid_t pid;

	igt_assert_eq(stat(dev.path, &node), 0);
	igt_assert_eq(chmod(dev.path, 0666), 0);
	igt_assert_eq(pipe(p), 0);
	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		int r = child_roots(out);

		if (write(p[1], out, sizeof(out)) != sizeof(out))
			r = 11;
		_exit(r);
	}
	st = qt_wait_child(pid);
	chmod(dev.path, node.st_mode & 07777);
	igt_assert_f(st == 0, "child failed (status %d)\n", st);
	igt_assert_eq(read(p[0], out, sizeof(out)), sizeof(out));
	close(p[0]);
	close(p[1]);
	igt_info("user 65534: %d address spaces, %d refused\n", out[0],
		 out[1]);
	igt_assert_eq(out[0], QGPU_VM_MAX_PAGE_TABLES);
	igt_assert_eq(out[1], ROOT_FILES - QGPU_VM_MAX_PAGE_TABLES);
	wait_tables_back(base);
}

/*
 * Every mapping is kernel memory: one address space holds at most
 * QGPU_VM_MAX_MAPPINGS, whether they come from VM_MAP or from a VM_UNMAP
 * that cuts a mapping in two. At the limit both fail with ENOSPC and
 * change nothing; unmapping one makes room again.
 */
static void check_mappings_capped(void)
{
	const uint64_t n = QGPU_VM_MAX_MAPPINGS;
	uint64_t base = device_page_tables(), va, big, i;
	uint32_t hs[NBO_SPREAD], h, h3;
	int fd = file_open(), ret = 0;

	/* allocations enough that none reaches QGPU_BO_MAX_MAPPINGS */
	for (i = 0; i < NBO_SPREAD; i++)
		hs[i] = qt_bo(fd, SZ_4K, vram_mask, 0, 0);
	h = hs[0];
	h3 = qt_bo(fd, 3 * SZ_4K, vram_mask, 0, 0);
	/* n - 1 one-page mappings in a row, then one of three pages */
	va = reserve(fd, (n + 16) * SZ_4K);
	for (i = 0; i < n - 1 && !ret; i++)
		ret = qgpu_vm_map(fd, hs[i % NBO_SPREAD], va + i * SZ_4K, 0,
				  SZ_4K, 0);
	igt_assert_f(ret == 0, "mapping %llu of %llu: %s\n",
		     (unsigned long long)i, (unsigned long long)n,
		     strerror(-ret));
	big = va + (n - 1) * SZ_4K;
	vmap(fd, h3, big, 0, 3 * SZ_4K, 0);
	/* full: no new mapping, no hole in the middle of one */
	igt_assert_eq(qgpu_vm_map(fd, h, big + 3 * SZ_4K, 0, SZ_4K, 0),
		      -ENOSPC);
	igt_assert_eq(qgpu_vm_unmap(fd, big + SZ_4K, SZ_4K), -ENOSPC);
	/* the refused hole changed nothing: the middle page is still mapped */
	igt_assert_eq(qgpu_vm_map(fd, h, big + SZ_4K, 0, SZ_4K, 0), -EEXIST);
	/* cutting an end off keeps the count */
	igt_assert_eq(qgpu_vm_unmap(fd, big + 2 * SZ_4K, SZ_4K), 0);
	igt_assert_eq(qgpu_vm_map(fd, h, big + 3 * SZ_4K, 0, SZ_4K, 0),
		      -ENOSPC);
	/* three unmapped, three mapped again: full */
	igt_assert_eq(qgpu_vm_unmap(fd, va, 3 * SZ_4K), 0);
	vmap(fd, h3, va, 0, 3 * SZ_4K, 0);
	vmap(fd, h, big + 2 * SZ_4K, 0, SZ_4K, 0);
	vmap(fd, h, big + 3 * SZ_4K, 0, SZ_4K, 0);
	igt_assert_eq(qgpu_vm_unmap(fd, va + SZ_4K, SZ_4K), -ENOSPC);
	/* one unmapped: now the hole fits, and counts as one more */
	igt_assert_eq(qgpu_vm_unmap(fd, big + 3 * SZ_4K, SZ_4K), 0);
	igt_assert_eq(qgpu_vm_unmap(fd, va + SZ_4K, SZ_4K), 0);
	igt_assert_eq(qgpu_vm_map(fd, h, va + SZ_4K, 0, SZ_4K, 0), -ENOSPC);
	file_close(fd);
	wait_tables_back(base);
}

/*
 * Every mapping of an allocation is rewritten when it moves: one
 * allocation has at most QGPU_BO_MAX_MAPPINGS, in every address space
 * together. Two files share it through a dma-buf: the second's mapping
 * past the cap fails with ENOSPC, and so does a hole in the middle of one
 * of its mappings; another allocation still maps; unmapping one makes
 * room again. The allocation at its cap still moves, every mapping
 * showing its content.
 */
static void check_mappings_capped_per_allocation(struct vproc *p)
{
	const uint64_t n = QGPU_BO_MAX_MAPPINGS;
	uint32_t h = cpu_bo(p->fd, 3 * SZ_4K), hb, other;
	uint64_t va, vb, i;
	int b = file_open(), dfd, ret = 0;

	cpu_fill(p->fd, h, 0, 3 * SZ_4K, 77);
	igt_assert_eq(drmPrimeHandleToFD(p->fd, h, DRM_CLOEXEC, &dfd), 0);
	igt_assert_eq(drmPrimeFDToHandle(b, dfd, &hb), 0);
	close(dfd);
	va = reserve(p->fd, (n / 2 + 4) * 4 * SZ_4K);
	vb = reserve(b, (n / 2 + 4) * 4 * SZ_4K);
	/* one of three pages in the second file, the rest of one page */
	vmap(b, hb, vb, 0, 3 * SZ_4K, 0);
	for (i = 0; i < n / 2 && !ret; i++)
		ret = qgpu_vm_map(p->fd, h, va + i * 4 * SZ_4K, 0, SZ_4K, 0);
	for (i = 1; i < n / 2 && !ret; i++)
		ret = qgpu_vm_map(b, hb, vb + i * 4 * SZ_4K, 0, SZ_4K, 0);
	igt_assert_f(ret == 0, "mapping %llu: %s\n", (unsigned long long)i,
		     strerror(-ret));
	/* full: no new mapping in either file, no hole in the middle */
	igt_assert_eq(qgpu_vm_map(b, hb, vb + (n / 2) * 4 * SZ_4K, 0, SZ_4K,
				  0), -ENOSPC);
	igt_assert_eq(qgpu_vm_map(p->fd, h, va + (n / 2) * 4 * SZ_4K, 0,
				  SZ_4K, 0), -ENOSPC);
	igt_assert_eq(qgpu_vm_unmap(b, vb + SZ_4K, SZ_4K), -ENOSPC);
	/* another allocation is not concerned */
	other = qt_bo(p->fd, SZ_4K, vram_mask, 0, 0);
	vmap(p->fd, other, va + (n / 2) * 4 * SZ_4K, 0, SZ_4K, 0);
	/* the allocation at its cap moves, every mapping follows */
	make_resident(p->fd, &h, 1);
	igt_assert(in_vram(segment_of(p->fd, h)));
	igt_assert_eq(vcsum(p, va + (n / 2 - 1) * 4 * SZ_4K, SZ_4K),
		      pattern_csum(77, 0, SZ_4K / 4));
	evict(p->fd, &h, 1);
	igt_assert_eq(vcsum(p, va, SZ_4K), pattern_csum(77, 0, SZ_4K / 4));
	/* one unmapped: room for one more, in the other file */
	igt_assert_eq(qgpu_vm_unmap(p->fd, va, SZ_4K), 0);
	vmap(b, hb, vb + (n / 2) * 4 * SZ_4K, 0, SZ_4K, 0);
	igt_assert_eq(qgpu_vm_free(p->fd, va, (n / 2 + 4) * 4 * SZ_4K), 0);
	/* the hole now fits */
	igt_assert_eq(qgpu_vm_unmap(b, vb + SZ_4K, SZ_4K), 0);
	file_close(b);
	qt_close(p->fd, other);
	qt_close(p->fd, h);
}

/*
 * The layout query answers for every address space the UAPI allows: one
 * at its limits (QGPU_VM_MAX_MAPPINGS mappings, and 64 KiB reservations
 * until VM_RESERVE says ENOSPC) is several MiB of entries, returned
 * whole like a small one.
 */
static void check_layout_at_limits(void)
{
	const uint64_t n = QGPU_VM_MAX_MAPPINGS;
	struct drm_qgpu_vm_layout_entry *e = NULL;
	uint64_t base = device_page_tables(), va, x, nres = 1, maps = 0, i;
	uint32_t hs[NBO_SPREAD];
	unsigned int count = 0;
	int fd = file_open(), ret = 0;

	for (i = 0; i < NBO_SPREAD; i++)
		hs[i] = qt_bo(fd, SZ_4K, vram_mask, 0, 0);
	va = reserve(fd, n * SZ_4K);
	for (i = 0; i < n && !ret; i++)
		ret = qgpu_vm_map(fd, hs[i % NBO_SPREAD], va + i * SZ_4K, 0,
				  SZ_4K, 0);
	igt_assert_f(ret == 0, "mapping %llu of %llu: %s\n",
		     (unsigned long long)i, (unsigned long long)n,
		     strerror(-ret));
	while (!(ret = qgpu_vm_reserve(fd, 0, SZ_64K, 0, &x)))
		nres++;
	igt_assert_eq(ret, -ENOSPC);
	ret = qgpu_query_vm_layout(fd, &e, &count);
	igt_assert_f(ret == 0,
		     "VM layout of %llu reservations and %llu mappings: %s\n",
		     (unsigned long long)nres, (unsigned long long)n,
		     strerror(-ret));
	igt_assert_eq_u64(count, nres + n);
	for (i = 0; i < count; i++)
		maps += e[i].kind == QGPU_VM_LAYOUT_MAPPING;
	free(e);
	igt_assert_eq_u64(maps, n);
	file_close(fd);
	wait_tables_back(base);
}

/*
 * Unmapping is never a long wait under the memory manager's lock: one
 * VM_UNMAP of a range holding the most mappings an address space may
 * have, each of its own allocation, must not hold off another process's
 * ioctl that needs the memory manager for seconds (the unmap's cost grows
 * with the mappings, not with their square).
 */
struct mm_prober {
	volatile bool stop;
	int64_t worst_ns;
	unsigned int calls;
};

static void *mm_probe_fn(void *arg)
{
	struct mm_prober *pr = arg;
	struct drm_qgpu_mmu_info m;
	int fd = qt_reopen(&dev);

	while (!pr->stop) {
		int64_t t0 = qgpu_now_ns(), dt;

		/* takes mm_lock */
		if (qgpu_query_mmu(fd, &m))
			break;
		dt = qgpu_now_ns() - t0;
		if (dt > pr->worst_ns)
			pr->worst_ns = dt;
		pr->calls++;
		usleep(1000);
	}
	close(fd);
	return NULL;
}

static void check_unmap_many_allocations_short(void)
{
	const uint64_t n = QGPU_VM_MAX_MAPPINGS;
	struct mm_prober pr = { 0 };
	uint64_t base = device_page_tables(), va, i;
	int fd = file_open(), ret = 0;
	int64_t t0, unmap_ns;
	pthread_t th;
	uint32_t h;

	va = reserve(fd, n * SZ_4K);
	for (i = 0; i < n && !ret; i++) {
		ret = qgpu_bo_create(fd, SZ_4K, vram_mask, 0, 0, &h);
		if (!ret)
			ret = qgpu_vm_map(fd, h, va + i * SZ_4K, 0, SZ_4K, 0);
		if (!ret)
			ret = qgpu_bo_destroy(fd, h);
	}
	igt_assert_f(ret == 0, "allocation %llu: %s\n", (unsigned long long)i,
		     strerror(-ret));
	igt_assert_eq(pthread_create(&th, NULL, mm_probe_fn, &pr), 0);
	usleep(100 * 1000);
	t0 = qgpu_now_ns();
	ret = qgpu_vm_unmap(fd, va, n * SZ_4K);
	unmap_ns = qgpu_now_ns() - t0;
	usleep(100 * 1000);
	pr.stop = true;
	pthread_join(th, NULL);
	igt_assert_eq(ret, 0);
	igt_info("VM_UNMAP of %llu mappings: %lld ms; another process's ioctl waited %lld ms at most (%u calls)\n",
		 (unsigned long long)n, (long long)(unmap_ns / 1000000),
		 (long long)(pr.worst_ns / 1000000), pr.calls);
	igt_assert_f(pr.worst_ns < 3 * SEC_NS,
		     "another process's ioctl waited %lld ms for the memory manager during one VM_UNMAP\n",
		     (long long)(pr.worst_ns / 1000000));
	file_close(fd);
	wait_tables_back(base);
}

/*
 * A file's page tables are reached by every DMA buffer of every one of its
 * virtual contexts, not only by the one queued last: closing the file
 * while a buffer of one context still waits (for a fence from elsewhere)
 * and a later buffer of another context is done already must not give the
 * tables back. Freed, their VRAM goes to whoever allocates next, and the
 * waiting buffer, which runs once its fence signals (its context's grace
 * period, docs/driver.md), would walk that memory as page tables.
 */
static void check_close_keeps_tables_for_queued_work(void)
{
	struct drm_qgpu_sync_entry in = { 0 };
	struct drm_qgpu_submit args;
	struct qgpu_vcb *v1 = vcb_new(), *v2 = vcb_new();
	uint64_t base, low = ~0ull, pt, va;
	uint32_t c1, c2, h;
	int fd, tl, i, ret;

	tl = qt_sw_timeline();
	base = device_page_tables();
	fd = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &c1), 0);
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &c2), 0);
	igt_assert_eq(qgpu_bo_create(fd, SZ_64K, vram_mask, 0, 0, &h), 0);
	va = reserve(fd, SZ_64K);
	vmap(fd, h, va, 0, SZ_64K, 0);
	make_resident(fd, &h, 1);
	igt_assert_lte_u64(base + 1, device_page_tables());

	/* context 1: a fill that waits for the sw_sync fence */
	in.handle = qt_sw_syncobj(fd, tl, 1);
	igt_assert_eq(qgpu_vcb_fill(v1, va, SZ_4K, 0x1badf00d), 0);
	qgpu_vcb_to_submit(v1, c1, &args);
	args.in_syncs = (uintptr_t)&in;
	args.num_in_syncs = 1;
	ret = qgpu_submit_raw(fd, &args);
	igt_assert_f(ret == 0, "waiting submit: %s\n", strerror(-ret));
	/* context 2: queued later, done at once */
	igt_assert_eq(qgpu_vcb_fill(v2, va + SZ_4K, SZ_4K, 0x600dcafe), 0);
	vrun(fd, c2, v2);
	igt_assert_eq(qgpu_bo_destroy(fd, h), 0);
	file_close(fd);

	/* the first fill still waits: its tables must stay */
	for (i = 0; i < 20; i++) {
		pt = device_page_tables();
		low = pt < low ? pt : low;
		usleep(50 * 1000);
	}
	/* within the context's grace period: the fill runs now */
	qt_sw_inc(tl, 1);
	/* and once it is done, the tables go */
	for (i = 0; i < 300; i++) {
		pt = device_page_tables();
		if (pt <= base)
			break;
		usleep(50 * 1000);
	}
	close(tl);
	vcb_free(v1);
	vcb_free(v2);
	igt_assert_f(low > base,
		     "the closed file's page tables were freed (device page tables %llu, %llu without the file) while a DMA buffer of its first context still waited to run on them\n",
		     (unsigned long long)low, (unsigned long long)base);
	igt_assert_f(pt <= base,
		     "page tables %llu after the last DMA buffer, %llu before the file\n",
		     (unsigned long long)pt, (unsigned long long)base);
}

/*
 * A DMA buffer queued before an allocation was mapped at the addresses it
 * uses reaches that allocation through the page tables all the same, once
 * it runs; its fence is not in that allocation. Closing the file while
 * the buffer still waits (for a fence from elsewhere) must not let the
 * allocation's VRAM go to another file while the closed file's tables
 * still map it: the buffer runs within its context's grace period and
 * would write there. Another file fills the CPU-visible segment with new
 * allocations (zero-filled), the buffer runs, and every one of them must
 * still read zero.
 */
#define LATE_PAT	0x1badf00du

static void check_close_later_mapping_never_reaches_others(void)
{
	const uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
	struct drm_qgpu_sync_entry in = { 0 };
	struct drm_qgpu_submit args;
	struct qgpu_vcb *v = vcb_new();
	uint32_t c, h, hs[256], n, i, k = 0, bad, word = 0;
	uint64_t base, va;
	int fd, fd2, tl, ret;

	n = props.visible / SZ_64K;
	igt_require_f(n && n <= ARRAY_SIZE(hs),
		      "CPU-visible VRAM of %llu bytes\n",
		      (unsigned long long)props.visible);
	tl = qt_sw_timeline();
	base = device_page_tables();
	fd = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &c), 0);
	va = reserve(fd, SZ_64K);
	/* queued while nothing is mapped at va: it waits for the fence */
	in.handle = qt_sw_syncobj(fd, tl, 1);
	igt_assert_eq(qgpu_vcb_fill(v, va, SZ_64K, LATE_PAT), 0);
	qgpu_vcb_to_submit(v, c, &args);
	args.in_syncs = (uintptr_t)&in;
	args.num_in_syncs = 1;
	ret = qgpu_submit_raw(fd, &args);
	igt_assert_f(ret == 0, "waiting submit: %s\n", strerror(-ret));
	/* then an allocation in CPU-visible VRAM is mapped there */
	igt_assert_eq(qgpu_bo_create(fd, SZ_64K, vis, 0, 0, &h), 0);
	vmap(fd, h, va, 0, SZ_64K, 0);
	make_resident(fd, &h, 1);
	igt_assert_eq(segment_of(fd, h), QGPU_SEG_VISIBLE);
	file_close(fd);

	/* another file takes all of CPU-visible VRAM, zero-filled */
	fd2 = file_open();
	for (i = 0; i < n; i++) {
		igt_assert_eq(qgpu_bo_create(fd2, SZ_64K, vis,
					     QGPU_GEM_CPU_ACCESS, 0, &hs[i]),
			      0);
		ret = qgpu_bo_reside(fd2, hs[i], QGPU_RESIDE_MAKE_RESIDENT,
				     QGPU_SEG_VISIBLE, NULL);
		igt_assert_f(ret == 0 || ret == -ENOSPC,
			     "GEM_RESIDE %u: %s\n", i, strerror(-ret));
	}
	/* within the grace period: the buffer runs now */
	qt_sw_inc(tl, 1);
	wait_tables_back(base);
	close(tl);
	vcb_free(v);
	for (i = 0, bad = ~0u; i < n && bad == ~0u; i++) {
		uint32_t *p = NULL;

		ret = qgpu_bo_map(fd2, hs[i], SZ_64K, (void **)&p);
		igt_assert_f(ret == 0, "lock+mmap %u: %s\n", i,
			     strerror(-ret));
		for (k = 0; k < SZ_64K / 4 && !p[k]; k++)
			;
		if (k < SZ_64K / 4) {
			bad = i;
			word = p[k];
		}
		igt_assert_eq(qgpu_bo_unmap(fd2, hs[i], p, SZ_64K), 0);
	}
	file_close(fd2);
	igt_assert_f(bad == ~0u,
		     "another file's new allocation %u of %u holds %#x at word %u (the closed file's DMA buffer wrote %#x through a mapping made after it was queued)\n",
		     bad, n, word, k, LATE_PAT);
}

#define KEEP_PAT	0x5eedbeefu

/*
 * A DMA buffer queued (a fill of @va with KEEP_PAT, waiting for a sw_sync
 * fence) before an allocation is mapped at @va.
 */
struct late_map {
	int fd, tl;
	uint32_t ctx;
	uint64_t va;
	struct drm_qgpu_sync_entry out;
	struct qgpu_vcb *v;
};

static void late_begin(struct late_map *l)
{
	struct drm_qgpu_sync_entry in = { 0 };
	int ret;

	memset(l, 0, sizeof(*l));
	l->v = vcb_new();
	l->tl = qt_sw_timeline();
	l->fd = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(l->fd, &l->ctx), 0);
	l->va = reserve(l->fd, SZ_64K);
	in.handle = qt_sw_syncobj(l->fd, l->tl, 1);
	igt_assert_eq(qgpu_syncobj_create(l->fd, &l->out.handle), 0);
	igt_assert_eq(qgpu_vcb_fill(l->v, l->va, SZ_64K, KEEP_PAT), 0);
	ret = qgpu_vcb_submit(l->fd, l->ctx, l->v, &in, 1, &l->out, 1);
	igt_assert_f(ret == 0, "waiting submit: %s\n", strerror(-ret));
}

/*
 * Map @h at the buffer's addresses. The mapping's entries are written by a
 * paging job: once another allocation's page-in (queued after it, on the
 * same paging queue) is done, so is the mapping.
 */
static void late_map(struct late_map *l, uint32_t h)
{
	uint32_t y;

	vmap(l->fd, h, l->va, 0, SZ_64K, 0);
	y = qt_bo(l->fd, SZ_64K, vram_mask, 0, 0);
	make_resident(l->fd, &y, 1);
}

/* Let the buffer run; it must be done and its context healthy. */
static void late_run(struct late_map *l)
{
	qt_sw_inc(l->tl, 1);
	igt_assert_eq(qgpu_syncobj_wait(l->fd, l->out.handle, 0, TIMEOUT), 0);
	ctx_ok(l->fd, l->ctx);
}

static void late_end(struct late_map *l)
{
	qgpu_syncobj_destroy(l->fd, l->out.handle);
	close(l->tl);
	vcb_free(l->v);
	file_close(l->fd);
}

/*
 * An allocation whose content is known to be zero is zero-filled, not
 * copied, when it moves into VRAM. A DMA buffer queued before the
 * allocation was mapped writable reaches it through the new mapping once
 * it runs, and no later submission comes before the move: what it wrote
 * must survive the move. The buffer waits for a sw_sync fence while the
 * allocation (in system memory) is mapped, runs, and MakeResident then
 * brings the allocation into CPU-visible VRAM, where the CPU reads it.
 */
static void check_queued_write_through_late_mapping_survives_move(void)
{
	const uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
	struct late_map l;
	uint32_t h, *p = NULL, k;
	int ret;

	late_begin(&l);
	/* mapped while the buffer waits; never in VRAM yet */
	igt_assert_eq(qgpu_bo_create(l.fd, SZ_64K, vis, QGPU_GEM_CPU_ACCESS,
				     0, &h), 0);
	late_map(&l, h);
	igt_assert_neq(segment_of(l.fd, h), QGPU_SEG_VISIBLE);
	late_run(&l);
	/* no submission since: the next move into VRAM is the first */
	make_resident(l.fd, &h, 1);
	igt_assert_eq(segment_of(l.fd, h), QGPU_SEG_VISIBLE);
	ret = qgpu_bo_map(l.fd, h, SZ_64K, (void **)&p);
	igt_assert_f(ret == 0, "lock+mmap: %s\n", strerror(-ret));
	for (k = 0; k < SZ_64K / 4 && p[k] == KEEP_PAT; k++)
		;
	igt_assert_f(k == SZ_64K / 4,
		     "word %u reads %#x after the move into VRAM, the DMA buffer queued before the mapping wrote %#x\n",
		     k, p[k], KEEP_PAT);
	igt_assert_eq(qgpu_bo_unmap(l.fd, h, p, SZ_64K), 0);
	late_end(&l);
}

/*
 * A destroy (without AssumeNotInUse) unmaps the allocation from the
 * caller's address space behind the DMA buffers queued before it, and only
 * those: a buffer queued after the destroy (which touches other memory)
 * adds its fence to every allocation still mapped, the destroyed one
 * included, and waiting for it too would keep the mapping, and the memory,
 * for as long as the process kept submitting. The buffer queued before
 * the destroy waits for one sw_sync fence, the one queued after for
 * another, which is signalled only once the mapping is gone.
 */
static void check_destroy_unmap_waits_only_earlier_work(void)
{
	struct drm_qgpu_sync_entry in1 = { 0 }, in2 = { 0 }, out = { 0 };
	struct qgpu_vcb *v1 = vcb_new(), *v2 = vcb_new();
	uint64_t va, vb, m0, m = 0;
	uint32_t c, x, y, i;
	int fd, tl, ret;

	tl = qt_sw_timeline();
	fd = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &c), 0);
	va = reserve(fd, SZ_64K);
	vb = reserve(fd, SZ_64K);
	x = qt_bo(fd, SZ_64K, vram_mask, 0, 0);
	y = qt_bo(fd, SZ_64K, vram_mask, 0, 0);
	vmap(fd, x, va, 0, SZ_64K, 0);
	vmap(fd, y, vb, 0, SZ_64K, 0);
	m0 = vm_info(fd).mapped_bytes;
	in1.handle = qt_sw_syncobj(fd, tl, 1);
	in2.handle = qt_sw_syncobj(fd, tl, 2);
	igt_assert_eq(qgpu_syncobj_create(fd, &out.handle), 0);
	igt_assert_eq(qgpu_vcb_fill(v1, va, SZ_4K, 1), 0);
	ret = qgpu_vcb_submit(fd, c, v1, &in1, 1, NULL, 0);
	igt_assert_f(ret == 0, "submit before the destroy: %s\n",
		     strerror(-ret));
	/* DestroyAllocation2 */
	igt_assert_eq(qgpu_bo_destroy_flags(fd, x, 0), 0);
	igt_assert_eq(qgpu_vcb_fill(v2, vb, SZ_4K, 2), 0);
	ret = qgpu_vcb_submit(fd, c, v2, &in2, 1, &out, 1);
	igt_assert_f(ret == 0, "submit after the destroy: %s\n",
		     strerror(-ret));
	/* the buffer queued before the destroy runs; the later one waits */
	qt_sw_inc(tl, 1);
	for (i = 0; i < 200; i++) {
		m = vm_info(fd).mapped_bytes;
		if (m == m0 - SZ_64K)
			break;
		usleep(50 * 1000);
	}
	qt_sw_inc(tl, 1);
	igt_assert_eq(qgpu_syncobj_wait(fd, out.handle, 0, TIMEOUT), 0);
	ctx_ok(fd, c);
	qgpu_syncobj_destroy(fd, out.handle);
	close(tl);
	vcb_free(v1);
	vcb_free(v2);
	file_close(fd);
	igt_assert_f(m == m0 - SZ_64K,
		     "mapped bytes %llu 10 s after the work queued before the destroy was done (%llu before, the destroyed allocation's 64 KiB still mapped): the unmap waited for a DMA buffer queued after the destroy\n",
		     (unsigned long long)m, (unsigned long long)m0);
}

/*
 * The work queued before a destroy includes a DMA buffer queued before the
 * allocation was mapped: it reaches the allocation through the mapping
 * when it runs, though its fence is not in the allocation. The destroy's
 * deferred unmap waits for it too, so that it runs as queued (its context
 * stays healthy and it writes the allocation, not a fault at an address
 * the process mapped).
 */
static void check_destroy_unmap_waits_for_buffer_before_mapping(void)
{
	struct late_map l;
	uint32_t h;

	late_begin(&l);
	h = qt_bo(l.fd, SZ_64K, vram_mask, 0, 0);
	late_map(&l, h);
	/* DestroyAllocation2 while the buffer still waits */
	igt_assert_eq(qgpu_bo_destroy_flags(l.fd, h, 0), 0);
	usleep(200 * 1000);
	late_run(&l);
	late_end(&l);
}

/*
 * A process's paging fence values signal in order, as fences of one
 * timeline must, even when a request fails part way: a MakeResident whose
 * allocation cannot be made resident (larger than the one segment it
 * allows; the paging fence carries the error) comes after the one before
 * it, which waits for a DMA buffer that uses its allocation (held back by
 * a sw_sync fence). The qgpu_paging_signal tracepoint shows the order
 * they signal in.
 */
static void check_paging_fences_signal_in_order(void)
{
	struct drm_qgpu_sync_entry in = { 0 };
	struct qgpu_vcb *v = vcb_new();
	uint64_t va, f1 = 0, f2 = 0, at1 = 0, at2 = 0, x;
	uint32_t c, a, b, n = 0;
	const char *p;
	char *trace;
	int fd, tl, ret;

	tl = qt_sw_timeline();
	fd = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(fd, &c), 0);
	va = reserve(fd, SZ_64K);
	a = qt_bo(fd, SZ_64K, vram_mask, 0, 0);
	b = qt_bo(fd, props.visible + SZ_64K, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0,
		  0);
	vmap(fd, a, va, 0, SZ_64K, 0);
	/* a DMA buffer that uses a waits */
	in.handle = qt_sw_syncobj(fd, tl, 1);
	igt_assert_eq(qgpu_vcb_fill(v, va, SZ_4K, 3), 0);
	ret = qgpu_vcb_submit(fd, c, v, &in, 1, NULL, 0);
	igt_assert_f(ret == 0, "waiting submit: %s\n", strerror(-ret));
	trace_begin();
	/* a's page-in waits for it; b does not fit */
	igt_assert_eq(qgpu_make_resident(fd, &a, 1, &f1), 0);
	igt_assert_eq(qgpu_make_resident(fd, &b, 1, &f2), 0);
	igt_assert_lte_u64(f1 + 1, f2);
	usleep(100 * 1000);
	qt_sw_inc(tl, 1);
	ret = qgpu_paging_fence_wait(fd, f1, TIMEOUT);
	igt_assert_f(ret == 0, "paging fence %llu: %s\n",
		     (unsigned long long)f1, strerror(-ret));
	/* b's fence carries its error; a wait may report it */
	qgpu_paging_fence_wait(fd, f2, TIMEOUT);
	trace = trace_end();
	for (p = trace; (p = strstr(p, " " EV_SIGNAL ": ")); p++) {
		const char *eol = strchr(p, '\n');
		char line[256];

		snprintf(line, sizeof(line), "%.*s",
			 (int)(eol ? eol - p : (long)strlen(p)), p);
		if (!strstr(line, "signalled=1") || !tfield(line, "fence", &x))
			continue;
		n++;
		if (x == f1 && !at1)
			at1 = n;
		if (x == f2 && !at2)
			at2 = n;
	}
	free(trace);
	ctx_ok(fd, c);
	close(tl);
	vcb_free(v);
	file_close(fd);
	igt_assert_f(at1 && at2,
		     "paging fences %llu and %llu signalled: not both in the trace\n",
		     (unsigned long long)f1, (unsigned long long)f2);
	igt_assert_f(at1 < at2,
		     "paging fence %llu (a request that failed) signalled before %llu (before it on the timeline, waiting for a page-in)\n",
		     (unsigned long long)f2, (unsigned long long)f1);
}

/*
 * The device's TLBs tag a cached translation with the address of its
 * address space's root table (docs/hw-spec.md 15.5). A new address space
 * whose root table lands where a closed file's root was must start with
 * nothing cached: its virtual accesses reach only what it maps itself.
 * The closed file's translation of x (cached by a fill) points at VRAM
 * that another file's allocation holds now; the new file, with nothing
 * mapped, fills x: that must fault, and the other file's content stay.
 */
#define STALE_SEED	0x57a1e0
#define STALE_PAT	0x0badbad0u

static void check_new_root_no_stale_tlb(void)
{
	const uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
	struct drm_qgpu_context_status cs;
	struct qgpu_vcb *v = vcb_new();
	uint64_t base, x, root1;
	uint32_t c1, c3, a, hs[256], n, i, bad = ~0u;
	int f1, f2, f3, ret;

	n = props.visible / SZ_64K;
	igt_require_f(n && n <= ARRAY_SIZE(hs),
		      "CPU-visible VRAM of %llu bytes\n",
		      (unsigned long long)props.visible);
	base = device_page_tables();
	f1 = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(f1, &c1), 0);
	x = reserve(f1, SZ_64K);
	igt_assert_eq(qgpu_bo_create(f1, SZ_64K, vis, 0, 0, &a), 0);
	vmap(f1, a, x, 0, SZ_64K, 0);
	make_resident(f1, &a, 1);
	/* the render engine caches the translation of x */
	igt_assert_eq(qgpu_vcb_fill(v, x, SZ_4K, 0x11111111), 0);
	vrun(f1, c1, v);
	root1 = vm_info(f1).root;
	file_close(f1);
	wait_tables_back(base);

	/* another file takes all CPU-visible VRAM, with content */
	f2 = file_open();
	for (i = 0; i < n; i++) {
		igt_assert_eq(qgpu_bo_create(f2, SZ_64K, vis,
					     QGPU_GEM_CPU_ACCESS, 0, &hs[i]),
			      0);
		ret = qgpu_bo_reside(f2, hs[i], QGPU_RESIDE_MAKE_RESIDENT,
				     QGPU_SEG_VISIBLE, NULL);
		igt_assert_f(ret == 0 || ret == -ENOSPC,
			     "GEM_RESIDE %u: %s\n", i, strerror(-ret));
		cpu_fill(f2, hs[i], 0, SZ_64K, STALE_SEED + i);
	}

	/* a new address space with nothing mapped, at the old root */
	f3 = file_open();
	igt_assert_eq(qgpu_ctx_create_virtual(f3, &c3), 0);
	igt_require_f(vm_info(f3).root == root1,
		      "the new root table is not where the closed one was (%#llx, %#llx)\n",
		      (unsigned long long)vm_info(f3).root,
		      (unsigned long long)root1);
	igt_expect_dmesg("device fault");
	qgpu_vcb_reset(v);
	igt_assert_eq(qgpu_vcb_fill(v, x, SZ_4K, STALE_PAT), 0);
	igt_assert_eq(qgpu_vcb_submit_wait(f3, c3, v, TIMEOUT), 0);
	igt_assert_eq(qgpu_query_context(f3, c3, &cs), 0);
	vcb_free(v);
	for (i = 0; i < n && bad == ~0u; i++) {
		void *p = NULL;

		ret = qgpu_bo_map(f2, hs[i], SZ_64K, &p);
		igt_assert_f(ret == 0, "lock+mmap %u: %s\n", i,
			     strerror(-ret));
		if (qgpu_pattern_check(p, SZ_64K, STALE_SEED + i) >= 0)
			bad = i;
		igt_assert_eq(qgpu_bo_unmap(f2, hs[i], p, SZ_64K), 0);
	}
	file_close(f3);
	file_close(f2);
	igt_assert_f(bad == ~0u,
		     "another file's allocation %u lost its content to a fill at %#llx by an address space that maps nothing there\n",
		     bad, (unsigned long long)x);
	igt_assert_f(cs.state == QGPU_CTX_LOST_FAULT &&
		     cs.fault_reason == QGPU_FAULT_PAGE_NOT_PRESENT &&
		     cs.fault_addr == x,
		     "a fill of an unmapped address: context %s, fault %s at %#llx\n",
		     qgpu_ctx_state_name(cs.state),
		     qgpu_fault_name(cs.fault_reason),
		     (unsigned long long)cs.fault_addr);
}

/*
 * Unmapping (VM_UNMAP, VM_FREE, and closing the file) an allocation whose
 * handles are all closed already: the mapping held the last reference. In
 * a child with its own file, so that a hang there cannot take the rest of
 * the program with it.
 */
static int child_unmap_after_close(void *arg)
{
	uint64_t x, fence;
	uint32_t h[3];
	int fd, i;

	(void)arg;
	fd = open(dev.path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(qgpu_vm_reserve(fd, 0, 4 * SZ_64K, 0, &x) == 0);
	for (i = 0; i < 3; i++) {
		CHECK(qgpu_bo_create(fd, SZ_64K, vram_mask, 0, 0, &h[i]) == 0);
		CHECK(qgpu_vm_map(fd, h[i], x + i * SZ_64K, 0, SZ_64K, 0) == 0);
	}
	CHECK(qgpu_make_resident(fd, h, 3, &fence) == 0);
	CHECK(qgpu_paging_fence_wait(fd, fence, TIMEOUT) == 0);
	for (i = 0; i < 3; i++)
		CHECK(qgpu_bo_destroy(fd, h[i]) == 0);
	CHECK(qgpu_vm_unmap(fd, x, SZ_64K) == 0);
	CHECK(qgpu_vm_free(fd, x, 4 * SZ_64K) == 0);
	/* and the third one, through close() */
	CHECK(qgpu_vm_reserve(fd, 0, SZ_64K, 0, &x) == 0);
	CHECK(qgpu_bo_create(fd, SZ_64K, vram_mask, 0, 0, &h[0]) == 0);
	CHECK(qgpu_vm_map(fd, h[0], x, 0, SZ_64K, 0) == 0);
	CHECK(qgpu_bo_destroy(fd, h[0]) == 0);
	close(fd);
	return 0;
}

static void check_unmap_after_close(void)
{
	struct drm_qgpu_stats st;
	pid_t pid;
	int i, st_child = -1, w;

	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		_exit(child_unmap_after_close(NULL));
	for (i = 0; i < 300; i++) {
		w = waitpid(pid, &st_child, WNOHANG);
		if (w == pid)
			break;
		usleep(100 * 1000);
	}
	igt_assert_f(i < 300,
		     "unmapping allocations whose handles are closed: still blocked after 30 s (left behind: pid %d)\n",
		     (int)pid);
	igt_assert_f(WIFEXITED(st_child) && WEXITSTATUS(st_child) == 0,
		     "child status %#x\n", st_child);
	/* nothing of it left, once the deferred destruction ran */
	for (i = 0; i < 100; i++) {
		qt_stats(dev.fd, &st);
		if (!st.allocations)
			break;
		usleep(50 * 1000);
	}
	igt_assert_eq(st.allocations, 0);
}

igt_main
{
	struct vproc p = { .fd = -1 };

	igt_fixture {
		qt_props_read(&props);
		qt_open(&dev, QGPU_NODE_RENDER);
		signal(SIGPIPE, SIG_IGN);
		igt_require_f(qgpu_dev_has_mmu(&dev),
			      "the device has no GPU MMU (QGPU_INFO_CAP_MMU)\n");
		igt_assert_eq(qgpu_query_mmu(dev.fd, &mmu), 0);
		vram_mask = qt_vram_mask(&dev) | APT;
		vproc_init(&p, dev.fd);
	}

	igt_subtest("mmu-caps-match-contract")
		check_mmu_caps();
	igt_subtest("reserve-lowest-free-64k-aligned")
		check_reserve_lowest();
	igt_subtest("reserve-fixed-and-overlap-eexist")
		check_reserve_fixed();
	igt_subtest("reserve-bad-arguments-einval")
		check_reserve_einval();
	igt_subtest("free-not-a-reservation-enoent")
		check_free_enoent();
	igt_subtest("free-unmaps-later-access-faults")
		check_free_unmaps(&p);
	igt_subtest("map-bad-arguments")
		check_map_einval();
	igt_subtest("map-overlap-eexist")
		check_map_eexist();
	igt_subtest("unmap-partial-keeps-rest")
		check_unmap_partial(&p);
	igt_subtest("layout-shows-reservations-and-mappings")
		check_layout();
	igt_subtest("make-resident-bad-arguments")
		check_make_resident_einval();
	igt_subtest("make-resident-locked-ebusy")
		check_make_resident_ebusy();
	igt_subtest("vm-info-of-a-new-file-has-paging-syncobj")
		check_vm_info_fresh();
	igt_subtest("paging-fence-timeline")
		check_paging_fence();
	igt_subtest("make-resident-vram-zero-filled")
		check_zero_fill(&p);
	igt_subtest("virtual-compute-matches-host")
		check_compute(&p, false);
	igt_subtest("virtual-matches-physical")
		check_compute(&p, true);
	igt_subtest("oversubscription-evicted-still-reachable")
		check_oversubscription(&p, 3);
	igt_subtest("pages-64k-and-4k-mixed")
		check_page_sizes(&p);
	igt_subtest("fault-unmapped-va-loses-one-context")
		check_fault_unmapped(&p);
	igt_subtest("fault-write-read-only")
		check_fault_read_only(&p);
	igt_subtest("isolation-same-va-other-process")
		check_isolation();
	igt_subtest("virtual-submit-rules")
		check_submit_rules(&p);
	igt_subtest("gpummu-scenario-order") {
		qt_find_tracefs();
		igt_require_f(qt_tdir[0], "no tracefs\n");
		check_scenario_order();
	}
	igt_subtest("file-close-releases-page-tables")
		check_close_releases_tables();
	igt_subtest("page-tables-capped-per-process")
		check_page_tables_capped();
	igt_subtest("page-tables-capped-per-user")
		check_page_tables_capped_per_user();
	igt_subtest("roots-capped-per-user")
		check_roots_capped_per_user();
	igt_subtest("mappings-capped-per-process")
		check_mappings_capped();
	igt_subtest("mappings-capped-per-allocation")
		check_mappings_capped_per_allocation(&p);
	igt_subtest("layout-of-an-address-space-at-its-limits")
		check_layout_at_limits();
	igt_subtest("unmap-many-allocations-never-stalls-others")
		check_unmap_many_allocations_short();
	igt_subtest("file-close-keeps-page-tables-for-queued-work")
		check_close_keeps_tables_for_queued_work();
	igt_subtest("file-close-later-mapping-never-reaches-others")
		check_close_later_mapping_never_reaches_others();
	igt_subtest("paging-fences-signal-in-order") {
		qt_find_tracefs();
		igt_require_f(qt_tdir[0], "no tracefs\n");
		check_paging_fences_signal_in_order();
	}
	igt_subtest("destroy-unmap-waits-for-buffer-before-mapping")
		check_destroy_unmap_waits_for_buffer_before_mapping();
	igt_subtest("destroy-unmap-waits-only-earlier-work")
		check_destroy_unmap_waits_only_earlier_work();
	igt_subtest("queued-write-through-late-mapping-survives-move")
		check_queued_write_through_late_mapping_survives_move();
	igt_subtest("new-address-space-never-hits-closed-ones-tlb")
		check_new_root_no_stale_tlb();
	igt_subtest("unmap-behind-queued-work")
		check_unmap_behind_work(&p);
	igt_subtest("unmap-over-many-page-tables")
		check_unmap_many_tables(&p);
	igt_subtest("move-of-an-allocation-mapped-400-times")
		check_move_many_mappings(&p);
	igt_subtest("make-resident-then-submit-at-once")
		run_child(child_make_resident_then_submit, NULL,
			  "MakeResident then submit without waiting");

	igt_subtest("paging-fence-never-waits-for-its-dependants")
		run_child(child_paging_fence_cycle, NULL,
			  "a paging fence as a dependency of a moved allocation's DMA buffer");
	igt_subtest("paging-fence-never-waits-for-its-implicit-dependants")
		run_child(child_paging_fence_cycle, &dev,
			  "a paging fence in a moved allocation's dma-buf");

	igt_fixture {
		files_cleanup();
		vproc_fini(&p);
		qt_assert_no_allocations(dev.fd);
	}

	/* last: a kernel that deadlocks here leaves a process behind */
	igt_subtest("unmap-after-handle-close")
		check_unmap_after_close();

	igt_fixture
		qgpu_close(&dev);
}
