// SPDX-License-Identifier: MIT
/*
 * qgpu_coherency: CPU caching attributes and I/O coherency ("Allocation
 * Usage Tracking", its Lock2 rules for cached allocations and its "I/O
 * coherency" section) against the UAPI rules:
 *
 * - QGPU_GEM_CPU_CACHED: GEM_INFO reports the flag and the caching of the
 *   mapping; an allocation's pages get the write-combined memory type of
 *   x86's PAT (counted in /proc/kpageflags) unless it is cached;
 * - the cached Lock2 rule: a cached allocation in VRAM is moved out on
 *   lock (and on a CPU fault), its content preserved, and kept out while
 *   locked; on a device whose VRAM is all CPU-visible it stays in place;
 * - InvalidateCache: every bad field, what has nothing to do, what counts;
 * - libqgpu's calls: after CPU writes before GPU reads, after GPU writes
 *   before CPU reads, on a device without QGPU_INFO_CAP_IO_COHERENT, and
 *   none on a coherent one (file counters and the qgpu_invalidate_cache
 *   tracepoint, in order with qgpu_submit and qgpu_job_done);
 * - GPU/CPU ping-pong of data through cached and write-combined
 *   allocations.
 *
 * Arguments (keep them equal to the group's props=): io-coherent=off when
 * the device has it off; vram-size=, visible-vram-size= as the device.
 */

#include "qgpu_tracefs.h"

#define SZ		(64 * 1024)
#define SZ_B		(128 * 1024)
#define KPF_ARCH	38	/* PG_arch_1: x86 PAT's WC memory type bit */

static struct qgpu_dev dev;
static struct qt_props props;
static bool want_coherent = true;
static bool all_visible;
static uint32_t ctx;

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static void read_args(void)
{
	char buf[4096];
	ssize_t n;
	int fd;

	qt_props_read(&props);
	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	for (char *s = buf; s < buf + n; s += strlen(s) + 1)
		if (!strcmp(s, "io-coherent=off"))
			want_coherent = false;
}

static struct drm_qgpu_stats file_stats(void)
{
	struct drm_qgpu_stats st;

	igt_assert_eq(qgpu_query_file_stats(dev.fd, &st), 0);
	return st;
}

static int invalidate_raw(uint32_t handle, uint32_t flags, uint64_t offset,
			  uint64_t size)
{
	struct drm_qgpu_invalidate_cache a = {
		.handle = handle, .flags = flags, .offset = offset, .size = size,
	};

	return drmIoctl(dev.fd, DRM_IOCTL_QGPU_INVALIDATE_CACHE, &a) ? -errno :
	       0;
}

static void trace_start(void)
{
	qt_find_tracefs();
	igt_require_f(qt_tdir[0], "no tracefs\n");
	qt_twrite("tracing_on", "0");
	qt_twrite("trace", "");
	qt_twrite("buffer_size_kb", "2048");
	qt_twrite("events/qgpu/qgpu_invalidate_cache/enable", "1");
	qt_twrite("events/qgpu/qgpu_submit/enable", "1");
	qt_twrite("events/qgpu/qgpu_job_done/enable", "1");
	qt_twrite("tracing_on", "1");
}

static char *trace_stop(void)
{
	qt_twrite("tracing_on", "0");
	qt_twrite("events/qgpu/enable", "0");
	return qt_tread();
}

/*
 * The events of @trace in order, one letter each: W (an invalidation of
 * the SZ allocation that flushed), w (one that had nothing to do), R and
 * r (the same for the SZ_B allocation), S (a submit), D (a render job
 * done: the GPU's writes are in memory).
 */
static void trace_events(const char *trace, char *out, size_t len)
{
	const char *p = trace;
	size_t n = 0;

	while (*p && n + 1 < len) {
		const char *end = strchr(p, '\n');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(l < 511 ? l : 511), p);
		if (strstr(line, " qgpu_invalidate_cache: ")) {
			bool a = strstr(line, "size=65536 ");
			bool flushed = !strstr(line, "flushed=0");

			out[n++] = a ? (flushed ? 'W' : 'w') :
				       (flushed ? 'R' : 'r');
		} else if (strstr(line, " qgpu_submit: ")) {
			out[n++] = 'S';
		} else if (strstr(line, " qgpu_job_done: ") &&
			   strstr(line, "engine=1")) {
			out[n++] = 'D';
		}
		p += l + (end ? 1 : 0);
	}
	out[n] = 0;
}

