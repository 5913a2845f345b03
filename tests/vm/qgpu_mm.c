// SPDX-License-Identifier: MIT
/*
 * qgpu_mm: the video memory manager seen from user space: segments,
 * residency, oversubscription and eviction under CPU mappings ("Mapping
 * Virtual Addresses to a Memory Segment"), the CPU host aperture and its
 * exhaustion, the Lock2 rules ("Allocation Usage Tracking"), zero-filled
 * new allocations ("GpuMmu Example Scenarios"), a destroyed allocation's
 * VRAM given back to the host, allocation bad input.
 *
 * Arguments: the device properties, key=value (tests/vm/qgpu_test.h).
 * Meant for a device with non-visible VRAM and a host aperture, e.g.
 * vram-size=48M visible-vram-size=16M host-aperture-size=8M.
 */
#include <glob.h>

#include "qgpu_test.h"

#define ALLSEG (QGPU_SEGBIT(QGPU_SEG_VISIBLE) | QGPU_SEGBIT(QGPU_SEG_LOCAL) | \
		QGPU_SEGBIT(QGPU_SEG_APERTURE))
#define VIS_APT (QGPU_SEGBIT(QGPU_SEG_VISIBLE) | QGPU_SEGBIT(QGPU_SEG_APERTURE))
#define LOC_APT (QGPU_SEGBIT(QGPU_SEG_LOCAL) | QGPU_SEGBIT(QGPU_SEG_APERTURE))

static struct qgpu_dev dev;
static struct qt_props props;
static bool have_local;
static uint32_t ctx;

/* GPU checksum of [0, size) of an allocation, through the render engine.
 * Its result buffer is kept (untracked) until csum_fini(). */
static uint32_t csum_res;
static uint32_t *csum_map;

static uint32_t gpu_csum(uint32_t h, uint64_t size)
{
	struct qgpu_cb *cb;

	if (!csum_res) {
		igt_assert_eq(qgpu_bo_create(dev.fd, 4096,
					     QGPU_SEGBIT(QGPU_SEG_APERTURE),
					     QGPU_GEM_CPU_ACCESS, 0, &csum_res),
			      0);
		qt_reside(dev.fd, csum_res, QGPU_RESIDE_MAKE_RESIDENT, 0);
		igt_assert_eq(qgpu_bo_map(dev.fd, csum_res, 4096,
					  (void **)&csum_map), 0);
	}
	csum_map[0] = 0;
	cb = qt_cb(&dev);
	qgpu_cb_bind_flags(cb, 0, h, 0, size, 0);
	qgpu_cb_bind(cb, 1, csum_res, 0, 4096);
	qgpu_cb_checksum(cb, 0, 0, size, 1, 0);
	qt_run(dev.fd, ctx, cb, 30);
	qt_cb_free(cb);
	return csum_map[0];
}

static void csum_fini(void)
{
	if (!csum_res)
		return;
	qgpu_bo_unmap(dev.fd, csum_res, csum_map, 4096);
	qgpu_bo_destroy(dev.fd, csum_res);
	csum_res = 0;
}

static uint32_t host_pattern_csum(uint64_t size, uint32_t seed)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		h = (h ^ qgpu_pattern(seed, i)) * QGPU_CSUM_PRIME;
	return h;
}

static int create_err(uint64_t size, uint32_t mask, uint32_t flags,
		      uint32_t pref)
{
	uint32_t h;
	int ret = qgpu_bo_create(dev.fd, size, mask, flags, pref, &h);

	if (!ret)
		qgpu_bo_destroy(dev.fd, h);
	return ret;
}

