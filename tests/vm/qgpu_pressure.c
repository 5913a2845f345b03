// SPDX-License-Identifier: MIT
/*
 * qgpu_pressure: what the memory manager evicts under pressure and why.
 *
 * - Victim policies: the module parameter's policy at probe, gdsf keeping a
 *   small, often used allocation where lru evicts it, future-use paging
 *   less than lru for a DMA buffer that is split (its patch-location list
 *   is a known future).
 * - SetAllocationPriority (DRM_IOCTL_QGPU_GEM_SET_PRIORITY): under every
 *   policy a low-priority allocation goes first and a high-priority one
 *   last, under GEM_RESIDE and under a submission's pressure; all or
 *   nothing; every bad field's errno.
 * - QueryVideoMemoryInfo (QGPU_QUERY_VIDMEM_INFO): each file's budget and
 *   usage per segment group, the budget from the device-wide policy (the
 *   module parameter, then debugfs), a process over its budget trimmed
 *   before one within it, the query's and the policy file's bad input.
 * - OfferAllocations / ReclaimAllocations (DRM_IOCTL_QGPU_GEM_OFFER,
 *   _RECLAIM): offered allocations are the first victims, discarded
 *   without a copy (lower offer priority first), reclaim says which
 *   survived; without pressure, outside VRAM and when mapped in a GPU
 *   address space the content survives; an offered allocation cannot be
 *   used (submit, residency, Lock2) until reclaimed; every bad field.
 * - Migrating back: allocations that an eviction put in the aperture
 *   segment stay there while VRAM is full (nothing is evicted for them),
 *   and move back to VRAM when room returns and a submit, or MakeResident,
 *   uses them again; counted and measured.
 *
 * Every allocation's content is checked after the moves, by the CPU and
 * by the GPU (QGPU_DMA_CHECKSUM against the host).
 *
 * Arguments: policy=NAME and budget=PERCENT, what the module parameters
 * gave (its group in tests.list loads qgpu.ko with them). Meant for small VRAM, e.g.
 * vram-size=32M visible-vram-size=8M.
 */
#include <glob.h>

#include "qgpu_test.h"

static struct qgpu_dev dev;
static uint32_t ctx;
static char modparam_policy[32];
static unsigned int modparam_budget;

/* ------------------------------------------------------------------------ */
/* debugfs                                                                   */

static const char *debugfs_file(const char *name)
{
	static char path[256];
	char pat[128];
	glob_t g;

	snprintf(pat, sizeof(pat), "/sys/kernel/debug/dri/*/%s", name);
	if (glob(pat, 0, NULL, &g))
		return NULL;
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

static bool write_file(const char *f, const char *s)
{
	bool ok;
	int fd;

	if (!f)
		return false;
	fd = open(f, O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok;
}

static void read_file(const char *f, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	igt_assert(f);
	fd = open(f, O_RDONLY);
	igt_assert_f(fd >= 0, "%s: %s\n", f, strerror(errno));
	n = read(fd, buf, len - 1);
	close(fd);
	igt_assert(n >= 0);
	buf[n] = 0;
}

static void set_policy(const char *name)
{
	igt_assert_f(write_file(debugfs_file("qgpu_policy"), name),
		     "cannot select policy %s\n", name);
}

/* ------------------------------------------------------------------------ */
/* Allocations and their content                                             */

#define VIS QGPU_SEGBIT(QGPU_SEG_VISIBLE)

struct bo {
	uint32_t h;
	uint64_t size;
	uint32_t seed;
	void *map;
};

static uint64_t seg_free(uint32_t id)
{
	struct drm_qgpu_segment_stats ss;

	qt_seg_stats(dev.fd, id, &ss);
	return ss.size - ss.used;
}

/* A CPU-filled allocation that only visible VRAM (or system memory) holds */
static void bo_new(struct bo *b, uint64_t size, uint32_t mask, uint32_t seed)
{
	b->size = size;
	b->seed = seed;
	b->h = qt_bo(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS, 0);
	b->map = qt_map(dev.fd, b->h, size);
	qgpu_pattern_fill(b->map, size, seed);
}

static void bo_free(struct bo *b)
{
	if (b->map)
		qt_unmap(dev.fd, b->h, b->map, b->size);
	if (b->h)
		qt_close(dev.fd, b->h);
	memset(b, 0, sizeof(*b));
}

static uint32_t seg_of(const struct bo *b)
{
	return qt_info(dev.fd, b->h).segment;
}

static void check_cpu(const struct bo *b, const char *what)
{
	qt_check_pattern(b->map, b->size, b->seed, what);
}

static uint32_t host_csum(uint64_t size, uint32_t seed)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		h = (h ^ qgpu_pattern(seed, i)) * QGPU_CSUM_PRIME;
	return h;
}

/* The GPU's checksums of @n allocations, in one DMA buffer */
static void check_gpu(struct bo *b, unsigned int n, const char *what)
{
	uint32_t *res, r, i;
	struct qgpu_cb *cb;

	r = qt_result_buf(dev.fd, 4096, &res);
	cb = qt_cb(&dev);
	for (i = 0; i < n; i++) {
		qgpu_cb_bind_flags(cb, 0, b[i].h, 0, b[i].size, 0);
		qgpu_cb_bind(cb, 1, r, 0, 4096);
		qgpu_cb_checksum(cb, 0, 0, b[i].size, 1, 4 * i);
		qgpu_cb_split_point(cb);
	}
	qt_run(dev.fd, ctx, cb, 60);
	qt_cb_free(cb);
	for (i = 0; i < n; i++)
		igt_assert_f(res[i] == host_csum(b[i].size, b[i].seed),
			     "%s: allocation %u: GPU checksum %#x, host %#x\n",
			     what, i, res[i], host_csum(b[i].size, b[i].seed));
	qt_unmap(dev.fd, r, res, 4096);
	qt_close(dev.fd, r);
}

static void reside(const struct bo *b, uint32_t seg)
{
	qt_reside(dev.fd, b->h, QGPU_RESIDE_MAKE_RESIDENT, seg);
}

static void evict_all(struct bo *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		qt_reside(dev.fd, b[i].h, QGPU_RESIDE_EVICT_SYSTEM, 0);
}

static uint64_t file_bytes_to_vram(void)
{
	struct drm_qgpu_stats st;

	igt_assert_eq(qgpu_query_file_stats(dev.fd, &st), 0);
	return st.bytes_to_vram + st.bytes_filled;
}

/* ------------------------------------------------------------------------ */
/* Policies                                                                  */

/*
 * A small allocation used often, two large ones used once since: lru
 * evicts the small one (the least recently used), gdsf a large one (its
 * frequency credit is worth less per byte). Returns whether the small one
 * stayed in visible VRAM.
 */
static bool small_hot_stays(const char *policy)
{
	uint64_t small = 64 * 1024, big, free;
	struct bo b[4] = {};
	bool stayed;
	int i;

	set_policy(policy);
	free = seg_free(QGPU_SEG_VISIBLE);
	big = ((free - small) / 2) & ~4095ull;
	igt_require(big >= 2 * small);
	bo_new(&b[0], small, VIS, 1);
	bo_new(&b[1], big, VIS, 2);
	bo_new(&b[2], big, VIS, 3);
	bo_new(&b[3], small, VIS, 4);
	reside(&b[0], QGPU_SEG_VISIBLE);
	for (i = 0; i < 20; i++)
		reside(&b[0], QGPU_SEG_VISIBLE);
	reside(&b[1], QGPU_SEG_VISIBLE);
	reside(&b[2], QGPU_SEG_VISIBLE);
	igt_assert_lt(seg_free(QGPU_SEG_VISIBLE), small);
	/* the pressure: one more small allocation */
	reside(&b[3], QGPU_SEG_VISIBLE);
	stayed = seg_of(&b[0]) == QGPU_SEG_VISIBLE;
	igt_info("%s: the small, often used allocation %s\n", policy,
		 stayed ? "stayed" : "was evicted");
	for (i = 0; i < 4; i++)
		check_cpu(&b[i], "after the pressure");
	check_gpu(b, 4, "after the pressure");
	for (i = 0; i < 4; i++)
		bo_free(&b[i]);
	return stayed;
}

/*
 * One DMA buffer reads three allocations in turn, twelve times; visible
 * VRAM holds two of them. Each read is a split point. Returns the bytes
 * paged into VRAM.
 */
static uint64_t cyclic_split(const char *policy, uint32_t *portions)
{
	uint64_t free, size, before;
	struct bo b[3] = {};
	uint32_t *res, r, k;
	struct qgpu_cb *cb;

	set_policy(policy);
	free = seg_free(QGPU_SEG_VISIBLE);
	size = (free * 2 / 5) & ~4095ull;
	for (k = 0; k < 3; k++)
		bo_new(&b[k], size, VIS, 10 + k);
	evict_all(b, 3);
	r = qt_result_buf(dev.fd, 4096, &res);
	cb = qt_cb(&dev);
	for (k = 0; k < 12; k++) {
		qgpu_cb_bind_flags(cb, 0, b[k % 3].h, 0, size, 0);
		qgpu_cb_bind(cb, 1, r, 0, 4096);
		qgpu_cb_checksum(cb, 0, 0, size, 1, 4 * k);
		qgpu_cb_split_point(cb);
	}
	before = file_bytes_to_vram();
	*portions = qt_run(dev.fd, ctx, cb, 120);
	before = file_bytes_to_vram() - before;
	qt_cb_free(cb);
	for (k = 0; k < 12; k++)
		igt_assert_f(res[k] == host_csum(size, 10 + k % 3),
			     "%s: read %u: GPU checksum %#x, host %#x\n",
			     policy, k, res[k], host_csum(size, 10 + k % 3));
	for (k = 0; k < 3; k++)
		check_cpu(&b[k], "after the split buffer");
	qt_unmap(dev.fd, r, res, 4096);
	qt_close(dev.fd, r);
	for (k = 0; k < 3; k++)
		bo_free(&b[k]);
	igt_info("%s: %u portions, %llu MiB paged into VRAM (%llu allocations' worth)\n",
		 policy, *portions, (unsigned long long)(before >> 20),
		 (unsigned long long)(before / size));
	return before;
}

/* ------------------------------------------------------------------------ */
/* Priorities                                                                */

static const char *const policies[] = {
	"lru", "largest", "lowest-offset", "gdsf", "future-use",
	"reuse-interval",
};

static int set_priority(const struct bo *b, uint32_t prio)
{
	return qgpu_bo_set_priority(dev.fd, &b->h, &prio, 1);
}

/*
 * Fill visible VRAM with @n equal allocations, made resident in order
 * (b[0] the least recently used), so that one more evicts something.
 */
static uint64_t fill_visible(struct bo *b, unsigned int n, uint32_t seed)
{
	uint64_t chunk = (seg_free(QGPU_SEG_VISIBLE) / n) & ~4095ull;
	struct drm_qgpu_stats s0, s1;
	unsigned int i;

	igt_require(chunk >= 64 * 1024);
	qt_stats(dev.fd, &s0);
	for (i = 0; i < n; i++) {
		bo_new(&b[i], chunk, VIS, seed + i);
		reside(&b[i], QGPU_SEG_VISIBLE);
	}
	qt_stats(dev.fd, &s1);
	igt_assert_eq_u64(s1.evictions, s0.evictions);
	igt_assert_lt(seg_free(QGPU_SEG_VISIBLE), chunk);
	return chunk;
}

/* Exactly the allocations of @evicted (a bit each) are out of VRAM */
static void assert_evicted(const struct bo *b, unsigned int n,
			   uint32_t evicted, const char *what)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t seg = seg_of(&b[i]);
		bool out = seg != QGPU_SEG_VISIBLE;

		igt_assert_f(out == !!(evicted & (1u << i)),
			     "%s: allocation %u is in segment %u\n", what, i,
			     seg);
	}
}

