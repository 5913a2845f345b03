/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the in-VM qgpu test programs (tests/vm/qgpu_*.c).
 * Header-only: every test program is one .c file (see the Makefile).
 *
 * Device configuration: a test that checks sizes against what the VM was
 * booted with reads "key=value" arguments named after the device
 * properties (vram-size=96M visible-vram-size=32M host-aperture-size=16M
 * gart-size=256M max-slots=64 max-contexts=64) from its command line, as
 * tests/vm/tests.list passes them; missing ones take the device defaults of
 * docs/hw-spec.md section 3.
 */
#ifndef QGPU_TEST_H
#define QGPU_TEST_H

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <xf86drm.h>

#include "igt.h"
#include "libqgpu.h"
/* the tests check what the device reports against its contract */
#include "qgpu_regs.h"

#define MiB (1024ull * 1024ull)
#define SEC_NS 1000000000ll

/* ------------------------------------------------------------------------ */
/* Expected device configuration                                             */

struct qt_props {
	uint64_t vram;
	uint64_t visible;
	uint64_t hap;
	uint64_t gart;
	uint32_t slots;
	uint32_t contexts;
	bool given;		/* at least one property came from the args */
};

static inline uint64_t qt_pow2floor(uint64_t v)
{
	uint64_t p = 1;

	while (p <= v / 2)
		p *= 2;
	return p;
}

/* The device properties the VM was booted with (see the file comment). */
static inline void qt_props_read(struct qt_props *p)
{
	char buf[4096], *s;
	ssize_t n;
	int fd;

	memset(p, 0, sizeof(*p));
	p->vram = 64 * MiB;
	p->hap = 16 * MiB;
	p->gart = 256 * MiB;
	p->slots = 64;
	p->contexts = 64;
	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0)
			n = 0;
		buf[n] = 0;
		for (s = buf; s < buf + n; s += strlen(s) + 1) {
			char key[64];
			const char *eq = strchr(s, '=');
			int64_t v;

			if (!eq || eq - s >= (int)sizeof(key) || s[0] == '-')
				continue;
			memcpy(key, s, eq - s);
			key[eq - s] = 0;
			v = qgpu_parse_size(eq + 1);
			if (v < 0)
				continue;
			if (!strcmp(key, "vram-size"))
				p->vram = v;
			else if (!strcmp(key, "visible-vram-size"))
				p->visible = v;
			else if (!strcmp(key, "host-aperture-size"))
				p->hap = v;
			else if (!strcmp(key, "gart-size"))
				p->gart = v;
			else if (!strcmp(key, "max-slots"))
				p->slots = v;
			else if (!strcmp(key, "max-contexts"))
				p->contexts = v;
			else
				continue;
			p->given = true;
		}
	}
	if (!p->visible)
		p->visible = qt_pow2floor(p->vram);
}

/* ------------------------------------------------------------------------ */
/* Device and counters                                                       */

/* Open the first qgpu node of a kind, skipping (all later subtests) if none. */
static inline void qt_open(struct qgpu_dev *dev, enum qgpu_node node)
{
	int ret = qgpu_open(dev, node);

	igt_require_f(ret == 0, "no qgpu %s node: %s\n",
		      node == QGPU_NODE_RENDER ? "render" : "primary",
		      strerror(-ret));
}

/* A second, independent open of the same render node (a new DRM file). */
static inline int qt_reopen(const struct qgpu_dev *dev)
{
	int fd = open(dev->path, O_RDWR | O_CLOEXEC);

	igt_assert_f(fd >= 0, "reopen %s: %s\n", dev->path, strerror(errno));
	return fd;
}

static inline void qt_stats(int fd, struct drm_qgpu_stats *st)
{
	igt_assert_eq(qgpu_query_stats(fd, st, NULL, 0, NULL), 0);
}

/* Live allocations the memory manager counts (global). */
static inline void qt_cleanup(void);
static inline void qt_assert_no_allocations(int fd)
{
	struct drm_qgpu_stats st;
	int i;

	qt_cleanup();
	qt_stats(fd, &st);
	/*
	 * A destroy returns at once and the allocation goes when its work
	 * is done (a worker): give what is still queued up to 10 s
	 */
	for (i = 0; i < 500 && st.allocations; i++) {
		usleep(20 * 1000);
		qt_stats(fd, &st);
	}
	igt_assert_f(st.allocations == 0 && st.allocated_bytes == 0,
		     "allocations %llu, allocated_bytes %llu after every handle was closed\n",
		     (unsigned long long)st.allocations,
		     (unsigned long long)st.allocated_bytes);
}