static const char *policy_file(void)
{
	static char path[256];
	glob_t g;

	if (glob("/sys/kernel/debug/dri/*/qgpu_policy", 0, NULL, &g))
		return NULL;
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

static bool set_policy(const char *name)
{
	const char *f = policy_file();
	int fd;
	bool ok;

	if (!f)
		return false;
	fd = open(f, O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, name, strlen(name)) == (ssize_t)strlen(name);
	close(fd);
	return ok;
}

/* n CPU-filled allocations cycled through VRAM: every byte must survive */
static void oversubscribe(double factor, int cycles, bool rewrite)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t chunk = (vram / 8) & ~4095ull;
	unsigned int n = (unsigned int)(factor * vram / chunk), i;
	uint32_t mask = have_local ? ALLSEG : VIS_APT, *h, *seed;
	struct drm_qgpu_stats s0, s1;
	void **m;
	int c;

	h = calloc(n, sizeof(*h));
	seed = calloc(n, sizeof(*seed));
	m = calloc(n, sizeof(*m));
	igt_assert(h && seed && m);
	qt_stats(dev.fd, &s0);
	for (i = 0; i < n; i++) {
		h[i] = qt_bo(dev.fd, chunk, mask, QGPU_GEM_CPU_ACCESS,
			     QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
		m[i] = qt_map(dev.fd, h[i], chunk);
		seed[i] = 100 + i;
		qgpu_pattern_fill(m[i], chunk, seed[i]);
	}
	for (c = 0; c < cycles; c++) {
		for (i = 0; i < n; i++) {
			unsigned int k = c % 2 ? n - 1 - i : (i * 7) % n;
			uint32_t seg = QGPU_SEG_VISIBLE;

			/* VRAM segments in turn, now and then out again */
			if (have_local && (i + c) % 3 == 1)
				seg = QGPU_SEG_LOCAL;
			qt_reside(dev.fd, h[k], QGPU_RESIDE_MAKE_RESIDENT, seg);
			if ((i + c) % 5 == 4)
				qt_reside(dev.fd, h[k], QGPU_RESIDE_EVICT_SYSTEM,
					  0);
			if (rewrite && (i + c) % 2) {
				/* a write right after the move lands */
				seed[k] += 1000;
				qgpu_pattern_fill(m[k], chunk, seed[k]);
			}
		}
		for (i = 0; i < n; i++)
			qt_check_pattern(m[i], chunk, seed[i],
					 "allocation after an eviction cycle");
	}
	qt_stats(dev.fd, &s1);
	igt_assert_lte(n, s1.evictions - s0.evictions);
	igt_assert_lt(0, s1.bytes_from_vram - s0.bytes_from_vram);
	igt_assert_lt(0, s1.bytes_to_vram - s0.bytes_to_vram);
	/* and the GPU sees the same bytes */
	for (i = 0; i < n; i += 5)
		igt_assert_eq(gpu_csum(h[i], chunk),
			      host_pattern_csum(chunk, seed[i]));
	for (i = 0; i < n; i++) {
		qt_unmap(dev.fd, h[i], m[i], chunk);
		qt_close(dev.fd, h[i]);
	}
	free(h);
	free(seed);
	free(m);
}

/*
 * A CPU mapping follows the allocation through every move: same address,
 * same bytes, writes land in the allocation (its GPU checksum). Larger
 * than what one fault maps (4 MiB), the pages beyond the first fault's
 * come from later faults after each move.
 */
static void evict_while_mapped(uint64_t size)
{
	struct {
		uint32_t op, seg, want_seg, want_path;
		bool local;	/* needs non-visible VRAM + aperture */
	} steps[] = {
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE,
		  QGPU_SEG_VISIBLE, QGPU_CPU_PATH_BAR, false },
		{ QGPU_RESIDE_EVICT_SYSTEM, 0, QGPU_SEG_SYSTEM,
		  QGPU_CPU_PATH_SYSTEM, false },
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL,
		  QGPU_SEG_LOCAL, QGPU_CPU_PATH_HAP, true },
		{ QGPU_RESIDE_EVICT, 0, QGPU_SEG_APERTURE,
		  QGPU_CPU_PATH_SYSTEM, true },
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE,
		  QGPU_SEG_VISIBLE, QGPU_CPU_PATH_BAR, false },
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE,
		  QGPU_SEG_APERTURE, QGPU_CPU_PATH_SYSTEM, false },
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL,
		  QGPU_SEG_LOCAL, QGPU_CPU_PATH_HAP, true },
		{ QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE,
		  QGPU_SEG_VISIBLE, QGPU_CPU_PATH_BAR, false },
	};
	uint32_t h, seed = 7, i;
	struct drm_qgpu_gem_info info;
	uint32_t *p;

	h = qt_bo(dev.fd, size, have_local ? ALLSEG : VIS_APT,
		  QGPU_GEM_CPU_ACCESS, 0);
	p = qt_map(dev.fd, h, size);
	qgpu_pattern_fill(p, size, seed);
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		if (steps[i].local &&
		    (!have_local || !dev.info.host_aperture_size))
			continue;
		qt_reside(dev.fd, h, steps[i].op, steps[i].seg);
		info = qt_info(dev.fd, h);
		igt_assert_eq(info.segment, steps[i].want_seg);
		/* same address, same bytes */
		qt_check_pattern(p, size, seed, "after a move");
		info = qt_info(dev.fd, h);
		igt_assert_f(info.cpu_path == steps[i].want_path,
			     "step %u: cpu_path %u (%s), expected %u\n",
			     i, info.cpu_path,
			     qgpu_cpu_path_name(info.cpu_path),
			     steps[i].want_path);
		/* writes after the move land in the allocation */
		seed += 11;
		qgpu_pattern_fill(p, size, seed);
		igt_assert_eq(gpu_csum(h, size),
			      host_pattern_csum(size, seed));
		qt_check_pattern(p, size, seed, "after the GPU read");
	}
	qt_unmap(dev.fd, h, p, size);
	qt_close(dev.fd, h);
}