/* A DMA buffer that writes @b with a constant: its pressure is a submit's */
static void gpu_fill(struct bo *b, uint32_t value)
{
	struct qgpu_cb *cb = qt_cb(&dev);
	uint64_t i;

	qgpu_cb_bind(cb, 0, b->h, 0, b->size);
	qgpu_cb_fill(cb, 0, 0, b->size, value);
	qt_run(dev.fd, ctx, cb, 60);
	qt_cb_free(cb);
	for (i = 0; i < b->size / 4; i++)
		igt_assert_f(((volatile uint32_t *)b->map)[i] == value,
			     "GPU fill: word %llu is %#x\n",
			     (unsigned long long)i,
			     ((volatile uint32_t *)b->map)[i]);
	/* from now on its content is that pattern: a constant */
	b->seed = 0;
}

static void check_all(struct bo *b, unsigned int n, const char *what)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (b[i].seed)
			check_cpu(&b[i], what);
}

/*
 * Under @policy: the most recently used allocation at MINIMUM goes first,
 * the least recently used at MAXIMUM stays; then, under a submission's
 * pressure, one allocation of normal priority goes and the MAXIMUM one
 * still stays.
 */
static void priority_case(const char *policy)
{
	struct bo b[8] = {};
	unsigned int i;

	set_policy(policy);
	fill_visible(b, 6, 100);
	igt_assert_eq(set_priority(&b[0], QGPU_PRIORITY_MAXIMUM), 0);
	igt_assert_eq(set_priority(&b[5], QGPU_PRIORITY_MINIMUM), 0);
	bo_new(&b[6], b[0].size, VIS, 200);
	reside(&b[6], QGPU_SEG_VISIBLE);
	assert_evicted(b, 7, 1u << 5, policy);
	/* a submission's walk needs room for b[7]: one normal one goes */
	bo_new(&b[7], b[0].size, VIS, 0);
	gpu_fill(&b[7], 0x5eed0000u);
	igt_assert_eq(seg_of(&b[0]), QGPU_SEG_VISIBLE);
	igt_assert_eq(seg_of(&b[5]), QGPU_SEG_SYSTEM);
	for (i = 1; i < 7; i++)
		if (i != 5 && seg_of(&b[i]) != QGPU_SEG_VISIBLE)
			break;
	igt_assert_f(i < 7, "%s: no allocation of normal priority went\n",
		     policy);
	igt_info("%s: MINIMUM went first, then allocation %u; MAXIMUM stayed\n",
		 policy, i);
	check_all(b, 8, policy);
	check_gpu(b, 7, policy);
	for (i = 0; i < 8; i++)
		bo_free(&b[i]);
}

/*
 * When no VRAM segment has room, the eviction goes where the policy gives
 * up least: visible VRAM holds V0 (the least recently used of all) and V1,
 * local VRAM L0 and L1, used in the order V0, L0, V1, L1. An allocation
 * that prefers local VRAM but may use both evicts V0 under lru and lands
 * in visible VRAM; L0, more recently used, stays (before, the preferred
 * segment was evicted from first: L0 went, V0 stayed).
 */