/*
 * Pages of the machine whose memory type is write-combined (x86 PAT keeps
 * it in PG_arch_1, KPF_ARCH of /proc/kpageflags). A CPU mapping of a
 * driver's pages cannot be looked up page by page (pagemap does not walk
 * PFN mappings), so the tests count how many pages an allocation adds.
 */
static uint64_t wc_pages(void)
{
	static uint64_t buf[4096];
	uint64_t n = 0;
	ssize_t got;
	int fd;

	fd = open("/proc/kpageflags", O_RDONLY);
	igt_assert(fd >= 0);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got / 8; i++)
			n += buf[i] >> KPF_ARCH & 1;
	close(fd);
	return n;
}

/* Supported set with every segment the device has */
static uint32_t all_segs(void)
{
	return qt_vram_mask(&dev) | QGPU_SEGBIT(QGPU_SEG_APERTURE);
}

static void fill_gpu(uint32_t ctx, uint32_t h, uint32_t off, uint32_t size,
		     uint32_t pattern)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	igt_assert_lte(0, qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE));
	igt_assert_eq(qgpu_cb_fill(cb, 0, off, size, pattern), 0);
	qt_run(dev.fd, ctx, cb, 30);
	qt_cb_free(cb);
}

static void copy_gpu(uint32_t ctx, uint32_t dst, uint32_t src, uint32_t size)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	igt_assert_lte(0, qgpu_cb_bind_flags(cb, 0, src, 0, size, 0));
	igt_assert_lte(0, qgpu_cb_bind(cb, 1, dst, 0, size));
	igt_assert_eq(qgpu_cb_copy(cb, 1, 0, 0, 0, size), 0);
	qt_run(dev.fd, ctx, cb, 30);
	qt_cb_free(cb);
}

static void write_pattern(uint32_t h, uint64_t size, uint32_t seed)
{
	void *p = NULL;

	igt_assert_eq(qgpu_bo_map_flags(dev.fd, h, size, QGPU_BO_MAP_WRITE,
					&p), 0);
	qgpu_pattern_fill(p, size, seed);
	igt_assert_eq(qgpu_bo_unmap_flags(dev.fd, h, p, size,
					  QGPU_BO_MAP_WRITE), 0);
}

static void check_pattern(uint32_t h, uint64_t size, uint32_t seed,
			  const char *what)
{
	void *p = NULL;

	igt_assert_eq(qgpu_bo_map_flags(dev.fd, h, size, QGPU_BO_MAP_READ,
					&p), 0);
	qt_check_pattern(p, size, seed, what);
	igt_assert_eq(qgpu_bo_unmap_flags(dev.fd, h, p, size,
					  QGPU_BO_MAP_READ), 0);
}

/* ------------------------------------------------------------------------ */
/* The cached Lock2 rule                                                     */

/*
 * A cached allocation resident in VRAM segment @seg with CPU- and
 * GPU-written content is locked: moved out (partly visible VRAM) or left
 * in place (all of VRAM visible), its content the same byte for byte.
 */