/* Usable bytes of one segment (size minus driver reservations), 0 if absent */
static inline uint64_t qt_seg_usable(const struct qgpu_dev *dev, uint32_t id)
{
	const struct drm_qgpu_segment *s = qgpu_dev_segment(dev, id);

	return s ? s->size - s->reserved_size : 0;
}

/* Per-segment usage from QGPU_QUERY_STATS. */
static inline void qt_seg_stats(int fd, uint32_t id,
				struct drm_qgpu_segment_stats *out)
{
	struct drm_qgpu_segment_stats seg[8];
	struct drm_qgpu_stats st;
	unsigned int n = 0, i;

	memset(out, 0, sizeof(*out));
	igt_assert_eq(qgpu_query_stats(fd, &st, seg, 8, &n), 0);
	for (i = 0; i < n && i < 8; i++)
		if (seg[i].id == id)
			*out = seg[i];
}

/* ------------------------------------------------------------------------ */
/* Allocations                                                               */

/*
 * Everything qt_bo()/qt_map() create is remembered until qt_close()/
 * qt_unmap(), so that a subtest that failed half-way (and longjmp'ed past
 * its clean-up) does not leave allocations behind for the later "counters
 * back to zero" checks: qt_cleanup() releases the leftovers.
 */
#define QT_MAX_TRACKED 1024
static struct qt_tracked {
	int fd;
	uint32_t handle;
	void *map;
	uint64_t size;
} qt_tracked[QT_MAX_TRACKED];

static inline void qt_track(int fd, uint32_t h, void *map, uint64_t size)
{
	unsigned int i;

	for (i = 0; i < QT_MAX_TRACKED; i++)
		if (!qt_tracked[i].fd && !qt_tracked[i].handle) {
			qt_tracked[i] = (struct qt_tracked){ fd, h, map, size };
			return;
		}
}

static inline void qt_untrack(int fd, uint32_t h, void *map)
{
	unsigned int i;

	for (i = 0; i < QT_MAX_TRACKED; i++)
		if (qt_tracked[i].fd == fd && qt_tracked[i].handle == h &&
		    qt_tracked[i].map == map) {
			memset(&qt_tracked[i], 0, sizeof(qt_tracked[i]));
			return;
		}
}

/* Release what failed subtests left behind: mappings first, then handles. */
static inline void qt_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < QT_MAX_TRACKED; i++)
		if (qt_tracked[i].map) {
			munmap(qt_tracked[i].map, qt_tracked[i].size);
			qgpu_bo_unlock(qt_tracked[i].fd, qt_tracked[i].handle);
			memset(&qt_tracked[i], 0, sizeof(qt_tracked[i]));
		}
	for (i = 0; i < QT_MAX_TRACKED; i++)
		if (qt_tracked[i].handle) {
			qgpu_bo_destroy(qt_tracked[i].fd, qt_tracked[i].handle);
			memset(&qt_tracked[i], 0, sizeof(qt_tracked[i]));
		}
}

static inline uint32_t qt_bo(int fd, uint64_t size, uint32_t mask,
			     uint32_t flags, uint32_t pref)
{
	uint32_t h = 0;
	int ret = qgpu_bo_create(fd, size, mask, flags, pref, &h);

	igt_assert_f(ret == 0, "GEM_CREATE size %llu mask %#x flags %#x pref %#x: %s\n",
		     (unsigned long long)size, mask, flags, pref,
		     strerror(-ret));
	qt_track(fd, h, NULL, 0);
	return h;
}

static inline void *qt_map(int fd, uint32_t h, uint64_t size)
{
	void *p = NULL;
	int ret = qgpu_bo_map(fd, h, size, &p);

	igt_assert_f(ret == 0, "lock+mmap handle %u: %s\n", h, strerror(-ret));
	qt_track(fd, h, p, size);
	return p;
}

static inline void qt_unmap(int fd, uint32_t h, void *p, uint64_t size)
{
	qt_untrack(fd, h, p);
	igt_assert_eq(qgpu_bo_unmap(fd, h, p, size), 0);
}

static inline void qt_close(int fd, uint32_t h)
{
	qt_untrack(fd, h, NULL);
	igt_assert_eq(qgpu_bo_destroy(fd, h), 0);
}