static void victim_segment_case(void)
{
	const uint32_t loc = QGPU_SEGBIT(QGPU_SEG_LOCAL);
	struct bo b[5] = {}, moved[3];
	uint64_t cv, cl, size;
	unsigned int i;

	set_policy("lru");
	cv = (seg_free(QGPU_SEG_VISIBLE) / 2) & ~4095ull;
	cl = (seg_free(QGPU_SEG_LOCAL) / 2) & ~4095ull;
	size = cv < cl ? cv : cl;
	igt_require(size >= 256 * 1024);
	bo_new(&b[0], cv, VIS, 400);		/* V0 */
	reside(&b[0], QGPU_SEG_VISIBLE);
	/* local VRAM only: no CPU access (its content stays zero) */
	b[1].size = cl;
	b[1].h = qt_bo(dev.fd, cl, loc, 0, 0);	/* L0 */
	reside(&b[1], QGPU_SEG_LOCAL);
	bo_new(&b[2], cv, VIS, 402);		/* V1 */
	reside(&b[2], QGPU_SEG_VISIBLE);
	b[3].size = cl;
	b[3].h = qt_bo(dev.fd, cl, loc, 0, 0);	/* L1 */
	reside(&b[3], QGPU_SEG_LOCAL);
	igt_assert_lt(seg_free(QGPU_SEG_VISIBLE), size);
	igt_assert_lt(seg_free(QGPU_SEG_LOCAL), size);
	/* prefers local VRAM, may use both (and the aperture, as a
	 * CPU-accessible allocation that local VRAM may hold must)
	 */
	b[4].size = size;
	b[4].seed = 404;
	b[4].h = qt_bo(dev.fd, size, VIS | loc | QGPU_SEGBIT(QGPU_SEG_APERTURE),
		       QGPU_GEM_CPU_ACCESS, QGPU_SEG_LOCAL);
	b[4].map = qt_map(dev.fd, b[4].h, size);
	qgpu_pattern_fill(b[4].map, size, 404);
	reside(&b[4], 0);
	igt_info("V0 in segment %u, L0 in %u, the new one in %u\n",
		 seg_of(&b[0]), seg_of(&b[1]), seg_of(&b[4]));
	igt_assert_f(seg_of(&b[0]) != QGPU_SEG_VISIBLE,
		     "the least recently used allocation (visible VRAM) stayed\n");
	igt_assert_eq(seg_of(&b[1]), QGPU_SEG_LOCAL);
	igt_assert_eq(seg_of(&b[2]), QGPU_SEG_VISIBLE);
	igt_assert_eq(seg_of(&b[3]), QGPU_SEG_LOCAL);
	igt_assert_eq(seg_of(&b[4]), QGPU_SEG_VISIBLE);
	check_all(b, 5, "after the eviction");
	/* the three with content, through the GPU: V0, V1, the new one */
	moved[0] = b[0];
	moved[1] = b[2];
	moved[2] = b[4];
	check_gpu(moved, 3, "after the eviction");
	for (i = 0; i < 5; i++)
		bo_free(&b[i]);
}

/* ------------------------------------------------------------------------ */
/* Budgets                                                                   */

static void vidmem(int fd, uint32_t group, struct drm_qgpu_vidmem_info *vi)
{
	igt_assert_eq(qgpu_query_vidmem(fd, group, vi), 0);
}

static unsigned int get_budget(void)
{
	char buf[32];

	read_file(debugfs_file("qgpu_budget"), buf, sizeof(buf));
	return strtoul(buf, NULL, 10);
}

static void set_budget(unsigned int pct)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", pct);
	igt_assert_f(write_file(debugfs_file("qgpu_budget"), buf),
		     "cannot set the budget to %u%%\n", pct);
	igt_assert_eq(get_budget(), pct);
}

/* A CPU-filled allocation of @fd in visible VRAM */
static void fd_bo(int fd, struct bo *b, uint64_t size, uint32_t seed)
{
	b->size = size;
	b->seed = seed;
	b->h = qt_bo(fd, size, VIS, QGPU_GEM_CPU_ACCESS, 0);
	b->map = qt_map(fd, b->h, size);
	qgpu_pattern_fill(b->map, size, seed);
	qt_reside(fd, b->h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
}

static void fd_bo_free(int fd, struct bo *b)
{
	qt_unmap(fd, b->h, b->map, b->size);
	qt_close(fd, b->h);
	memset(b, 0, sizeof(*b));
}

static uint32_t fd_seg(int fd, const struct bo *b)
{
	return qt_info(fd, b->h).segment;
}

/*
 * Two processes fill visible VRAM, @b's first (the least recently used),
 * then @a's, over its budget when the budget is small. One more
 * allocation of @b's: returns whether @a was trimmed (and @b's oldest
 * stayed).
 */
static bool trimmed_first(unsigned int pct)
{
	struct drm_qgpu_vidmem_info va0, va1, vb0, vb1;
	uint64_t chunk = 1 * MiB;
	struct bo a[8] = {}, b[3] = {};
	unsigned int na, i;
	bool trimmed;
	int fa, fb;

	set_budget(pct);
	fa = qt_reopen(&dev);
	fb = qt_reopen(&dev);
	fd_bo(fb, &b[0], chunk, 500);
	fd_bo(fb, &b[1], chunk, 501);
	na = seg_free(QGPU_SEG_VISIBLE) / chunk;
	igt_require(na >= 4 && na <= 8);
	for (i = 0; i < na; i++)
		fd_bo(fa, &a[i], chunk, 510 + i);
	vidmem(fa, QGPU_SEGMENT_GROUP_LOCAL, &va0);
	vidmem(fb, QGPU_SEGMENT_GROUP_LOCAL, &vb0);
	igt_assert_eq_u64(va0.current_usage, na * chunk);
	igt_assert_eq_u64(vb0.current_usage, 2 * chunk);
	igt_info("budget %u%%: %llu KiB each; a uses %llu KiB, b %llu KiB\n",
		 pct, (unsigned long long)va0.budget >> 10,
		 (unsigned long long)va0.current_usage >> 10,
		 (unsigned long long)vb0.current_usage >> 10);
	/* the pressure: b needs one more */
	fd_bo(fb, &b[2], chunk, 502);
	vidmem(fa, QGPU_SEGMENT_GROUP_LOCAL, &va1);
	vidmem(fb, QGPU_SEGMENT_GROUP_LOCAL, &vb1);
	trimmed = fd_seg(fa, &a[0]) == QGPU_SEG_SYSTEM;
	if (trimmed) {
		/* a's least recently used went, b's stayed */
		igt_assert_eq(fd_seg(fb, &b[0]), QGPU_SEG_VISIBLE);
		igt_assert_eq_u64(va1.trimmed_bytes - va0.trimmed_bytes, chunk);
		igt_assert_eq_u64(va1.current_usage, (na - 1) * chunk);
	} else {
		/* within budget: plain lru, b's oldest */
		igt_assert_eq(fd_seg(fb, &b[0]), QGPU_SEG_SYSTEM);
		igt_assert_eq_u64(va1.trimmed_bytes, va0.trimmed_bytes);
		igt_assert_eq_u64(vb1.current_usage, 2 * chunk);
	}
	igt_assert_eq_u64(vb1.trimmed_bytes, vb0.trimmed_bytes);
	for (i = 0; i < na; i++)
		check_cpu(&a[i], "a, after the pressure");
	for (i = 0; i < 3; i++)
		check_cpu(&b[i], "b, after the pressure");
	for (i = 0; i < na; i++)
		fd_bo_free(fa, &a[i]);
	for (i = 0; i < 3; i++)
		fd_bo_free(fb, &b[i]);
	vidmem(fa, QGPU_SEGMENT_GROUP_LOCAL, &va1);
	igt_assert_eq_u64(va1.current_usage, 0);
	close(fa);
	close(fb);
	return trimmed;
}

/* ------------------------------------------------------------------------ */
/* Offers                                                                    */

static int offer(const struct bo *b, uint32_t prio)
{
	return qgpu_bo_offer(dev.fd, &b->h, 1, prio);
}

/* Reclaim one: its QGPU_RECLAIM_* result */
static uint32_t reclaim(const struct bo *b)
{
	uint32_t r = 0xdead, n = 0xdead;

	igt_assert_eq(qgpu_bo_reclaim(dev.fd, &b->h, 1, &r, &n), 0);
	igt_assert_eq(n, r == QGPU_RECLAIM_DISCARDED);
	return r;
}

/* A discarded allocation is valid: rewrite it and the GPU sees that */
static void rewrite(struct bo *b, uint32_t seed)
{
	b->seed = seed;
	qgpu_pattern_fill(b->map, b->size, seed);
}

static int raw_ioctl(unsigned long nr, void *arg)
{
	return igt_ioctl(dev.fd, nr, arg) ? -errno : 0;
}

/* ------------------------------------------------------------------------ */
/* Migrating back                                                            */

#define VIS_APT (VIS | QGPU_SEGBIT(QGPU_SEG_APERTURE))

/* Wait (up to 10 s) until visible VRAM has @bytes free: deferred frees */
static void wait_free(uint64_t bytes)
{
	int i;

	for (i = 0; i < 1000 && seg_free(QGPU_SEG_VISIBLE) < bytes; i++)
		usleep(10000);
	igt_assert_lte(bytes, seg_free(QGPU_SEG_VISIBLE));
}

static unsigned int count_in(const struct bo *b, unsigned int n, uint32_t seg)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		k += seg_of(&b[i]) == seg;
	return k;
}