static void cached_lock_from(uint32_t ctx, uint32_t seg, uint32_t mask)
{
	uint32_t h = qt_bo(dev.fd, SZ, mask,
			   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED, 0);
	struct drm_qgpu_gem_info info;
	uint64_t off;
	uint32_t *p;
	int ret;

	write_pattern(h, SZ, 0xc0de + seg);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	/* the GPU writes the second half while it is in VRAM */
	fill_gpu(ctx, h, SZ / 2, SZ / 2, 0x5eed0000 + seg);
	info = qt_info(dev.fd, h);
	igt_assert_eq(info.segment, seg);
	igt_assert_eq(info.cpu_caching, seg == QGPU_SEG_LOCAL &&
		      info.cpu_path == QGPU_CPU_PATH_NONE ?
		      QGPU_CPU_CACHING_NONE : QGPU_CPU_CACHING_WC);

	igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
	info = qt_info(dev.fd, h);
	if (all_visible) {
		igt_assert_f(info.segment == seg,
			     "all of VRAM is CPU-visible: the cached allocation should stay in segment %u, it is in %u\n",
			     seg, info.segment);
		igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_BAR);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_WC);
	} else {
		igt_assert_f(info.segment == QGPU_SEG_APERTURE ||
			     (info.segment == QGPU_SEG_SYSTEM &&
			      !(mask & QGPU_SEGBIT(QGPU_SEG_APERTURE))),
			     "a cached allocation locked in segment %u (from %u): it must be moved out of VRAM\n",
			     info.segment, seg);
		igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_SYSTEM);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_CACHED);
		/* while locked it is not committed to VRAM */
		ret = qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
				     seg, NULL);
		igt_assert_eq(ret, -EBUSY);
	}
	igt_assert_eq(info.lock_count, 1);
	p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd, off);
	igt_assert(p != MAP_FAILED);
	qt_track(dev.fd, h, p, SZ);
	qt_check_pattern(p, SZ / 2, 0xc0de + seg, "CPU-written half");
	for (unsigned int i = SZ / 8; i < SZ / 4; i++)
		igt_assert_f(p[i] == 0x5eed0000 + seg,
			     "GPU-written word %u is %#x\n", i, p[i]);
	qt_untrack(dev.fd, h, p);
	munmap(p, SZ);
	igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
	/* unlocked, it may go back */
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	qt_close(dev.fd, h);
}

/*
 * A mapping made while locked and touched after an unlock and a move into
 * VRAM: the fault applies the same rule.
 */
static void cached_fault_from(uint32_t seg)
{
	uint32_t h = qt_bo(dev.fd, SZ, all_segs(),
			   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED, 0);
	struct drm_qgpu_gem_info info;
	volatile uint32_t *p;

	p = qt_map(dev.fd, h, SZ);
	qgpu_pattern_fill((void *)p, SZ, 77 + seg);
	igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	igt_assert_eq(qt_info(dev.fd, h).segment, seg);
	qt_check_pattern((void *)p, SZ, 77 + seg, "after the move into VRAM");
	info = qt_info(dev.fd, h);
	if (all_visible)
		igt_assert_eq(info.segment, seg);
	else
		igt_assert_f(info.segment == QGPU_SEG_APERTURE,
			     "a CPU fault left the cached allocation in segment %u\n",
			     info.segment);
	munmap((void *)p, SZ);
	qt_untrack(dev.fd, h, (void *)p);
	qt_close(dev.fd, h);
}

/* ------------------------------------------------------------------------ */