static inline struct drm_qgpu_gem_info qt_info(int fd, uint32_t h)
{
	struct drm_qgpu_gem_info info;

	igt_assert_eq(qgpu_bo_info(fd, h, &info), 0);
	return info;
}

static inline void qt_reside(int fd, uint32_t h, uint32_t op, uint32_t seg)
{
	int ret = qgpu_bo_reside(fd, h, op, seg, NULL);

	igt_assert_f(ret == 0, "GEM_RESIDE handle %u op %u segment %u: %s\n",
		     h, op, seg, strerror(-ret));
}

/* A CPU-readable buffer in the aperture, resident, mapped and zeroed. */
static inline uint32_t qt_result_buf(int fd, uint64_t size, uint32_t **map)
{
	uint32_t h = qt_bo(fd, size, QGPU_SEGBIT(QGPU_SEG_APERTURE),
			   QGPU_GEM_CPU_ACCESS, 0);

	qt_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
	*map = qt_map(fd, h, size);
	memset(*map, 0, size);
	return h;
}

/* Every VRAM segment the device has: visible, and local when present. */
static inline uint32_t qt_vram_mask(const struct qgpu_dev *dev)
{
	return QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
	       (qgpu_dev_segment(dev, QGPU_SEG_LOCAL) ?
		QGPU_SEGBIT(QGPU_SEG_LOCAL) : 0);
}

/* Check a pattern, reporting the first difference. */
static inline void qt_check_pattern(const void *p, uint64_t size,
				    uint32_t seed, const char *what)
{
	int64_t at = qgpu_pattern_check(p, size, seed);

	igt_assert_f(at < 0, "%s: word %lld is %#x, expected %#x\n", what,
		     (long long)at, ((const volatile uint32_t *)p)[at < 0 ? 0 : at],
		     qgpu_pattern(seed, at < 0 ? 0 : at));
}

/* ------------------------------------------------------------------------ */
/* Submission                                                                */

static inline struct qgpu_cb *qt_cb(const struct qgpu_dev *dev)
{
	struct qgpu_cb *cb = calloc(1, sizeof(*cb));

	igt_assert(cb);
	igt_assert_eq(qgpu_cb_init(cb, dev->info.max_slots), 0);
	return cb;
}

static inline void qt_cb_free(struct qgpu_cb *cb)
{
	qgpu_cb_fini(cb);
	free(cb);
}

static inline uint32_t qt_ctx(int fd)
{
	uint32_t ctx = 0;

	igt_assert_eq(qgpu_ctx_create(fd, &ctx), 0);
	return ctx;
}

/* Submit, wait up to @secs, and require the context to be healthy. */
static inline uint32_t qt_run(int fd, uint32_t ctx, const struct qgpu_cb *cb,
			      int secs)
{
	struct drm_qgpu_context_status cs;
	uint32_t portions = 0;
	int ret;

	igt_assert_eq(cb->error, 0);
	ret = qgpu_submit_wait(fd, ctx, cb, secs * SEC_NS, &portions);
	igt_assert_f(ret == 0, "submit+wait: %s\n", strerror(-ret));
	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_OK,
		     "context %u lost: %s, fault %s at DMA offset %u addr %#llx\n",
		     ctx, qgpu_ctx_state_name(cs.state),
		     qgpu_fault_name(cs.fault_reason), cs.fault_offset,
		     (unsigned long long)cs.fault_addr);
	igt_assert_lte(1, portions);
	return portions;
}

/* Host FNV-1a of @nwords copies of @w */
static inline uint32_t qt_csum_const(uint32_t w, uint64_t nwords)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = 0; i < nwords; i++)
		h = (h ^ w) * QGPU_CSUM_PRIME;
	return h;
}

/*
 * Drop CAP_SYS_ADMIN (effective and permitted; for a child process): DRM
 * then treats a new open of the primary node as an ordinary,
 * unauthenticated client. Returns 0 or -errno.
 */
static inline int qt_drop_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	data[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/* The end of a test program: @ctx survived everything, nothing is left. */
static inline void qt_assert_clean(int fd, uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	igt_assert_eq(cs.state, QGPU_CTX_OK);
	qt_assert_no_allocations(fd);
}

/* ------------------------------------------------------------------------ */
/* Children                                                                  */

/* Wait for a child; returns its exit status, or 128 + signal. */
static inline int qt_wait_child(pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

#endif /* QGPU_TEST_H */