/*
 * @n allocations that prefer visible VRAM and may go to the aperture fill
 * visible VRAM; a hog of three of their size evicts some to the aperture.
 * Returns how many went there.
 */
static unsigned int evict_to_aperture(struct bo *a, unsigned int n,
				      struct bo *hog, bool virtual_model)
{
	uint64_t chunk = (seg_free(QGPU_SEG_VISIBLE) / n) & ~4095ull;
	unsigned int i, out;

	for (i = 0; i < n; i++)
		bo_new(&a[i], chunk, VIS_APT, 800 + i);
	if (!virtual_model)
		check_gpu(a, n, "placed by a submit");
	igt_assert_eq(count_in(a, n, QGPU_SEG_VISIBLE), n);
	bo_new(hog, 3 * chunk, VIS, 850);
	reside(hog, QGPU_SEG_VISIBLE);
	out = count_in(a, n, QGPU_SEG_APERTURE);
	igt_assert_lte(3, out);
	igt_assert_eq(count_in(a, n, QGPU_SEG_VISIBLE), n - out);
	return out;
}

/* policy=NAME from the command line (tests.list passes it) */
static void args_read(void)
{
	char buf[4096], *s;
	ssize_t n;
	int fd;

	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	for (s = buf; s < buf + n; s += strlen(s) + 1) {
		if (!strncmp(s, "policy=", 7))
			snprintf(modparam_policy, sizeof(modparam_policy),
				 "%s", s + 7);
		if (!strncmp(s, "budget=", 7))
			modparam_budget = strtoul(s + 7, NULL, 0);
	}
}

igt_main
{
	igt_fixture {
		args_read();
		qt_open(&dev, QGPU_NODE_RENDER);
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("policy-from-module-parameter") {
		char buf[256], want[64];

		igt_require_f(modparam_policy[0], "no policy= argument\n");
		igt_require(debugfs_file("qgpu_policy"));
		read_file("/sys/module/qgpu/parameters/policy", buf,
			  sizeof(buf));
		igt_assert_f(!strncmp(buf, modparam_policy,
				      strlen(modparam_policy)),
			     "module parameter says %s\n", buf);
		/* the device started with it */
		read_file(debugfs_file("qgpu_policy"), buf, sizeof(buf));
		snprintf(want, sizeof(want), "[%s]", modparam_policy);
		igt_assert_f(strstr(buf, want), "debugfs says %s\n", buf);
	}

	igt_subtest("policy-file-bad-input") {
		const char *bad[] = { "6", "lru2", "-1", "", "gdsf future-use",
				      "0x100", "99999999999" };
		char buf[256];
		unsigned int i;

		igt_require(debugfs_file("qgpu_policy"));
		set_policy("gdsf");
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			igt_assert_f(!write_file(debugfs_file("qgpu_policy"),
						 bad[i]),
				     "policy \"%s\" was taken\n", bad[i]);
		read_file(debugfs_file("qgpu_policy"), buf, sizeof(buf));
		igt_assert_f(strstr(buf, "[gdsf]"), "policy now: %s\n", buf);
		set_policy("4\n");
		read_file(debugfs_file("qgpu_policy"), buf, sizeof(buf));
		igt_assert_f(strstr(buf, "[future-use]"), "policy now: %s\n",
			     buf);
	}

	igt_subtest("gdsf-keeps-small-hot-allocation") {
		igt_require(debugfs_file("qgpu_policy"));
		igt_assert(!small_hot_stays("lru"));
		igt_assert(small_hot_stays("gdsf"));
	}

	igt_subtest("future-use-pages-less-than-lru") {
		uint32_t p_lru, p_fu;
		uint64_t lru, fu;

		igt_require(debugfs_file("qgpu_policy"));
		lru = cyclic_split("lru", &p_lru);
		fu = cyclic_split("future-use", &p_fu);
		igt_assert_f(fu < lru,
			     "future-use paged %llu bytes, lru %llu\n",
			     (unsigned long long)fu, (unsigned long long)lru);
		igt_assert_lte(p_fu, p_lru);
	}

	igt_subtest("priority-orders-victims-under-every-policy") {
		unsigned int i;

		igt_require(debugfs_file("qgpu_policy"));
		for (i = 0; i < ARRAY_SIZE(policies); i++)
			priority_case(policies[i]);
		set_policy("lru");
	}

	igt_subtest("eviction-in-the-segment-the-policy-gives-up-least") {
		igt_require(debugfs_file("qgpu_policy"));
		igt_require(qt_seg_usable(&dev, QGPU_SEG_LOCAL));
		victim_segment_case();
	}

	igt_subtest("priority-all-or-nothing") {
		uint32_t h[2], p[2];
		struct bo b[7] = {};
		unsigned int i;

		igt_require(debugfs_file("qgpu_policy"));
		set_policy("lru");
		fill_visible(b, 6, 300);
		/* b[0] would go first; failing calls must not protect it */
		h[0] = b[0].h;
		p[0] = QGPU_PRIORITY_MAXIMUM;
		h[1] = b[1].h;
		p[1] = QGPU_PRIORITY_MAXIMUM + 1;
		igt_assert_eq(qgpu_bo_set_priority(dev.fd, h, p, 2), -EINVAL);
		p[1] = QGPU_PRIORITY_MAXIMUM;
		h[1] = 0xdead;
		igt_assert_eq(qgpu_bo_set_priority(dev.fd, h, p, 2), -ENOENT);
		bo_new(&b[6], b[0].size, VIS, 306);
		reside(&b[6], QGPU_SEG_VISIBLE);
		assert_evicted(b, 7, 1u << 0, "after refused calls");
		/* a handle listed twice takes its last entry */
		h[1] = b[1].h;
		h[0] = b[1].h;
		p[0] = QGPU_PRIORITY_MINIMUM;
		p[1] = QGPU_PRIORITY_MAXIMUM;
		igt_assert_eq(qgpu_bo_set_priority(dev.fd, h, p, 2), 0);
		reside(&b[0], QGPU_SEG_VISIBLE);
		assert_evicted(b, 7, 1u << 2, "b[1] listed twice, MAXIMUM last");
		check_all(b, 7, "all or nothing");
		for (i = 0; i < 7; i++)
			bo_free(&b[i]);
	}

	igt_subtest("priority-bad-input") {
		struct drm_qgpu_gem_set_priority a;
		static uint32_t hh[QGPU_MAX_PRIORITY_HANDLES];
		static uint32_t many[QGPU_MAX_PRIORITY_HANDLES];
		uint32_t h, real, p = QGPU_PRIORITY_HIGH;
		const uint32_t bad_prio[] = {
			0, 1, QGPU_PRIORITY_MINIMUM - 1, QGPU_PRIORITY_MAXIMUM + 1,
			0xffffffffu,
		};
		void *hole;
		unsigned int i;

		real = h = qt_bo(dev.fd, 4096, VIS, 0, 0);
		hole = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		igt_assert(hole != MAP_FAILED);
		munmap((char *)hole + 4096, 4096);
#define SETP(field, value, err) do { \
		memset(&a, 0, sizeof(a)); \
		a.handles = (uintptr_t)&h; \
		a.priorities = (uintptr_t)&p; \
		a.count = 1; \
		a.field = value; \
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_GEM_SET_PRIORITY, \
					&a) ? -errno : 0, err); \
	} while (0)
		SETP(flags, 0, 0);
		SETP(flags, 1, -EINVAL);
		SETP(flags, 0x80000000u, -EINVAL);
		SETP(count, 0, -EINVAL);
		SETP(count, QGPU_MAX_PRIORITY_HANDLES + 1, -EINVAL);
		SETP(count, 0xffffffffu, -EINVAL);
		SETP(handles, 0, -EFAULT);
		SETP(handles, (uintptr_t)hole + 4096, -EFAULT);
		SETP(priorities, 0, -EFAULT);
		SETP(priorities, (uintptr_t)hole + 4096, -EFAULT);
		/* an array that runs into unmapped memory */
		*(uint32_t *)((char *)hole + 4092) = h;
		SETP(handles, (uintptr_t)hole + 4092, 0);
		memset(&a, 0, sizeof(a));
		for (i = 0; i < 2; i++)
			many[i] = QGPU_PRIORITY_NORMAL;
		a.handles = (uintptr_t)hole + 4092;
		a.priorities = (uintptr_t)many;
		a.count = 2;
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_GEM_SET_PRIORITY,
					&a) ? -errno : 0, -EFAULT);
		for (i = 0; i < ARRAY_SIZE(bad_prio); i++) {
			p = bad_prio[i];
			SETP(flags, 0, -EINVAL);
		}
		p = QGPU_PRIORITY_MINIMUM;
		SETP(flags, 0, 0);
		p = QGPU_PRIORITY_MAXIMUM;
		SETP(flags, 0, 0);
		p = QGPU_PRIORITY_LOW;
		h = 0;
		SETP(flags, 0, -ENOENT);
		h = 0x7fffffff;
		SETP(flags, 0, -ENOENT);
		munmap(hole, 4096);
		/* the most entries, every one the same handle */
		for (i = 0; i < QGPU_MAX_PRIORITY_HANDLES; i++) {
			hh[i] = real;
			many[i] = QGPU_PRIORITY_MINIMUM + i;
		}
		igt_assert_eq(qgpu_bo_set_priority(dev.fd, hh, many,
						   QGPU_MAX_PRIORITY_HANDLES),
			      0);
		qt_close(dev.fd, real);
