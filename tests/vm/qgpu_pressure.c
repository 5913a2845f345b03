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
 *
 * Every allocation's content is checked after the moves, by the CPU and
 * by the GPU (QGPU_DMA_CHECKSUM against the host).
 *
 * Arguments: policy=NAME, the policy the module parameter gave (its group
 * in tests.list loads qgpu.ko with it). Meant for small VRAM, e.g.
 * vram-size=32M visible-vram-size=8M.
 */
#include <glob.h>

#include "qgpu_test.h"

static struct qgpu_dev dev;
static uint32_t ctx;
static char modparam_policy[32];

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
	for (s = buf; s < buf + n; s += strlen(s) + 1)
		if (!strncmp(s, "policy=", 7))
			snprintf(modparam_policy, sizeof(modparam_policy),
				 "%s", s + 7);
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
		const char *bad[] = { "5", "lru2", "-1", "", "gdsf future-use",
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