igt_main
{
	igt_fixture {
		read_args();
		qt_open(&dev, QGPU_NODE_RENDER);
		all_visible = dev.info.visible_vram_size ==
			      dev.info.vram_size;
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("caps-and-segment-flags") {
		const struct drm_qgpu_segment *ap =
			qgpu_dev_segment(&dev, QGPU_SEG_APERTURE);
		unsigned int i;

		igt_assert_eq(dev.info.vram_size, props.vram);
		igt_assert_eq(dev.info.visible_vram_size, props.visible);
		igt_assert_eq(qgpu_dev_io_coherent(&dev), want_coherent);
		igt_assert_eq(!!(dev.info.caps & QGPU_CAP_IO_COHERENT),
			      want_coherent);
		igt_assert(ap);
		igt_assert_eq(!!(ap->flags & QGPU_SEGF_CACHE_COHERENT),
			      want_coherent);
		for (i = 0; i < dev.nsegs; i++)
			if (dev.segs[i].id != QGPU_SEG_APERTURE)
				igt_assert_eq(dev.segs[i].flags &
					      QGPU_SEGF_CACHE_COHERENT, 0);
	}

	igt_subtest("create-flags-and-info") {
		uint32_t wc = qt_bo(dev.fd, SZ, all_segs(),
				    QGPU_GEM_CPU_ACCESS, 0);
		uint32_t c = qt_bo(dev.fd, SZ, all_segs(),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		uint32_t nc = qt_bo(dev.fd, SZ, all_segs(),
				    QGPU_GEM_CPU_CACHED, 0);
		struct drm_qgpu_gem_info info;
		uint32_t h;

		igt_assert_eq(QGPU_GEM_CREATE_FLAGS & QGPU_GEM_CPU_CACHED,
			      QGPU_GEM_CPU_CACHED);
		igt_assert_eq(qgpu_bo_create(dev.fd, SZ, all_segs(), 1u << 30,
					     0, &h), -EINVAL);
		igt_assert_eq(qgpu_bo_create(dev.fd, SZ, all_segs(),
					     QGPU_GEM_CPU_CACHED | 1u << 30,
					     0, &h), -EINVAL);
		info = qt_info(dev.fd, wc);
		igt_assert_eq(info.flags, QGPU_GEM_CPU_ACCESS);
		igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_SYSTEM);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_WC);
		igt_assert_eq(info.pad, 0);
		info = qt_info(dev.fd, c);
		igt_assert_eq(info.flags,
			      QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_CACHED);
		info = qt_info(dev.fd, nc);
		igt_assert_eq(info.flags, QGPU_GEM_CPU_CACHED);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_CACHED);
		/* in the aperture: still the system pages */
		qt_reside(dev.fd, c, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		igt_assert_eq(qt_info(dev.fd, c).cpu_caching,
			      QGPU_CPU_CACHING_CACHED);
		/* in visible VRAM: BAR2, write-combined whatever the flag */
		qt_reside(dev.fd, c, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		qt_reside(dev.fd, wc, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		info = qt_info(dev.fd, c);
		igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_BAR);
		igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_WC);
		igt_assert_eq(qt_info(dev.fd, wc).cpu_caching,
			      QGPU_CPU_CACHING_WC);
		if (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL)) {
			qt_reside(dev.fd, wc, QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_LOCAL);
			info = qt_info(dev.fd, wc);
			igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_NONE);
			igt_assert_eq(info.cpu_caching, QGPU_CPU_CACHING_NONE);
		}
		qt_close(dev.fd, wc);
		qt_close(dev.fd, c);
		qt_close(dev.fd, nc);
	}

	igt_subtest("mapping-memory-type") {
		const uint64_t big = 4 * MiB, pages = big / 4096;
		uint32_t wc = qt_bo(dev.fd, big, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				    QGPU_GEM_CPU_ACCESS, 0);
		uint32_t c = qt_bo(dev.fd, big, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		uint64_t n0, n1, n2, n3;
		uint32_t *pw, *pc;
		struct stat st;

		igt_require_f(!stat("/proc/kpageflags", &st),
			      "no /proc/kpageflags\n");
		/*
		 * Allocations closed before are freed by a worker, which
		 * gives their pages back write-back: start once the count
		 * holds still.
		 */
		n0 = wc_pages();
		for (int i = 0, same = 0; i < 100 && same < 3; i++) {
			usleep(50000);
			n1 = wc_pages();
			same = n1 == n0 ? same + 1 : 0;
			n0 = n1;
		}
		/* the cached allocation's pages stay write-back */
		pc = qt_map(dev.fd, c, big);
		qgpu_pattern_fill(pc, big, 2);
		n1 = wc_pages();
		/* the write-combined one's pages become WC when it gets them */
		pw = qt_map(dev.fd, wc, big);
		qgpu_pattern_fill(pw, big, 1);
		n2 = wc_pages();
		igt_info("WC pages: %llu, +%lld (cached), +%lld (WC)\n",
			 (unsigned long long)n0, (long long)(n1 - n0),
			 (long long)(n2 - n1));
		igt_assert_f(n1 == n0, "a cached allocation's pages: %lld WC pages more\n",
			     (long long)(n1 - n0));
		igt_assert_f(n2 == n1 + pages,
			     "a write-combined allocation of %llu pages: %lld WC pages more\n",
			     (unsigned long long)pages, (long long)(n2 - n1));
		/* through the aperture and back: same pages, same type */
		qt_reside(dev.fd, c, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		qt_reside(dev.fd, wc, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		qt_check_pattern(pw, big, 1, "WC mapping");
		qt_check_pattern(pc, big, 2, "cached mapping");
		igt_assert_eq(wc_pages(), n2);
		qt_unmap(dev.fd, wc, pw, big);
		qt_unmap(dev.fd, c, pc, big);
		qt_close(dev.fd, wc);
		qt_close(dev.fd, c);
		/* freed (deferred): shmem gets its pages back write-back */
		for (int i = 0; i < 100 && (n3 = wc_pages()) != n0; i++)
			usleep(20000);
		igt_assert_f(n3 == n0, "%lld WC pages left after the close\n",
			     (long long)(n3 - n0));
	}

	igt_subtest("cached-lock-rule-visible")
		cached_lock_from(ctx, QGPU_SEG_VISIBLE, all_segs());

	igt_subtest("cached-lock-rule-local") {
		igt_require_f(qgpu_dev_segment(&dev, QGPU_SEG_LOCAL),
			      "all of VRAM is CPU-visible: no local segment\n");
		cached_lock_from(ctx, QGPU_SEG_LOCAL, all_segs());
	}

	igt_subtest("cached-lock-rule-no-aperture") {
		/* no aperture in the set: out to system memory */
		cached_lock_from(ctx, QGPU_SEG_VISIBLE,
				 QGPU_SEGBIT(QGPU_SEG_VISIBLE));
	}

	igt_subtest("cached-fault-rule")
		cached_fault_from(QGPU_SEG_VISIBLE);

	igt_subtest("uncached-lock-stays-in-vram") {
		/* the rule is for cached allocations only */
		uint32_t h = qt_bo(dev.fd, SZ, all_segs(),
				   QGPU_GEM_CPU_ACCESS, 0);
		uint64_t off;

		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_VISIBLE);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
		qt_close(dev.fd, h);
	}

	igt_subtest("invalidate-bad-input") {
		uint32_t h = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		struct drm_qgpu_stats before, after;

		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		before = file_stats();
		igt_assert_eq(invalidate_raw(h, 1, 0, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 1u << 31, 0, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 1, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 2048, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 0, 4095), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 0, 64), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 0, 0), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 0, SZ + 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, SZ, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, SZ - 4096, 8192), -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, ~0ull & ~4095ull, 8192),
			      -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 4096, ~0ull & ~4095ull),
			      -EINVAL);
		igt_assert_eq(invalidate_raw(h, 0, 1ull << 40, 4096), -EINVAL);
		igt_assert_eq(invalidate_raw(0, 0, 0, 4096), -ENOENT);
		igt_assert_eq(invalidate_raw(h + 1000, 0, 0, 4096), -ENOENT);
		/* flags are checked before the handle */
		igt_assert_eq(invalidate_raw(h + 1000, 2, 0, 4096), -EINVAL);
		after = file_stats();
		igt_assert_eq(after.cache_invalidations,
			      before.cache_invalidations);
		igt_assert_eq(after.cache_invalidated_bytes,
			      before.cache_invalidated_bytes);
		/* the edges that are allowed */
		igt_assert_eq(invalidate_raw(h, 0, 0, SZ), 0);
		igt_assert_eq(invalidate_raw(h, 0, SZ - 4096, 4096), 0);
		after = file_stats();
		igt_assert_eq(after.cache_invalidations,
			      before.cache_invalidations + 2);
		igt_assert_eq(after.cache_invalidated_bytes,
			      before.cache_invalidated_bytes + SZ + 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("invalidate-what-counts") {
		uint32_t wc = qt_bo(dev.fd, SZ, all_segs(),
				    QGPU_GEM_CPU_ACCESS, 0);
		uint32_t c = qt_bo(dev.fd, SZ, all_segs(),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		struct drm_qgpu_stats s0, s;

		s0 = file_stats();
		/* no pages yet: nothing to do */
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 0, SZ), 0);
		/* write-combined: nothing to do */
		qt_reside(dev.fd, wc, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, wc, 0, SZ), 0);
		/* in VRAM: mapped write-combined, nothing to do */
		qt_reside(dev.fd, c, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 0, SZ), 0);
		s = file_stats();
		igt_assert_eq(s.cache_invalidations, s0.cache_invalidations);
		igt_assert_eq(s.cache_invalidated_bytes,
			      s0.cache_invalidated_bytes);
		/* in the aperture and in system memory: its pages, counted */
		qt_reside(dev.fd, c, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 4096, 8192), 0);
		qt_reside(dev.fd, c, QGPU_RESIDE_EVICT_SYSTEM, 0);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 0, SZ), 0);
		s = file_stats();
		igt_assert_eq(s.cache_invalidations,
			      s0.cache_invalidations + 2);
		igt_assert_eq(s.cache_invalidated_bytes,
			      s0.cache_invalidated_bytes + 8192 + SZ);
		qt_close(dev.fd, wc);
		qt_close(dev.fd, c);
	}

	/*
	 * A range of more than one piece (the kernel flushes 4 MiB per hold
	 * of its memory-manager lock): every byte counted once, in one
	 * invalidation, whether the range starts on a piece or not, and the
	 * content the CPU wrote still there.
	 */
	igt_subtest("invalidate-in-pieces") {
		const uint64_t big = 9 * 1024 * 1024 + 12288;
		uint32_t c = qt_bo(dev.fd, big, all_segs(),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		struct drm_qgpu_stats s0, s;
		uint32_t *m;
		uint64_t i;

		qt_reside(dev.fd, c, QGPU_RESIDE_EVICT_SYSTEM, 0);
		m = qt_map(dev.fd, c, big);
		for (i = 0; i < big / 4; i += 1024)
			m[i] = (uint32_t)i ^ 0x5a5a5a5a;
		s0 = file_stats();
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 0, big), 0);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 4096,
						    big - 8192), 0);
		igt_assert_eq(qgpu_invalidate_cache(dev.fd, c, 4096 * 1024,
						    4096 * 1025), 0);
		s = file_stats();
		igt_assert_eq(s.cache_invalidations,
			      s0.cache_invalidations + 3);
		igt_assert_eq(s.cache_invalidated_bytes,
			      s0.cache_invalidated_bytes + big + big - 8192 +
			      4096 * 1025);
		for (i = 0; i < big / 4; i += 1024)
			igt_assert_eq(m[i], (uint32_t)i ^ 0x5a5a5a5a);
		/* past the end, by a page: nothing flushed, EINVAL */
		igt_assert_eq(invalidate_raw(c, 0, 4096, big), -EINVAL);
		igt_assert_eq(file_stats().cache_invalidated_bytes,
			      s.cache_invalidated_bytes);
		qt_close(dev.fd, c);
	}

	igt_subtest("libqgpu-call-order") {
		/* A: written by the CPU, read by the GPU; B: the reverse */
		uint32_t a = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		uint32_t b = qt_bo(dev.fd, SZ_B,
				   QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		struct drm_qgpu_stats s0, s1, s2, s3;
		char ev[64], *t;
		uint64_t off;
		void *p = NULL;

		qt_reside(dev.fd, a, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		qt_reside(dev.fd, b, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		trace_start();
		s0 = file_stats();
		/* a write-only mapping: nothing at map time */
		igt_assert_eq(qgpu_bo_map_flags(dev.fd, a, SZ,
						QGPU_BO_MAP_WRITE, &p), 0);
		igt_assert_eq(file_stats().cache_invalidations,
			      s0.cache_invalidations);
		qgpu_pattern_fill(p, SZ, 0xa);
		/* unmap: written back before the GPU reads */
		igt_assert_eq(qgpu_bo_unmap_flags(dev.fd, a, p, SZ,
						  QGPU_BO_MAP_WRITE), 0);
		s1 = file_stats();
		copy_gpu(ctx, b, a, SZ);
		s2 = file_stats();
		/* a read mapping: invalidated before the CPU reads */
		igt_assert_eq(qgpu_bo_map_flags(dev.fd, b, SZ_B,
						QGPU_BO_MAP_READ, &p), 0);
		s3 = file_stats();
		qt_check_pattern(p, SZ, 0xa, "B after the GPU copy");
		igt_assert_eq(qgpu_bo_unmap_flags(dev.fd, b, p, SZ_B,
						  QGPU_BO_MAP_READ), 0);
		/* raw Lock2: invalidate at lock and at unlock */
		igt_assert_eq(qgpu_bo_lock(dev.fd, a, &off), 0);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, a), 0);
		t = trace_stop();
		trace_events(t, ev, sizeof(ev));
		igt_info("events: %s\n", ev);
		free(t);
		if (want_coherent) {
			igt_assert_f(!strpbrk(ev, "WwRr"),
				     "a coherent device needs no InvalidateCache, libqgpu called it: %s\n",
				     ev);
			igt_assert_eq(file_stats().cache_invalidations,
				      s0.cache_invalidations);
		} else {
			igt_assert_eq(s1.cache_invalidations,
				      s0.cache_invalidations + 1);
			igt_assert_eq(s1.cache_invalidated_bytes,
				      s0.cache_invalidated_bytes + SZ);
			igt_assert_eq(s2.cache_invalidations,
				      s1.cache_invalidations);
			igt_assert_eq(s3.cache_invalidations,
				      s2.cache_invalidations + 1);
			igt_assert_eq(s3.cache_invalidated_bytes,
				      s2.cache_invalidated_bytes + SZ_B);
			igt_assert_eq(file_stats().cache_invalidations,
				      s3.cache_invalidations + 2);
			/*
			 * CPU write, A written back, the submit, the GPU's
			 * job done, B invalidated, then A at lock and unlock.
			 */
			igt_assert_f(!strcmp(ev, "WSDRWW"),
				     "InvalidateCache order: %s, expected WSDRWW\n",
				     ev);
		}
		qt_close(dev.fd, a);
		qt_close(dev.fd, b);
	}

	igt_subtest("wc-no-calls") {
		uint32_t h = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS, 0);
		char ev[64], *t;

		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		trace_start();
		write_pattern(h, SZ, 5);
		check_pattern(h, SZ, 5, "write-combined");
		t = trace_stop();
		trace_events(t, ev, sizeof(ev));
		free(t);
		igt_assert_f(!strpbrk(ev, "WwRr"),
			     "libqgpu called InvalidateCache for a write-combined allocation: %s\n",
			     ev);
		qt_close(dev.fd, h);
	}

	igt_subtest("ping-pong") {
		/* cached A may go to VRAM; cached B and write-combined C not */
		uint32_t a = qt_bo(dev.fd, SZ, all_segs(),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
		uint32_t b = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS | QGPU_GEM_CPU_CACHED,
				   0);
		uint32_t c = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				   QGPU_GEM_CPU_ACCESS, 0);
		struct drm_qgpu_stats s0, s;
		unsigned int round;

		s0 = file_stats();
		for (round = 0; round < 8; round++) {
			uint32_t seed = 100 + round;

			write_pattern(a, SZ, seed);
			copy_gpu(ctx, b, a, SZ);
			check_pattern(b, SZ, seed, "B");
			write_pattern(b, SZ, seed + 50);
			copy_gpu(ctx, c, b, SZ);
			check_pattern(c, SZ, seed + 50, "C");
			write_pattern(c, SZ, seed + 80);
			copy_gpu(ctx, a, c, SZ);
			check_pattern(a, SZ, seed + 80, "A");
		}
		s = file_stats();
		if (want_coherent)
			igt_assert_eq(s.cache_invalidations,
				      s0.cache_invalidations);
		else
			/* B: its write-back and its read, every round */
			igt_assert_lte(s0.cache_invalidations + 16,
				       s.cache_invalidations);
		qt_close(dev.fd, a);
		qt_close(dev.fd, b);
		qt_close(dev.fd, c);
	}

	igt_fixture {
		qt_assert_clean(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