#undef SETP
	}

	igt_subtest("vidmem-info-query") {
		struct drm_qgpu_vidmem_info vi[3];
		struct drm_qgpu_query q;
		uint64_t local = qt_seg_usable(&dev, QGPU_SEG_VISIBLE) +
				 qt_seg_usable(&dev, QGPU_SEG_LOCAL);
		uint64_t nonlocal = qt_seg_usable(&dev, QGPU_SEG_APERTURE);
		unsigned int pct = debugfs_file("qgpu_budget") ?
				   get_budget() : 100;
		uint32_t g;

		/* two-call pattern: two groups */
		memset(&q, 0, sizeof(q));
		q.type = QGPU_QUERY_VIDMEM_INFO;
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q), 0);
		igt_assert_eq(q.count, 2);
		igt_assert_eq(q.size, 2 * sizeof(vi[0]));
		memset(vi, 0xa5, sizeof(vi));
		q.ptr = (uintptr_t)vi;
		q.size = sizeof(vi);
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q), 0);
		igt_assert_eq(q.size, 2 * sizeof(vi[0]));
		/* nothing beyond the answer is written */
		igt_assert_eq(vi[2].group, 0xa5a5a5a5u);
		for (g = 0; g < 2; g++) {
			uint64_t size = g ? nonlocal : local;

			igt_assert_eq(vi[g].group, g);
			igt_assert_eq(vi[g].pad, 0);
			igt_assert_eq_u64(vi[g].size, size);
			igt_assert_eq_u64(vi[g].budget,
					  (size * pct / 100) & ~4095ull);
			igt_assert_eq_u64(vi[g].current_usage, 0);
		}
	}

	igt_subtest("vidmem-info-bad-input") {
		struct drm_qgpu_vidmem_info vi[2];
		struct drm_qgpu_query q;

		memset(&q, 0, sizeof(q));
		q.type = QGPU_QUERY_VIDMEM_INFO;
		q.arg = 1;
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q) ?
			      -errno : 0, -EINVAL);
		q.arg = QGPU_SEGMENT_GROUP_NON_LOCAL;
		q.ptr = (uintptr_t)vi;
		q.size = sizeof(vi);
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q) ?
			      -errno : 0, -EINVAL);
		q.arg = 0;
		q.size = sizeof(vi) - 1;
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q) ?
			      -errno : 0, -ENOSPC);
		igt_assert_eq(q.size, sizeof(vi));
		q.ptr = 8;
		igt_assert_eq(igt_ioctl(dev.fd, DRM_IOCTL_QGPU_QUERY, &q) ?
			      -errno : 0, -EFAULT);
	}

	igt_subtest("vidmem-usage-per-process") {
		struct drm_qgpu_vidmem_info l, n, l0;
		struct bo x = {}, y = {};
		uint32_t imported;
		int f2 = qt_reopen(&dev), dmabuf;

		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l0);
		/* f2's allocation in visible VRAM counts for f2 alone */
		fd_bo(f2, &x, 2 * MiB, 600);
		vidmem(f2, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.current_usage, 2 * MiB);
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.current_usage, l0.current_usage);
		/* one in the aperture counts as non-local */
		y.size = 1 * MiB;
		y.h = qt_bo(f2, y.size, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		qt_reside(f2, y.h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
		vidmem(f2, QGPU_SEGMENT_GROUP_NON_LOCAL, &n);
		igt_assert_eq_u64(n.current_usage, 1 * MiB);
		/* shared with this file: still f2's, whoever moves it */
		igt_assert_eq(drmPrimeHandleToFD(f2, x.h, DRM_CLOEXEC, &dmabuf),
			      0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, dmabuf, &imported), 0);
		close(dmabuf);
		qt_reside(dev.fd, imported, QGPU_RESIDE_EVICT_SYSTEM, 0);
		vidmem(f2, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.current_usage, 0);
		qt_reside(dev.fd, imported, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		vidmem(f2, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.current_usage, 2 * MiB);
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.current_usage, l0.current_usage);
		qt_check_pattern(x.map, x.size, x.seed, "shared, moved");
		/* the creator goes first: the allocation lives on */
		qt_unmap(f2, x.h, x.map, x.size);
		qt_untrack(f2, x.h, NULL);
		qt_untrack(f2, y.h, NULL);
		close(f2);
		qt_reside(dev.fd, imported, QGPU_RESIDE_EVICT_SYSTEM, 0);
		qt_reside(dev.fd, imported, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		qgpu_bo_destroy(dev.fd, imported);
	}

	igt_subtest("page-tables-count-in-usage") {
		struct drm_qgpu_vidmem_info l0, l1, l2;
		struct drm_qgpu_vm_info vi;
		struct drm_qgpu_mmu_info m;
		int f2 = qt_reopen(&dev);
		uint64_t va = 0;
		uint32_t h;

		igt_require(qgpu_query_mmu(f2, &m) == 0);
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l2);
		vidmem(f2, QGPU_SEGMENT_GROUP_LOCAL, &l0);
		igt_assert_eq_u64(l0.current_usage, 0);
		/* never resident: only the tables are in VRAM */
		h = qt_bo(f2, 4096, VIS, 0, 0);
		igt_assert_eq(qgpu_vm_reserve(f2, 0, 8 * MiB, 0, &va), 0);
		igt_assert_eq(qgpu_vm_map(f2, h, va, 0, 4096, 0), 0);
		igt_assert_eq(qgpu_vm_map(f2, h, va + 4 * MiB, 0, 4096, 0), 0);
		igt_assert_eq(qgpu_query_vm_info(f2, &vi), 0);
		/* a root, a level-1 table and a leaf per 2 MiB at least */
		igt_assert_lte_u64(4, vi.page_tables);
		vidmem(f2, QGPU_SEGMENT_GROUP_LOCAL, &l1);
		igt_assert_eq_u64(l1.current_usage, vi.page_table_bytes);
		/* nobody else's: this file's usage is what it was */
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l0);
		igt_assert_eq_u64(l0.current_usage, l2.current_usage);
		qt_close(f2, h);
		close(f2);
	}

	igt_subtest("budget-from-module-parameter-and-debugfs") {
		const char *bad[] = { "0", "101", "-1", "50%", "", "abc",
				      "4294967296" };
		struct drm_qgpu_vidmem_info l;
		char buf[64];
		unsigned int i;

		igt_require(debugfs_file("qgpu_budget"));
		read_file("/sys/module/qgpu/parameters/budget", buf,
			  sizeof(buf));
		if (modparam_budget) {
			igt_assert_eq(strtoul(buf, NULL, 10), modparam_budget);
			igt_assert_eq(get_budget(), modparam_budget);
		}
		set_budget(50);
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.budget, (l.size / 2) & ~4095ull);
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			igt_assert_f(!write_file(debugfs_file("qgpu_budget"),
						 bad[i]),
				     "budget \"%s\" was taken\n", bad[i]);
		igt_assert_eq(get_budget(), 50);
		set_budget(100);
		vidmem(dev.fd, QGPU_SEGMENT_GROUP_LOCAL, &l);
		igt_assert_eq_u64(l.budget, l.size & ~4095ull);
	}

	igt_subtest("over-budget-trimmed-first") {
		igt_require(debugfs_file("qgpu_budget") &&
			    debugfs_file("qgpu_policy"));
		set_policy("lru");
		/* within budget: lru takes the other process's oldest */
		igt_assert(!trimmed_first(100));
		/* a over a 10% budget: a's allocations go first */
		igt_assert(trimmed_first(10));
		set_budget(modparam_budget ? modparam_budget : 100);
	}

	igt_subtest("offer-reclaim-without-pressure") {
		struct drm_qgpu_stats s0, s1;
		struct bo b = {};

		bo_new(&b, 1 * MiB, VIS, 700);
		reside(&b, QGPU_SEG_VISIBLE);
		qt_stats(dev.fd, &s0);
		igt_assert_eq(offer(&b, QGPU_OFFER_PRIORITY_NORMAL), 0);
		/* nothing moves at the offer */
		igt_assert_eq(seg_of(&b), QGPU_SEG_VISIBLE);
		igt_assert_eq(reclaim(&b), QGPU_RECLAIM_OK);
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.offer_discards, s0.offer_discards);
		igt_assert_eq_u64(s1.evictions, s0.evictions);
		check_cpu(&b, "reclaimed");
		check_gpu(&b, 1, "reclaimed");
		bo_free(&b);
	}

	igt_subtest("offered-discarded-first-under-pressure") {
		struct drm_qgpu_stats s0, s1;
		struct bo b[8] = {};
		uint32_t h[2], r[2], n;
		unsigned int i;

		igt_require(debugfs_file("qgpu_policy"));
		set_policy("lru");
		fill_visible(b, 6, 710);
		/*
		 * lru would take b[0]: the offered ones go first, LOW before
		 * HIGH, whatever their allocation priority
		 */
		igt_assert_eq(offer(&b[3], QGPU_OFFER_PRIORITY_HIGH), 0);
		igt_assert_eq(offer(&b[4], QGPU_OFFER_PRIORITY_LOW), 0);
		igt_assert_eq(set_priority(&b[4], QGPU_PRIORITY_MAXIMUM), 0);
		qt_stats(dev.fd, &s0);
		bo_new(&b[6], b[0].size, VIS, 716);
		reside(&b[6], QGPU_SEG_VISIBLE);
		qt_stats(dev.fd, &s1);
		assert_evicted(b, 7, 1u << 4, "one allocation's room");
		/* discarded: counted, and not copied out */
		igt_assert_eq_u64(s1.offer_discards - s0.offer_discards, 1);
		igt_assert_eq_u64(s1.offer_discarded_bytes -
				  s0.offer_discarded_bytes, b[0].size);
		igt_assert_eq_u64(s1.evictions - s0.evictions, 1);
		igt_assert_eq_u64(s1.bytes_from_vram, s0.bytes_from_vram);
		/* the next victim is the other offered one, not b[0] */
		bo_new(&b[7], b[0].size, VIS, 717);
		reside(&b[7], QGPU_SEG_VISIBLE);
		assert_evicted(b, 8, 1u << 3 | 1u << 4, "two allocations' room");
		/* reclaim says which: both; the rest kept their bytes */
		h[0] = b[3].h;
		h[1] = b[4].h;
		r[0] = r[1] = 0xdead;
		igt_assert_eq(qgpu_bo_reclaim(dev.fd, h, 2, r, &n), 0);
		igt_assert_eq(r[0], QGPU_RECLAIM_DISCARDED);
		igt_assert_eq(r[1], QGPU_RECLAIM_DISCARDED);
		igt_assert_eq(n, 2);
		for (i = 0; i < 8; i++)
			if (i != 3 && i != 4)
				check_cpu(&b[i], "not offered");
		/* valid allocations: rewritten, they work as any other */
		rewrite(&b[3], 723);
		rewrite(&b[4], 724);
		check_gpu(b, 8, "after the reclaim");
		for (i = 0; i < 8; i++)
			bo_free(&b[i]);
	}

	igt_subtest("offered-content-survives-outside-vram") {
		struct bo sys = {}, apt = {}, ev = {};
		struct drm_qgpu_stats s0, s1;

		/* never resident: its pages hold it */
		bo_new(&sys, 256 * 1024, VIS, 730);
		igt_assert_eq(offer(&sys, QGPU_OFFER_PRIORITY_LOW), 0);
		/* in the aperture: its pages hold it, eviction copies nothing */
		bo_new(&apt, 256 * 1024, QGPU_SEGBIT(QGPU_SEG_APERTURE), 731);
		reside(&apt, QGPU_SEG_APERTURE);
		igt_assert_eq(offer(&apt, QGPU_OFFER_PRIORITY_LOW), 0);
		qt_reside(dev.fd, apt.h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		/* evicted from VRAM on request: discarded */
		bo_new(&ev, 256 * 1024, VIS, 732);
		reside(&ev, QGPU_SEG_VISIBLE);
		igt_assert_eq(offer(&ev, QGPU_OFFER_PRIORITY_HIGH), 0);
		qt_stats(dev.fd, &s0);
		qt_reside(dev.fd, ev.h, QGPU_RESIDE_EVICT, 0);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(seg_of(&ev), QGPU_SEG_SYSTEM);
		igt_assert_eq_u64(s1.offer_discards - s0.offer_discards, 1);
		igt_assert_eq(reclaim(&sys), QGPU_RECLAIM_OK);
		igt_assert_eq(reclaim(&apt), QGPU_RECLAIM_OK);
		igt_assert_eq(reclaim(&ev), QGPU_RECLAIM_DISCARDED);
		check_cpu(&sys, "offered in system memory");
		check_cpu(&apt, "offered in the aperture");
		rewrite(&ev, 733);
		check_gpu(&sys, 1, "offered in system memory");
		check_gpu(&apt, 1, "offered in the aperture");
		check_gpu(&ev, 1, "rewritten after the discard");
		bo_free(&sys);
		bo_free(&apt);
		bo_free(&ev);
	}

	igt_subtest("offered-gpu-mapped-moves-with-content") {
		struct drm_qgpu_stats s0, s1;
		uint64_t va, fence = 0;
		struct bo b = {};

		igt_require(qgpu_dev_has_mmu(&dev));
		bo_new(&b, 1 * MiB, VIS, 740);
		igt_assert_eq(qgpu_vm_reserve(dev.fd, 0, 1 * MiB, 0, &va), 0);
		igt_assert_eq(qgpu_vm_map(dev.fd, b.h, va, 0, 1 * MiB, 0), 0);
		igt_assert_eq(qgpu_make_resident(dev.fd, &b.h, 1, &fence), 0);
		igt_assert_eq(qgpu_paging_fence_wait(dev.fd, fence, 10 * SEC_NS),
			      0);
		igt_assert_eq(offer(&b, QGPU_OFFER_PRIORITY_LOW), 0);
		qt_stats(dev.fd, &s0);
		qt_reside(dev.fd, b.h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.offer_discards, s0.offer_discards);
		igt_assert_eq(reclaim(&b), QGPU_RECLAIM_OK);
		check_cpu(&b, "offered, mapped in a GPU address space");
		igt_assert_eq(qgpu_vm_free(dev.fd, va, 1 * MiB), 0);
		bo_free(&b);
	}

	igt_subtest("offered-not-usable-until-reclaimed") {
		struct drm_qgpu_stats s0, s1;
		struct drm_qgpu_gem_lock lk;
		struct qgpu_cb *cb;
		uint32_t portions;
		struct bo b = {};

		bo_new(&b, 64 * 1024, VIS, 750);
		igt_assert_eq(offer(&b, QGPU_OFFER_PRIORITY_NORMAL), 0);
		/* a submit that lists it: refused, nothing ran */
		qt_stats(dev.fd, &s0);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, b.h, 0, b.size);
		qgpu_cb_fill(cb, 0, 0, b.size, 0x12345678);
		igt_assert_eq(qgpu_submit_wait(dev.fd, ctx, cb, 10 * SEC_NS,
					       &portions), -EINVAL);
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.submissions, s0.submissions);
		check_cpu(&b, "a refused submit");
		/* residency and Lock2: refused; eviction is fine */
		igt_assert_eq(qgpu_bo_reside(dev.fd, b.h,
					     QGPU_RESIDE_MAKE_RESIDENT, 0,
					     NULL), -EINVAL);
		igt_assert_eq(qgpu_bo_reside(dev.fd, b.h,
					     QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -EINVAL);
		igt_assert_eq(qgpu_bo_reside(dev.fd, b.h, QGPU_RESIDE_EVICT, 0,
					     NULL), 0);
		memset(&lk, 0, sizeof(lk));
		lk.handle = b.h;
		igt_assert_eq(raw_ioctl(DRM_IOCTL_QGPU_GEM_LOCK, &lk), -EINVAL);
		if (qgpu_dev_has_mmu(&dev))
			igt_assert_eq(qgpu_make_resident(dev.fd, &b.h, 1, NULL),
				      -EINVAL);
		/* the mapping made before still works */
		check_cpu(&b, "mapped before the offer");
		/* reclaimed, all of it works again */
		igt_assert_eq(reclaim(&b), QGPU_RECLAIM_OK);
		qt_run(dev.fd, ctx, cb, 30);
		qt_cb_free(cb);
		igt_assert_eq(((volatile uint32_t *)b.map)[0], 0x12345678u);
		reside(&b, QGPU_SEG_VISIBLE);
		igt_assert_eq(raw_ioctl(DRM_IOCTL_QGPU_GEM_LOCK, &lk), 0);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, b.h), 0);
		b.seed = 0;
		bo_free(&b);
	}

	igt_subtest("offer-bad-input") {
		struct drm_qgpu_gem_offer a;
		struct bo b = {}, c = {};
		uint32_t h[2];
		void *hole;

		bo_new(&b, 4096, VIS, 760);
		bo_new(&c, 4096, VIS, 761);
		hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		igt_assert(hole != MAP_FAILED);
		h[0] = b.h;
		h[1] = c.h;
#define OFFER(field, value, err) do { \
		memset(&a, 0, sizeof(a)); \
		a.handles = (uintptr_t)h; \
		a.count = 1; \
		a.priority = QGPU_OFFER_PRIORITY_NORMAL; \
		a.field = value; \
		igt_assert_eq(raw_ioctl(DRM_IOCTL_QGPU_GEM_OFFER, &a), err); \
	} while (0)
		OFFER(flags, 1, -EINVAL);
		OFFER(flags, 0x80000000u, -EINVAL);
		OFFER(pad, 1, -EINVAL);
		OFFER(count, 0, -EINVAL);
		OFFER(count, QGPU_MAX_OFFER_HANDLES + 1, -EINVAL);
		OFFER(count, 0xffffffffu, -EINVAL);
		OFFER(priority, 0, -EINVAL);
		OFFER(priority, QGPU_OFFER_PRIORITY_HIGH + 1, -EINVAL);
		OFFER(priority, 0xffffffffu, -EINVAL);
		OFFER(handles, 0, -EFAULT);
		OFFER(handles, (uintptr_t)hole, -EFAULT);
		h[1] = 0;
		OFFER(count, 2, -ENOENT);
		h[1] = 0x7fffffff;
		OFFER(count, 2, -ENOENT);
		/* listed twice */
		h[1] = b.h;
		OFFER(count, 2, -EINVAL);
		/* all or nothing: b offered, then [c, b] refused, c not offered */
		OFFER(count, 1, 0);
		OFFER(count, 1, -EINVAL);
		h[0] = c.h;
		OFFER(count, 2, -EINVAL);
		igt_assert_eq(qgpu_bo_reclaim(dev.fd, &c.h, 1, NULL, NULL),
			      -EINVAL);
		igt_assert_eq(reclaim(&b), QGPU_RECLAIM_OK);
		/* every priority is taken */
		OFFER(priority, QGPU_OFFER_PRIORITY_LOW, 0);
		igt_assert_eq(reclaim(&c), QGPU_RECLAIM_OK);
		OFFER(priority, QGPU_OFFER_PRIORITY_HIGH, 0);
		igt_assert_eq(reclaim(&c), QGPU_RECLAIM_OK);