igt_main
{
	igt_fixture {
		qt_props_read(&props);
		qt_open(&dev, QGPU_NODE_RENDER);
		have_local = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) != NULL;
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("segments-vs-config") {
		struct drm_qgpu_segment_stats ss0, ss1;
		struct drm_qgpu_gem_info info;
		const struct drm_qgpu_segment *s;
		uint32_t ids[] = { QGPU_SEG_VISIBLE, QGPU_SEG_LOCAL,
				   QGPU_SEG_APERTURE }, i, h, j;
		uint64_t vram_reserved;

		igt_assert_eq(dev.info.vram_size, props.vram);
		/*
		 * All of VRAM but what the driver keeps for itself: with an
		 * MMU, the paging process's page tables (at most 1 MiB).
		 */
		vram_reserved = props.vram -
				qt_seg_usable(&dev, QGPU_SEG_VISIBLE) -
				qt_seg_usable(&dev, QGPU_SEG_LOCAL);
		if (dev.info.caps & QGPU_INFO_CAP_MMU)
			igt_assert(vram_reserved % 4096 == 0 &&
				   vram_reserved > 0 && vram_reserved <= (1 << 20));
		else
			igt_assert_eq_u64(vram_reserved, 0);
		igt_assert_eq(have_local, props.vram > props.visible);
		/* each segment takes an allocation at its own addresses */
		for (i = 0; i < ARRAY_SIZE(ids); i++) {
			s = qgpu_dev_segment(&dev, ids[i]);
			if (!s)
				continue;
			qt_seg_stats(dev.fd, ids[i], &ss0);
			igt_assert_eq_u64(ss0.size, s->size);
			h = qt_bo(dev.fd, 64 * 1024, QGPU_SEGBIT(ids[i]), 0, 0);
			info = qt_info(dev.fd, h);
			igt_assert_eq(info.segment, QGPU_SEG_SYSTEM);
			igt_assert_eq_u64(info.gpu_addr, 0);
			igt_assert_eq_u64(info.size, 64 * 1024);
			igt_assert_eq(info.segment_mask, QGPU_SEGBIT(ids[i]));
			qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, ids[i]);
			info = qt_info(dev.fd, h);
			igt_assert_eq(info.segment, ids[i]);
			igt_assert_lte_u64(s->base, info.gpu_addr);
			igt_assert_lte_u64(info.gpu_addr + info.size,
					   s->base + s->size);
			igt_assert_eq_u64(info.gpu_addr % 4096, 0);
			qt_seg_stats(dev.fd, ids[i], &ss1);
			igt_assert_eq(ss1.allocations, ss0.allocations + 1);
			igt_assert_eq_u64(ss1.used, ss0.used + 64 * 1024);
			qt_close(dev.fd, h);
			/*
			 * Deferred destruction: the range comes back once the
			 * paging that placed it is done (the close never waits).
			 */
			for (j = 0; j < 5000; j++) {
				qt_seg_stats(dev.fd, ids[i], &ss1);
				if (ss1.allocations == ss0.allocations)
					break;
				usleep(1000);
			}
			igt_assert_eq(ss1.allocations, ss0.allocations);
			igt_assert_eq_u64(ss1.used, ss0.used);
		}
	}

	igt_subtest("zero-filled-new-allocations") {
		uint64_t size = 1 * MiB;
		struct drm_qgpu_stats s0, s1;
		uint32_t a, b;
		uint8_t *p;
		uint64_t i;

		/* leave a pattern in VRAM, free it, take the space again */
		a = qt_bo(dev.fd, size, VIS_APT, QGPU_GEM_CPU_ACCESS, 0);
		qt_reside(dev.fd, a, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		p = qt_map(dev.fd, a, size);
		memset(p, 0xab, size);
		qt_unmap(dev.fd, a, p, size);
		qt_close(dev.fd, a);
		qt_stats(dev.fd, &s0);
		b = qt_bo(dev.fd, size, VIS_APT, QGPU_GEM_CPU_ACCESS, 0);
		qt_reside(dev.fd, b, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		qt_stats(dev.fd, &s1);
		igt_assert_lte_u64(size, s1.bytes_filled - s0.bytes_filled);
		p = qt_map(dev.fd, b, size);
		for (i = 0; i < size; i++)
			igt_assert_f(p[i] == 0, "byte %llu of a new allocation is %#x\n",
				     (unsigned long long)i, p[i]);
		qt_unmap(dev.fd, b, p, size);
		qt_close(dev.fd, b);
		/* also through the GPU, for a non-CPU-accessible one */
		b = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		igt_assert_eq(gpu_csum(b, size), qt_csum_const(0, size / 4));
		qt_close(dev.fd, b);
	}

	igt_subtest("oversubscribe-4x") {
		oversubscribe(4.0, 3, false);
	}

	igt_subtest("oversubscribe-writes-after-moves") {
		oversubscribe(2.0, 4, true);
	}

	igt_subtest("evict-while-mapped")
		evict_while_mapped(1 * MiB);

	igt_subtest("evict-while-mapped-larger-than-a-fault")
		evict_while_mapped(6 * MiB + 12 * 1024);

	igt_subtest("gpu-writes-seen-through-mapping") {
		uint64_t size = 256 * 1024;
		uint32_t segs[] = { QGPU_SEG_VISIBLE, QGPU_SEG_LOCAL,
				    QGPU_SEG_APERTURE }, i, h, *p;
		struct qgpu_cb *cb;
		uint64_t k;

		h = qt_bo(dev.fd, size, have_local ? ALLSEG : VIS_APT,
			  QGPU_GEM_CPU_ACCESS, 0);
		p = qt_map(dev.fd, h, size);
		cb = qt_cb(&dev);
		for (i = 0; i < ARRAY_SIZE(segs); i++) {
			if (segs[i] == QGPU_SEG_LOCAL && !have_local)
				continue;
			qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, segs[i]);
			qgpu_cb_reset(cb);
			qgpu_cb_bind(cb, 0, h, 0, size);
			qgpu_cb_fill(cb, 0, 0, size, 0x01010101u * (i + 1));
			qt_run(dev.fd, ctx, cb, 10);
			igt_assert_eq(qt_info(dev.fd, h).segment, segs[i]);
			for (k = 0; k < size / 4; k++)
				igt_assert_f(p[k] == 0x01010101u * (i + 1),
					     "segment %u: word %llu is %#x\n",
					     segs[i], (unsigned long long)k,
					     p[k]);
		}
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, p, size);
		qt_close(dev.fd, h);
	}

	igt_subtest("host-aperture") {
		uint64_t size = 2 * MiB;
		struct drm_qgpu_stats s0, s1;
		struct drm_qgpu_gem_info info;
		uint32_t h;
		void *p;

		igt_require(have_local && dev.info.host_aperture_size >= size);
		igt_assert(qgpu_dev_segment(&dev, QGPU_SEG_LOCAL)->flags &
			   QGPU_SEGF_CPU_HOST_APERTURE);
		qt_stats(dev.fd, &s0);
		h = qt_bo(dev.fd, size, LOC_APT, QGPU_GEM_CPU_ACCESS,
			  QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL);
		p = qt_map(dev.fd, h, size);
		qgpu_pattern_fill(p, size, 42);
		info = qt_info(dev.fd, h);
		igt_assert_eq(info.segment, QGPU_SEG_LOCAL);
		igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_HAP);
		qt_stats(dev.fd, &s1);
		igt_assert_lte(1, s1.hap_maps - s0.hap_maps);
		/* the CPU wrote non-visible VRAM itself: the GPU sees it */
		igt_assert_eq(gpu_csum(h, size), host_pattern_csum(size, 42));
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_LOCAL);
		qt_check_pattern(p, size, 42, "host aperture read-back");
		/* moving out releases the aperture pages */
		qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		qt_stats(dev.fd, &s1);
		igt_assert_lte(1, s1.hap_unmaps - s0.hap_unmaps);
		qt_check_pattern(p, size, 42, "after leaving the aperture");
		qt_unmap(dev.fd, h, p, size);
		qt_close(dev.fd, h);
	}

	igt_subtest("host-aperture-exhaustion") {
		uint64_t hap = dev.info.host_aperture_size, chunk;
		unsigned int n, i, via_hap = 0, fallback = 0;
		struct drm_qgpu_gem_info info;
		uint32_t h[64];
		void *p[64];

		igt_require(have_local && hap);
		chunk = hap / 4;
		n = 6;	/* 1.5x the aperture */
		igt_require(chunk * n <= qt_seg_usable(&dev, QGPU_SEG_LOCAL));
		for (i = 0; i < n; i++) {
			h[i] = qt_bo(dev.fd, chunk, LOC_APT, QGPU_GEM_CPU_ACCESS,
				     QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
			qt_reside(dev.fd, h[i], QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_LOCAL);
			p[i] = qt_map(dev.fd, h[i], chunk);
			qgpu_pattern_fill(p[i], chunk, 500 + i);
			info = qt_info(dev.fd, h[i]);
			/* older mappings give their aperture pages back */
			igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_HAP);
			igt_assert_eq(info.segment, QGPU_SEG_LOCAL);
			via_hap++;
		}
		igt_assert_eq(via_hap, n);
		/* larger than the whole aperture: evicted where the CPU reaches */
		if (2 * hap <= qt_seg_usable(&dev, QGPU_SEG_LOCAL)) {
			uint32_t big = qt_bo(dev.fd, 2 * hap, LOC_APT,
					     QGPU_GEM_CPU_ACCESS,
					     QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
			void *bp;

			qt_reside(dev.fd, big, QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_LOCAL);
			bp = qt_map(dev.fd, big, 2 * hap);
			qgpu_pattern_fill(bp, 2 * hap, 77);
			info = qt_info(dev.fd, big);
			igt_assert_eq(info.cpu_path, QGPU_CPU_PATH_SYSTEM);
			igt_assert_neq(info.segment, QGPU_SEG_LOCAL);
			fallback++;
			qt_check_pattern(bp, 2 * hap, 77, "evicted to system");
			qt_unmap(dev.fd, big, bp, 2 * hap);
			qt_close(dev.fd, big);
		}
		igt_assert(fallback <= 1);
		for (i = 0; i < n; i++) {
			qt_check_pattern(p[i], chunk, 500 + i,
					 "aperture exhausted");
			igt_assert_eq(gpu_csum(h[i], chunk),
				      host_pattern_csum(chunk, 500 + i));
			qt_check_pattern(p[i], chunk, 500 + i,
					 "after the GPU read");
		}
		for (i = 0; i < n; i++) {
			qt_unmap(dev.fd, h[i], p[i], chunk);
			qt_close(dev.fd, h[i]);
		}
	}

	igt_subtest("host-aperture-noncontiguous") {
		uint64_t hap = dev.info.host_aperture_size, q;
		uint32_t h[4], e;
		void *p[4], *pe;
		unsigned int i;

		igt_require(have_local && hap);
		q = hap / 4;
		igt_require(6 * q <= qt_seg_usable(&dev, QGPU_SEG_LOCAL));
		for (i = 0; i < 4; i++) {
			h[i] = qt_bo(dev.fd, q, LOC_APT, QGPU_GEM_CPU_ACCESS,
				     QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
			qt_reside(dev.fd, h[i], QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_LOCAL);
			p[i] = qt_map(dev.fd, h[i], q);
			qgpu_pattern_fill(p[i], q, 900 + i);
			igt_assert_eq(qt_info(dev.fd, h[i]).cpu_path, QGPU_CPU_PATH_HAP);
		}
		/* free every other quarter: no run of half the aperture */
		for (i = 1; i < 4; i += 2) {
			qt_unmap(dev.fd, h[i], p[i], q);
			qt_close(dev.fd, h[i]);
		}
		e = qt_bo(dev.fd, 2 * q, LOC_APT, QGPU_GEM_CPU_ACCESS,
			  QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
		qt_reside(dev.fd, e, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL);
		pe = qt_map(dev.fd, e, 2 * q);
		qgpu_pattern_fill(pe, 2 * q, 999);
		/* mapped through two runs, the others keep their pages */
		igt_assert_eq(qt_info(dev.fd, e).cpu_path, QGPU_CPU_PATH_HAP);
		igt_assert_eq(qt_info(dev.fd, e).segment, QGPU_SEG_LOCAL);
		for (i = 0; i < 4; i += 2)
			igt_assert_eq(qt_info(dev.fd, h[i]).cpu_path, QGPU_CPU_PATH_HAP);
		qt_check_pattern(pe, 2 * q, 999, "two aperture runs");
		igt_assert_eq(gpu_csum(e, 2 * q), host_pattern_csum(2 * q, 999));
		for (i = 0; i < 4; i += 2) {
			qt_check_pattern(p[i], q, 900 + i, "kept its pages");
			qt_unmap(dev.fd, h[i], p[i], q);
			qt_close(dev.fd, h[i]);
		}
		qt_unmap(dev.fd, e, pe, 2 * q);
		qt_close(dev.fd, e);
	}

	igt_subtest("lock-rules") {
		struct drm_qgpu_gem_lock lk = { 0 };
		struct drm_qgpu_gem_unlock ul = { 0 };
		struct drm_qgpu_gem_info info;
		uint64_t off;
		uint32_t h, *p;

		/* a CPU-accessible allocation that may live in non-visible
		 * VRAM must have the aperture segment in its set */
		if (have_local) {
			igt_assert_eq(create_err(4096, QGPU_SEGBIT(QGPU_SEG_LOCAL),
						 QGPU_GEM_CPU_ACCESS, 0), -EINVAL);
			igt_assert_eq(create_err(4096,
				QGPU_SEGBIT(QGPU_SEG_LOCAL) |
				QGPU_SEGBIT(QGPU_SEG_VISIBLE),
				QGPU_GEM_CPU_ACCESS, 0), -EINVAL);
			igt_assert_eq(create_err(4096, LOC_APT,
						 QGPU_GEM_CPU_ACCESS, 0), 0);
			igt_assert_eq(create_err(4096, QGPU_SEGBIT(QGPU_SEG_LOCAL),
						 0, 0), 0);
		}
		igt_assert_eq(create_err(4096, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
					 QGPU_GEM_CPU_ACCESS, 0), 0);

		/* non-CPU-accessible, no aperture segment, not resident: it
		 * may be locked (system memory) and is then kept out of the
		 * memory segments for the duration of the lock */
		h = qt_bo(dev.fd, 64 * 1024, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		p = qt_map(dev.fd, h, 64 * 1024);
		qgpu_pattern_fill(p, 64 * 1024, 3);
		info = qt_info(dev.fd, h);
		igt_assert_eq(info.segment, QGPU_SEG_SYSTEM);
		igt_assert_eq(info.lock_count, 1);
		igt_assert_eq(qgpu_bo_reside(dev.fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -EBUSY);
		igt_assert_eq(qgpu_bo_reside(dev.fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT, 0,
					     NULL), -EBUSY);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_SYSTEM);
		/* nor can a submission commit it */
		{
			struct qgpu_cb *cb = qt_cb(&dev);

			qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
			qgpu_cb_nop(cb, 1);
			/* refused as the lock rule says, not for any reason */
			igt_assert_eq(qgpu_submit_wait(dev.fd, ctx, cb,
						       10 * SEC_NS, NULL), -EBUSY);
			igt_assert_eq(qt_info(dev.fd, h).segment,
				      QGPU_SEG_SYSTEM);
			qt_cb_free(cb);
		}
		/* unlocked, it may */
		qt_unmap(dev.fd, h, p, 64 * 1024);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		igt_assert_eq(gpu_csum(h, 64 * 1024),
			      host_pattern_csum(64 * 1024, 3));
		/* resident in VRAM with no aperture segment: cannot be locked */
		igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), -EBUSY);
		igt_assert_eq(qt_info(dev.fd, h).lock_count, 0);
		qt_close(dev.fd, h);

		/* non-CPU-accessible with an aperture segment: locking moves
		 * it into the aperture, and it stays out of VRAM while locked */
		h = qt_bo(dev.fd, 64 * 1024, VIS_APT, 0, 0);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		p = qt_map(dev.fd, h, 64 * 1024);
		info = qt_info(dev.fd, h);
		igt_assert_neq(info.segment, QGPU_SEG_VISIBLE);
		qgpu_pattern_fill(p, 64 * 1024, 4);
		igt_assert_eq(qgpu_bo_reside(dev.fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -EBUSY);
		qt_unmap(dev.fd, h, p, 64 * 1024);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		igt_assert_eq(gpu_csum(h, 64 * 1024),
			      host_pattern_csum(64 * 1024, 4));
		qt_close(dev.fd, h);

		/* CPU-accessible with an aperture segment: VRAM while locked */
		h = qt_bo(dev.fd, 64 * 1024, VIS_APT, QGPU_GEM_CPU_ACCESS, 0);
		p = qt_map(dev.fd, h, 64 * 1024);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		p[5] = 5;
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_VISIBLE);
		igt_assert_eq(qt_info(dev.fd, h).cpu_path, QGPU_CPU_PATH_BAR);

		/* lock counting and flags */
		igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
		igt_assert_eq(qt_info(dev.fd, h).lock_count, 2);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
		lk.handle = h;
		lk.flags = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_LOCK, &lk, EINVAL);
		ul.handle = h;
		ul.flags = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_UNLOCK, &ul, EINVAL);
		igt_assert_eq(qt_info(dev.fd, h).lock_count, 1);
		qt_unmap(dev.fd, h, p, 64 * 1024);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), -EINVAL);
		qt_close(dev.fd, h);
	}

	igt_subtest("create-bad-input") {
		uint64_t big = dev.info.vram_size > dev.info.gart_size ?
			       dev.info.vram_size : dev.info.gart_size;
		struct drm_qgpu_gem_create c;
		uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
		struct drm_qgpu_stats s0, s1;

		qt_stats(dev.fd, &s0);
		igt_assert_eq(create_err(0, vis, 0, 0), -EINVAL);
		igt_assert_eq(create_err(1ull << 62, vis, 0, 0), -EINVAL);
		igt_assert_eq(create_err(~0ull, vis, 0, 0), -EINVAL);
		igt_assert_eq(create_err(~0ull - 4095, vis, 0, 0), -EINVAL);
		if (big < (4ull << 30))
			igt_assert_eq(create_err(big + 4096, ALLSEG &
				(have_local ? ~0u : ~QGPU_SEGBIT(QGPU_SEG_LOCAL)),
				0, 0), -EINVAL);
		/* segment sets: empty, system bit, unknown bits */
		igt_assert_eq(create_err(4096, 0, 0, 0), -EINVAL);
		igt_assert_eq(create_err(4096, QGPU_SEGBIT(QGPU_SEG_SYSTEM), 0,
					 0), -EINVAL);
		igt_assert_eq(create_err(4096, 1u << 4, 0, 0), -EINVAL);
		igt_assert_eq(create_err(4096, vis | 1u << 31, 0, 0), -EINVAL);
		if (!have_local)
			igt_assert_eq(create_err(4096,
				QGPU_SEGBIT(QGPU_SEG_LOCAL), 0, 0), -EINVAL);
		/* preferred segments */
		igt_assert_eq(create_err(4096, vis, 0,
			QGPU_PREF(QGPU_SEG_APERTURE, 0, 0)), -EINVAL);
		igt_assert_eq(create_err(4096, VIS_APT, 0,
			QGPU_PREF(QGPU_SEG_VISIBLE, QGPU_SEG_LOCAL, 0)),
			-EINVAL);
		igt_assert_eq(create_err(4096, VIS_APT, 0,
			QGPU_PREF(QGPU_SEG_VISIBLE, 0, QGPU_SEG_APERTURE)),
			-EINVAL);
		igt_assert_eq(create_err(4096, VIS_APT, 0, 4), -EINVAL);
		igt_assert_eq(create_err(4096, VIS_APT, 0, 0xff), -EINVAL);
		igt_assert_eq(create_err(4096, VIS_APT, 0,
			QGPU_PREF(QGPU_SEG_APERTURE, QGPU_SEG_VISIBLE, 0)), 0);
		/* flags */
		/* the lowest bit without a meaning (QGPU_GEM_* are contiguous) */
		igt_assert_eq(create_err(4096, vis, (QGPU_GEM_CREATE_FLAGS + 1) &
					 ~QGPU_GEM_CREATE_FLAGS, 0), -EINVAL);
		igt_assert_eq(create_err(4096, vis, 0x80000000u, 0), -EINVAL);
		/* sizes round up to pages */
		memset(&c, 0, sizeof(c));
		c.size = 1;
		c.segment_mask = vis;
		do_ioctl(dev.fd, DRM_IOCTL_QGPU_GEM_CREATE, &c);
		igt_assert_eq_u64(qt_info(dev.fd, c.handle).size, 4096);
		igt_assert_eq(qgpu_bo_destroy(dev.fd, c.handle), 0);
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.allocations, s0.allocations);
		igt_assert_eq_u64(s1.allocated_bytes, s0.allocated_bytes);
	}

	igt_subtest("handle-bad-input") {
		struct drm_qgpu_gem_info info;
		struct drm_qgpu_gem_reside r;
		uint32_t h, theirs, bad[] = { 0, 0x7fffffff, 0xffffffffu }, i;
		uint64_t off;
		int other = qt_reopen(&dev), mine = qt_reopen(&dev);

		/* @mine holds no objects: every number is foreign to it */
		theirs = qt_bo(other, 4096, VIS_APT, 0, 0);
		h = qt_bo(dev.fd, 4096, VIS_APT, 0, 0);
		for (i = 0; i < ARRAY_SIZE(bad) + 2; i++) {
			uint32_t x = i < ARRAY_SIZE(bad) ? bad[i] :
				     i == ARRAY_SIZE(bad) ? theirs : h;

			igt_assert_eq(qgpu_bo_info(mine, x, &info), -ENOENT);
			igt_assert_eq(qgpu_bo_lock(mine, x, &off), -ENOENT);
			igt_assert_eq(qgpu_bo_unlock(mine, x), -ENOENT);
			igt_assert_eq(qgpu_bo_reside(mine, x,
				QGPU_RESIDE_MAKE_RESIDENT, 0, NULL), -ENOENT);
			igt_assert_eq(qgpu_bo_destroy(mine, x), -EINVAL);
		}
		close(mine);
		/* reside: ops, segments, flags */
		memset(&r, 0, sizeof(r));
		r.handle = h;
		r.op = 0;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r, EINVAL);
		r.op = 4;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r, EINVAL);
		r.op = QGPU_RESIDE_MAKE_RESIDENT;
		r.segment = QGPU_SEG_MAX + 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r, EINVAL);
		if (!have_local) {
			r.segment = QGPU_SEG_LOCAL;
			do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r,
				     EINVAL);
		}
		/* a segment outside the allocation's set */
		r.segment = QGPU_SEG_LOCAL;
		if (have_local)
			do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r,
				     EINVAL);
		r.segment = 0;
		r.flags = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r, EINVAL);
		r.flags = 0;
		r.op = QGPU_RESIDE_EVICT;
		r.segment = QGPU_SEG_VISIBLE;
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_GEM_RESIDE, &r, EINVAL);
		/* double close */
		qt_close(dev.fd, h);
		igt_assert_eq(qgpu_bo_destroy(dev.fd, h), -EINVAL);
		igt_assert_eq(qgpu_bo_info(dev.fd, h, &info), -ENOENT);
		qt_close(other, theirs);
		close(other);
	}

	igt_subtest("mmap-bad-input") {
		uint32_t h, theirs;
		uint64_t off, toff;
		void *p;
		int other = qt_reopen(&dev);

		h = qt_bo(dev.fd, 8192, VIS_APT, QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
		/* beyond the object */
		p = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_SHARED,
			 dev.fd, off);
		igt_assert(p == MAP_FAILED);
		igt_assert_eq(errno, EINVAL);
		/* not starting at the object's first page */
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dev.fd, off + 4096);
		igt_assert(p == MAP_FAILED);
		/* no object there */
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dev.fd,
			 off + (1ull << 32));
		igt_assert(p == MAP_FAILED);
		/* the whole object, and just its first page, are fine */
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, dev.fd,
			 off);
		igt_assert(p != MAP_FAILED);
		((volatile uint32_t *)p)[2047] = 1;
		munmap(p, 8192);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dev.fd, off);
		igt_assert(p != MAP_FAILED);
		munmap(p, 4096);
		/* another file's object: its offset is not ours to map */
		theirs = qt_bo(other, 4096, VIS_APT, QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(qgpu_bo_lock(other, theirs, &toff), 0);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dev.fd, toff);
		igt_assert(p == MAP_FAILED);
		igt_assert_eq(errno, EACCES);
		igt_assert_eq(qgpu_bo_unlock(other, theirs), 0);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
		qt_close(other, theirs);
		close(other);
		qt_close(dev.fd, h);
	}

	igt_subtest("too-big-for-a-segment") {
		uint64_t size = qt_seg_usable(&dev, QGPU_SEG_VISIBLE) + 4096;
		uint32_t h;

		igt_require(size <= dev.info.gart_size / 2);
		h = qt_bo(dev.fd, size, VIS_APT, 0, 0);
		igt_assert_eq(qgpu_bo_reside(dev.fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -ENOSPC);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_SYSTEM);
		/* by preference it lands where it fits */
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_APERTURE);
		qt_close(dev.fd, h);
	}

	igt_subtest("eviction-policies") {
		const char *names[] = { "largest", "lowest-offset", "gdsf",
					"future-use", "reuse-interval", "lru" };
		unsigned int i;

		igt_require(policy_file() && set_policy("lru"));
		for (i = 0; i < ARRAY_SIZE(names); i++) {
			igt_assert(set_policy(names[i]));
			oversubscribe(2.0, 2, true);
		}
	}

	igt_subtest("policy-file-by-name-or-number") {
		static const char * const shown[] = {
			"[lru] largest lowest-offset gdsf future-use reuse-interval",
			"lru [largest] lowest-offset gdsf future-use reuse-interval",
			"lru largest [lowest-offset] gdsf future-use reuse-interval",
			"lru largest lowest-offset [gdsf] future-use reuse-interval",
			"lru largest lowest-offset gdsf [future-use] reuse-interval",
			"lru largest lowest-offset gdsf future-use [reuse-interval]",
		};
		char buf[128] = { 0 }, num[4];
		unsigned int i;
		ssize_t n;
		int fd;

		igt_require(policy_file());
		for (i = 0; i < ARRAY_SIZE(shown); i++) {
			snprintf(num, sizeof(num), "%u", i);
			igt_assert(set_policy(num));
			fd = open(policy_file(), O_RDONLY);
			igt_assert(fd >= 0);
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			igt_assert(n > 0);
			buf[n] = 0;
			igt_assert_f(!strncmp(buf, shown[i], strlen(shown[i])),
				     "wrote %s, the file says %s\n", num, buf);
		}
		/* out of range and junk are refused, the policy unchanged */
		igt_assert(!set_policy("6"));
		igt_assert(!set_policy("lru2"));
		igt_assert(!set_policy("-1"));
		igt_assert(set_policy("lru"));
	}

	/*
	 * A destroyed allocation's VRAM goes back to the host (a DISCARD once
	 * its work is done: the device's committed VRAM falls by its size),
	 * and zero-filling a new allocation there takes nothing back from the
	 * host, while it still reads zero (docs/hw-spec.md section 19).
	 */
	igt_subtest("destroy-gives-vram-back") {
		const uint64_t size = 8 * MiB;
		struct drm_qgpu_stats s0, s1, s2, s3;
		struct qgpu_cb *cb;
		uint32_t a, b, seg = have_local ? QGPU_SEG_LOCAL
						: QGPU_SEG_VISIBLE;
		int64_t t0;

		qt_stats(dev.fd, &s0);
		igt_require_f(dev.info.caps & QGPU_INFO_CAP_VRAM_COMMITTED,
			      "device without VRAM_COMMITTED\n");
		a = qt_bo(dev.fd, size, QGPU_SEGBIT(seg), 0, 0);
		qt_reside(dev.fd, a, QGPU_RESIDE_MAKE_RESIDENT, seg);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, a, 0, size);
		qgpu_cb_fill(cb, 0, 0, size, 0x5eed0001);
		qt_run(dev.fd, ctx, cb, 30);
		qt_cb_free(cb);
		qt_stats(dev.fd, &s1);
		igt_assert_lte_u64(size, s1.vram_committed);
		qt_close(dev.fd, a);
		/* destruction is deferred: the range is given back once idle */
		t0 = qgpu_now_ns();
		do {
			usleep(10000);
			qt_stats(dev.fd, &s2);
		} while (s2.vram_discards == s0.vram_discards &&
			 qgpu_now_ns() - t0 < 10 * SEC_NS);
		igt_assert_eq_u64(s2.vram_discards - s0.vram_discards, 1);
		igt_assert_eq_u64(s2.vram_discarded_bytes -
				  s0.vram_discarded_bytes, size);
		igt_info("committed VRAM: %llu KiB with the allocation, %llu KiB after\n",
			 (unsigned long long)s1.vram_committed >> 10,
			 (unsigned long long)s2.vram_committed >> 10);
		igt_assert_lte_u64(s2.vram_committed + size, s1.vram_committed);
		/* a new allocation: zero-filled, for nothing */
		b = qt_bo(dev.fd, size, QGPU_SEGBIT(seg), 0, 0);
		qt_reside(dev.fd, b, QGPU_RESIDE_MAKE_RESIDENT, seg);
		qt_stats(dev.fd, &s3);
		igt_assert_lte_u64(size, s3.bytes_filled - s2.bytes_filled);
		igt_assert_eq_u64(s3.vram_committed, s2.vram_committed);
		igt_assert_eq(gpu_csum(b, size), qt_csum_const(0, size / 4));
		qt_close(dev.fd, b);
		/* per file: the device-wide value is not a file's */
		igt_assert_eq(qgpu_query_file_stats(dev.fd, &s3), 0);
		igt_assert_eq_u64(s3.vram_committed, 0);
	}

	/*
	 * Hostile timing for the DISCARD of a destroyed allocation's VRAM: its
	 * range taken again at once by another allocation, written by the CPU
	 * right away, while the discard may still be queued. Whatever lands
	 * there next gets its content from a later paging command, so the
	 * discard never erases it: every byte written is read back, in every
	 * round, with the visible segment nearly full so that the range is
	 * reused.
	 */
	igt_subtest("discard-never-erases-reused-vram") {
		const uint64_t size = 2 * MiB;
		uint64_t room = qt_seg_usable(&dev, QGPU_SEG_VISIBLE), i;
		struct drm_qgpu_stats s0, s1;
		uint32_t filler = 0, a, b, r;
		struct qgpu_cb *cb;
		uint32_t *m;

		igt_require(room > 3 * size);
		filler = qt_bo(dev.fd, room - 2 * size,
			       QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		qt_reside(dev.fd, filler, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		qt_stats(dev.fd, &s0);
		for (r = 0; r < 12; r++) {
			a = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
				  0, 0);
			qt_reside(dev.fd, a, QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_VISIBLE);
			cb = qt_cb(&dev);
			qgpu_cb_bind(cb, 0, a, 0, size);
			qgpu_cb_fill(cb, 0, 0, size, 0xdead0000 + r);
			qt_run(dev.fd, ctx, cb, 30);
			qt_cb_free(cb);
			qt_close(dev.fd, a);
			usleep(r * 700);
			b = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
				  QGPU_GEM_CPU_ACCESS, 0);
			qt_reside(dev.fd, b, QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_VISIBLE);
			m = qt_map(dev.fd, b, size);
			for (i = 0; i < size / 4; i += 1024)
				m[i] = 0xb0b00000 + r;
			/* let every queued discard run */
			usleep(50000);
			for (i = 0; i < size / 4; i++)
				igt_assert_f(m[i] == (i % 1024 ? 0 : 0xb0b00000 + r),
					     "round %u word %llu: %#x\n", r,
					     (unsigned long long)i, m[i]);
			qt_unmap(dev.fd, b, m, size);
			qt_close(dev.fd, b);
		}
		qt_stats(dev.fd, &s1);
		igt_info("%llu discards in %u rounds\n",
			 (unsigned long long)(s1.vram_discards - s0.vram_discards),
			 r);
		qt_close(dev.fd, filler);
	}

	igt_subtest("counters-back-to-zero") {
		struct drm_qgpu_segment_stats ss;
		uint32_t id;

		set_policy("lru");
		csum_fini();
		qt_assert_no_allocations(dev.fd);
		for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++) {
			const struct drm_qgpu_segment *s =
				qgpu_dev_segment(&dev, id);

			if (!s)
				continue;
			qt_seg_stats(dev.fd, id, &ss);
			igt_assert_eq(ss.allocations, 0);
			igt_assert_eq_u64(ss.used, s->reserved_size);
		}
	}

	igt_fixture {
		csum_fini();
		qgpu_ctx_destroy(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