#undef OFFER
		munmap(hole, 4096);
		bo_free(&b);
		bo_free(&c);
	}

	igt_subtest("offer-reclaim-only-by-creator") {
		struct drm_qgpu_stats s0, s1;
		uint32_t shared, r = 0xdead, n = 0xdead;
		int f2 = qt_reopen(&dev), dmabuf;
		struct bo b = {};

		/* b is this file's; f2 holds it through PRIME */
		bo_new(&b, 256 * 1024, VIS, 780);
		reside(&b, QGPU_SEG_VISIBLE);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, b.h, DRM_CLOEXEC,
						 &dmabuf), 0);
		igt_assert_eq(drmPrimeFDToHandle(f2, dmabuf, &shared), 0);
		close(dmabuf);
		/* f2 may not give b's content away */
		igt_assert_eq(qgpu_bo_offer(f2, &shared, 1,
					    QGPU_OFFER_PRIORITY_LOW), -EPERM);
		qt_stats(dev.fd, &s0);
		qt_reside(dev.fd, b.h, QGPU_RESIDE_EVICT, 0);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(seg_of(&b), QGPU_SEG_SYSTEM);
		igt_assert_eq_u64(s1.offer_discards, s0.offer_discards);
		check_cpu(&b, "evicted after another file's refused offer");
		/* nor take back the creator's offer */
		reside(&b, QGPU_SEG_VISIBLE);
		igt_assert_eq(offer(&b, QGPU_OFFER_PRIORITY_NORMAL), 0);
		igt_assert_eq(qgpu_bo_reclaim(f2, &shared, 1, &r, &n), -EPERM);
		/* still offered: the creator reclaims it, content kept */
		igt_assert_eq(reclaim(&b), QGPU_RECLAIM_OK);
		check_cpu(&b, "reclaimed by its creator");
		check_gpu(&b, 1, "reclaimed by its creator");
		/* the creator's handle closed: still not f2's to offer */
		bo_free(&b);
		igt_assert_eq(qgpu_bo_offer(f2, &shared, 1,
					    QGPU_OFFER_PRIORITY_LOW), -EPERM);
		close(f2);
	}

	igt_subtest("reclaim-bad-input") {
		struct drm_qgpu_gem_reclaim a;
		struct bo b = {}, c = {};
		uint32_t h[2], r[2];
		void *hole;

		bo_new(&b, 4096, VIS, 770);
		bo_new(&c, 4096, VIS, 771);
		hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		igt_assert(hole != MAP_FAILED);
		h[0] = b.h;
		h[1] = c.h;
		igt_assert_eq(qgpu_bo_offer(dev.fd, h, 2,
					    QGPU_OFFER_PRIORITY_NORMAL), 0);
#define RECLAIM(field, value, err) do { \
		memset(&a, 0, sizeof(a)); \
		a.handles = (uintptr_t)h; \
		a.results = (uintptr_t)r; \
		a.count = 1; \
		a.field = value; \
		igt_assert_eq(raw_ioctl(DRM_IOCTL_QGPU_GEM_RECLAIM, &a), err); \
	} while (0)
		RECLAIM(flags, 1, -EINVAL);
		RECLAIM(flags, 0x80000000u, -EINVAL);
		RECLAIM(pad, 1, -EINVAL);
		RECLAIM(count, 0, -EINVAL);
		RECLAIM(count, QGPU_MAX_OFFER_HANDLES + 1, -EINVAL);
		RECLAIM(count, 0xffffffffu, -EINVAL);
		RECLAIM(handles, 0, -EFAULT);
		RECLAIM(handles, 8, -EFAULT);
		/* results not writable: nothing reclaimed */
		RECLAIM(results, (uintptr_t)hole, -EFAULT);
		RECLAIM(results, 8, -EFAULT);
		h[1] = 0;
		RECLAIM(count, 2, -ENOENT);
		h[1] = 0x7fffffff;
		RECLAIM(count, 2, -ENOENT);
		h[1] = b.h;
		RECLAIM(count, 2, -EINVAL);
		h[1] = c.h;
		/* still offered, both: one call takes both back */
		r[0] = r[1] = 0xdead;
		RECLAIM(count, 2, 0);
		igt_assert_eq(r[0], QGPU_RECLAIM_OK);
		igt_assert_eq(r[1], QGPU_RECLAIM_OK);
		igt_assert_eq(a.discarded, 0);
		/* not offered any more: @results is left as it was */
		r[0] = 0xdead;
		RECLAIM(count, 1, -EINVAL);
		igt_assert_eq(r[0], 0xdead);
		/* no results wanted */
		igt_assert_eq(offer(&b, QGPU_OFFER_PRIORITY_NORMAL), 0);
		RECLAIM(results, 0, 0);
		igt_assert_eq(a.discarded, 0);
		RECLAIM(results, 0, -EINVAL);
#undef RECLAIM
		munmap(hole, 4096);
		check_cpu(&b, "after the reclaims");
		check_cpu(&c, "after the reclaims");
		bo_free(&b);
		bo_free(&c);
	}

	igt_subtest("migrate-back-when-room-returns") {
		struct drm_qgpu_stats s0, s1, s2;
		struct bo a[6] = {}, hog = {};
		unsigned int i, out, j, k;

		igt_require(debugfs_file("qgpu_policy"));
		set_policy("lru");
		out = evict_to_aperture(a, 6, &hog, false);
		/* used again while VRAM is full: they stay, nothing is evicted */
		qt_stats(dev.fd, &s0);
		check_gpu(a, 6, "used again, VRAM full");
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.evictions, s0.evictions);
		igt_assert_eq_u64(s1.migrations_back, s0.migrations_back);
		igt_assert_eq(count_in(a, 6, QGPU_SEG_APERTURE), out);
		/* one evicted by request, not for room: it is not brought back */
		for (j = 0; seg_of(&a[j]) != QGPU_SEG_VISIBLE; j++)
			;
		qt_reside(dev.fd, a[j].h, QGPU_RESIDE_EVICT, 0);
		igt_assert_eq(seg_of(&a[j]), QGPU_SEG_APERTURE);
		/* room returns */
		bo_free(&hog);
		wait_free(4 * a[0].size);
		/* GEM_RESIDE with segment 0 leaves it where it is (documented) */
		for (k = 0; k == j || seg_of(&a[k]) != QGPU_SEG_APERTURE; k++)
			;
		reside(&a[k], 0);
		igt_assert_eq(seg_of(&a[k]), QGPU_SEG_APERTURE);
		/* a submit that uses them brings back those evicted for room */
		qt_stats(dev.fd, &s1);
		check_gpu(a, 6, "used again, room returned");
		qt_stats(dev.fd, &s2);
		igt_assert_eq(count_in(a, 6, QGPU_SEG_VISIBLE), 5);
		igt_assert_eq(seg_of(&a[j]), QGPU_SEG_APERTURE);
		igt_assert_eq_u64(s2.migrations_back - s1.migrations_back, out);
		igt_assert_eq_u64(s2.migrated_back_bytes - s1.migrated_back_bytes,
				  out * a[0].size);
		igt_assert_eq_u64(s2.evictions, s1.evictions);
		igt_info("migrating back: %u of 6 allocations (%llu KiB) back in VRAM at their next use (before: %u of 6 resident in VRAM)\n",
			 out, (unsigned long long)(out * a[0].size) >> 10,
			 6 - out);
		for (i = 0; i < 6; i++) {
			check_cpu(&a[i], "migrated back");
			bo_free(&a[i]);
		}
	}

	igt_subtest("migrate-back-on-make-resident") {
		struct drm_qgpu_stats s1, s2;
		struct bo a[6] = {}, hog = {};
		uint64_t va, fence = 0;
		uint32_t h[6];
		unsigned int i, out;

		igt_require(qgpu_dev_has_mmu(&dev));
		igt_require(debugfs_file("qgpu_policy"));
		set_policy("lru");
		out = 0;
		{
			uint64_t chunk = (seg_free(QGPU_SEG_VISIBLE) / 6) &
					 ~0xffffull;

			igt_assert_eq(qgpu_vm_reserve(dev.fd, 0, 6 * chunk, 0,
						      &va), 0);
			for (i = 0; i < 6; i++) {
				bo_new(&a[i], chunk, VIS_APT, 900 + i);
				igt_assert_eq(qgpu_vm_map(dev.fd, a[i].h,
							  va + i * chunk, 0,
							  chunk, 0), 0);
				h[i] = a[i].h;
			}
		}
		igt_assert_eq(qgpu_make_resident(dev.fd, h, 6, &fence), 0);
		igt_assert_eq(qgpu_paging_fence_wait(dev.fd, fence,
						     10 * SEC_NS), 0);
		igt_assert_eq(count_in(a, 6, QGPU_SEG_VISIBLE), 6);
		bo_new(&hog, 3 * a[0].size, VIS, 950);
		reside(&hog, QGPU_SEG_VISIBLE);
		out = count_in(a, 6, QGPU_SEG_APERTURE);
		igt_assert_lte(3, out);
		bo_free(&hog);
		wait_free(3 * a[0].size);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(qgpu_make_resident(dev.fd, h, 6, &fence), 0);
		igt_assert_eq(qgpu_paging_fence_wait(dev.fd, fence,
						     10 * SEC_NS), 0);
		qt_stats(dev.fd, &s2);
		igt_assert_eq(count_in(a, 6, QGPU_SEG_VISIBLE), 6);
		igt_assert_eq_u64(s2.migrations_back - s1.migrations_back, out);
		igt_info("MakeResident: %u of 6 mapped allocations back in VRAM\n",
			 out);
		for (i = 0; i < 6; i++)
			check_cpu(&a[i], "migrated back by MakeResident");
		check_gpu(a, 6, "migrated back by MakeResident");
		igt_assert_eq(qgpu_vm_free(dev.fd, va, 6 * a[0].size), 0);
		for (i = 0; i < 6; i++)
			bo_free(&a[i]);
	}

	igt_subtest("gpu-written-in-system-kept-by-make-resident") {
		uint64_t va, fence = 0, i, size = 256 * 1024;
		struct qgpu_vcb v;
		uint32_t vctx, h;
		volatile uint32_t *m;

		igt_require(qgpu_dev_has_mmu(&dev));
		/* never resident, never touched by the CPU: pristine */
		h = qt_bo(dev.fd, size, VIS, QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(qgpu_vm_reserve(dev.fd, 0, size, 0, &va), 0);
		igt_assert_eq(qgpu_vm_map(dev.fd, h, va, 0, size, 0), 0);
		igt_assert_eq(qgpu_ctx_create_virtual(dev.fd, &vctx), 0);
		/* the GPU writes its system pages through the mapping */
		igt_assert_eq(qgpu_vcb_init(&v), 0);
		qgpu_vcb_fill(&v, va, size, 0x5a5a5a5au);
		igt_assert_eq(v.error, 0);
		igt_assert_eq(qgpu_vcb_submit_wait(dev.fd, vctx, &v,
						   30 * SEC_NS), 0);
		qgpu_vcb_fini(&v);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_SYSTEM);
		igt_assert_eq(qgpu_make_resident(dev.fd, &h, 1, &fence), 0);
		igt_assert_eq(qgpu_paging_fence_wait(dev.fd, fence, 10 * SEC_NS),
			      0);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_VISIBLE);
		m = qt_map(dev.fd, h, size);
		for (i = 0; i < size / 4; i++)
			igt_assert_f(m[i] == 0x5a5a5a5au,
				     "word %llu is %#x after MakeResident\n",
				     (unsigned long long)i, m[i]);
		qt_unmap(dev.fd, h, (void *)m, size);
		qgpu_ctx_destroy(dev.fd, vctx);
		igt_assert_eq(qgpu_vm_free(dev.fd, va, size), 0);
		qt_close(dev.fd, h);
	}

	igt_subtest("counters-back-to-zero") {
		if (debugfs_file("qgpu_policy"))
			set_policy("lru");
		qt_assert_no_allocations(dev.fd);
	}

	igt_fixture {
		qgpu_ctx_destroy(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
