// SPDX-License-Identifier: MIT
/*
 * qgpu_split: DMA buffers executed by the device, DMA-buffer splitting
 * ("Splitting a DMA Buffer"), and what the device does with bad buffers:
 * compute results against the host with and without memory pressure, buffers
 * larger than VRAM, slot replacement and unbinding, slots that move at a
 * split point, unsplittable buffers, several processes at once, hangs, faults
 * and isolation.
 *
 * Meant for a device whose VRAM is small next to the guest's memory, e.g.
 * vram-size=32M.
 */
#include "qgpu_test.h"

#define VIS QGPU_SEGBIT(QGPU_SEG_VISIBLE)
#define APT QGPU_SEGBIT(QGPU_SEG_APERTURE)
#define MAGIC_ISOLATION 0x150141710ull

static struct qgpu_dev dev;
static uint32_t ctx;

/*
 * The chain workload, usable from forked children (no igt asserts):
 *	A[0] = fill(p0); A[i] = fill(p_i) ^ A[i-1]; res[i] = checksum(A[i])
 * over n VRAM-only allocations of @chunk bytes, one DMA buffer.
 * Returns the number of wrong results, or -errno; *portions is set.
 */
static int chain(int fd, uint32_t c, const uint32_t *h, unsigned int n,
		 uint64_t chunk, uint32_t res, volatile uint32_t *rmap,
		 uint32_t seed, uint32_t *portions)
{
	struct drm_qgpu_context_status cs;
	struct qgpu_cb cb;
	uint32_t x = 0, i;
	int ret, bad = 0;

	ret = qgpu_cb_init(&cb, dev.info.max_slots);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		qgpu_cb_bind(&cb, 0, h[i], 0, QGPU_CB_WHOLE);
		if (i)
			qgpu_cb_bind_flags(&cb, 1, h[i - 1], 0, QGPU_CB_WHOLE,
					   0);
		else
			qgpu_cb_unbind(&cb, 1);
		qgpu_cb_bind(&cb, 2, res, 0, 4096);
		qgpu_cb_fill(&cb, 0, 0, chunk, seed * 0x9e3779b9u + i);
		if (i)
			qgpu_cb_xor(&cb, 0, 0, 0, 0, 1, 0, chunk / 4);
		qgpu_cb_checksum(&cb, 0, 0, chunk, 2, i * 4);
	}
	for (i = 0; i < n; i++)
		rmap[i] = 0;
	ret = qgpu_submit_wait(fd, c, &cb, 120 * SEC_NS, portions);
	qgpu_cb_fini(&cb);
	if (ret)
		return ret;
	if (qgpu_query_context(fd, c, &cs) || cs.state != QGPU_CTX_OK)
		return -EIO;
	for (i = 0; i < n; i++) {
		uint32_t p = seed * 0x9e3779b9u + i;

		x = i ? x ^ p : p;
		if (rmap[i] != qt_csum_const(x, chunk / 4))
			bad++;
	}
	return bad;
}

/*
 * Everything the memory manager counts, to show that nothing happened;
 * apart from what the deferred destruction of earlier subtests' allocations
 * may still change on its own (their VRAM given back to the host).
 */
static void stats_equal(const struct drm_qgpu_stats *a,
			const struct drm_qgpu_stats *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	const size_t async[] = {
		offsetof(struct drm_qgpu_stats, vram_discards),
		offsetof(struct drm_qgpu_stats, vram_discarded_bytes),
		offsetof(struct drm_qgpu_stats, vram_committed),
	};
	unsigned int i, k;

	for (i = 0; i < QGPU_NUM_STATS; i++) {
		for (k = 0; k < sizeof(async) / sizeof(async[0]); k++)
			if (async[k] == i * sizeof(__u64))
				break;
		if (k < sizeof(async) / sizeof(async[0]))
			continue;
		igt_assert_f(x[i] == y[i], "counter %s changed: %llu -> %llu\n",
			     qgpu_stat_name(i), (unsigned long long)x[i],
			     (unsigned long long)y[i]);
	}
}

/* Submit, wait, and return the context's status (the context may die). */
static struct drm_qgpu_context_status run_status(uint32_t c,
						 struct qgpu_cb *cb)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_submit_wait(dev.fd, c, cb, 20 * SEC_NS, NULL), 0);
	igt_assert_eq(qgpu_query_context(dev.fd, c, &cs), 0);
	return cs;
}

static void compute(bool pressure)
{
	const uint32_t n = 64 * 1024;	/* words */
	uint32_t ha, hb, hd, he, hr, *a, *b, *d, *e, *r, i;
	uint32_t mask = qt_vram_mask(&dev) | APT, *ballast = NULL, nb = 0;
	uint64_t bsize = 0;
	void **bmap = NULL;
	struct qgpu_cb *cb;

	ha = qt_bo(dev.fd, 4 * n, mask, QGPU_GEM_CPU_ACCESS,
		   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	hb = qt_bo(dev.fd, 4 * n, mask, QGPU_GEM_CPU_ACCESS,
		   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	hd = qt_bo(dev.fd, 4 * n, mask, QGPU_GEM_CPU_ACCESS,
		   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	he = qt_bo(dev.fd, 4 * n, mask, QGPU_GEM_CPU_ACCESS,
		   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	hr = qt_result_buf(dev.fd, 4096, &r);
	a = qt_map(dev.fd, ha, 4 * n);
	b = qt_map(dev.fd, hb, 4 * n);
	d = qt_map(dev.fd, hd, 4 * n);
	e = qt_map(dev.fd, he, 4 * n);
	qgpu_pattern_fill(a, 4 * n, 1);
	qgpu_pattern_fill(b, 4 * n, 2);
	memset(d, 0xee, 4 * n);
	memset(e, 0xee, 4 * n);
	if (pressure) {
		/* twice VRAM of CPU-written ballast, pulled into VRAM last */
		bsize = (qgpu_vram_usable(&dev) / 8) & ~4095ull;
		nb = 16;
		ballast = calloc(nb, sizeof(*ballast));
		bmap = calloc(nb, sizeof(*bmap));
		igt_assert(ballast && bmap);
		for (i = 0; i < nb; i++) {
			ballast[i] = qt_bo(dev.fd, bsize, mask,
					   QGPU_GEM_CPU_ACCESS, 0);
			bmap[i] = qt_map(dev.fd, ballast[i], bsize);
			qgpu_pattern_fill(bmap[i], bsize, 900 + i);
			qt_reside(dev.fd, ballast[i], QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_VISIBLE);
		}
	}
	cb = qt_cb(&dev);
	qgpu_cb_bind_flags(cb, 0, ha, 0, QGPU_CB_WHOLE, 0);
	qgpu_cb_bind_flags(cb, 1, hb, 0, QGPU_CB_WHOLE, 0);
	qgpu_cb_bind(cb, 2, hd, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 3, he, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 4, hr, 0, 4096);
	qgpu_cb_add(cb, 2, 0, 0, 0, 1, 0, n);			/* D = A + B */
	qgpu_cb_xor(cb, 3, 0, 0, 0, 1, 0, n);			/* E = A ^ B */
	qgpu_cb_checksum(cb, 0, 0, 4 * n, 4, 0);		/* csum A */
	qgpu_cb_checksum(cb, 1, 4096, 8192, 4, 4);		/* csum B part */
	qgpu_cb_checksum(cb, 0, 0, 0, 4, 8);			/* empty */
	qgpu_cb_checksum(cb, 2, 0, 4 * n, 4, 12);		/* csum D */
	/* offsets: D[1000..1100) = A[7..107) + B[300..400) */
	qgpu_cb_add(cb, 2, 4000, 0, 28, 1, 1200, 100);
	/* in place: E = E ^ B (= A) on the second half */
	qgpu_cb_xor(cb, 3, 2 * n, 3, 2 * n, 1, 2 * n, n / 2);
	/* a copy, a fill and a timestamp */
	qgpu_cb_copy(cb, 4, 64, 0, 256, 64);
	qgpu_cb_fill(cb, 4, 128, 32, 0xfeedf00d);
	qgpu_cb_timestamp(cb, 4, 256);
	qt_run(dev.fd, ctx, cb, 30);
	qt_cb_free(cb);

	for (i = 0; i < n; i++) {
		uint32_t want_d = a[i] + b[i], want_e = a[i] ^ b[i];

		if (i >= 1000 && i < 1100)
			want_d = a[7 + i - 1000] + b[300 + i - 1000];
		if (i >= n / 2)
			want_e = a[i];
		igt_assert_f(d[i] == want_d, "ADD word %u: %#x, expected %#x\n",
			     i, d[i], want_d);
		igt_assert_f(e[i] == want_e, "XOR word %u: %#x, expected %#x\n",
			     i, e[i], want_e);
	}
	igt_assert_eq(r[0], qgpu_csum(a, n));
	igt_assert_eq(r[1], qgpu_csum(b + 1024, 2048));
	igt_assert_eq(r[2], QGPU_CSUM_INIT);
	{
		/* D before the offset ADD */
		uint32_t *d0 = malloc(4 * n);

		igt_assert(d0);
		for (i = 0; i < n; i++)
			d0[i] = a[i] + b[i];
		igt_assert_eq(r[3], qgpu_csum(d0, n));
		free(d0);
	}
	igt_assert(!memcmp(r + 16, a + 64, 64));
	for (i = 0; i < 8; i++)
		igt_assert_eq(r[32 + i], 0xfeedf00d);
	igt_assert(r[64] | r[65]);
	if (pressure) {
		for (i = 0; i < nb; i++) {
			qt_check_pattern(bmap[i], bsize, 900 + i, "ballast");
			qt_unmap(dev.fd, ballast[i], bmap[i], bsize);
			qt_close(dev.fd, ballast[i]);
		}
		free(ballast);
		free(bmap);
	}
	qt_unmap(dev.fd, ha, a, 4 * n);
	qt_unmap(dev.fd, hb, b, 4 * n);
	qt_unmap(dev.fd, hd, d, 4 * n);
	qt_unmap(dev.fd, he, e, 4 * n);
	qt_unmap(dev.fd, hr, r, 4096);
	qt_close(dev.fd, ha);
	qt_close(dev.fd, hb);
	qt_close(dev.fd, hd);
	qt_close(dev.fd, he);
	qt_close(dev.fd, hr);
}

/* Child of the four-process test. Exit 0 when every result was right. */
static int worker(int id)
{
	uint64_t vram = qgpu_vram_usable(&dev), chunk = (vram / 8) & ~4095ull;
	uint32_t h[8], res, c, portions, *rmap;
	int fd, round, ret, i;

	fd = open(dev.path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 10;
	if (qgpu_ctx_create(fd, &c))
		return 11;
	for (i = 0; i < 8; i++)
		if (qgpu_bo_create(fd, chunk, qt_vram_mask(&dev), 0, 0, &h[i]))
			return 12;
	if (qgpu_bo_create(fd, 4096, APT, QGPU_GEM_CPU_ACCESS, 0, &res) ||
	    qgpu_bo_reside(fd, res, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL) ||
	    qgpu_bo_map(fd, res, 4096, (void **)&rmap))
		return 13;
	rmap[0] = 0;
	for (round = 0; round < 4; round++) {
		ret = chain(fd, c, h, 8, chunk, res, rmap, id * 100 + round,
			    &portions);
		if (ret) {
			printf("worker %d round %d: %d (%s)\n", id, round, ret,
			       ret < 0 ? strerror(-ret) : "wrong results");
			return 1;
		}
	}
	close(fd);
	return 0;
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("compute")
		compute(false);

	igt_subtest("compute-under-pressure")
		compute(true);

	igt_subtest("split-3x-vram") {
		uint64_t vram = qgpu_vram_usable(&dev);
		uint64_t chunk = (vram / 4) & ~4095ull;
		struct drm_qgpu_context_status c0, c1;
		struct drm_qgpu_stats s0, s1;
		uint32_t h[12], res, *rmap, portions = 0, i;
		int bad;

		for (i = 0; i < 12; i++)
			h[i] = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		res = qt_result_buf(dev.fd, 4096, &rmap);
		qt_stats(dev.fd, &s0);
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &c0), 0);
		bad = chain(dev.fd, ctx, h, 12, chunk, res, rmap, 1, &portions);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &c1), 0);
		igt_assert_f(bad == 0, "chain: %d (%s)\n", bad,
			     bad < 0 ? strerror(-bad) : "wrong checksums");
		igt_info("12 x %llu KiB (3x VRAM): %u portions, %llu KiB paged out of VRAM\n",
			 (unsigned long long)chunk >> 10, portions,
			 (unsigned long long)(s1.bytes_from_vram -
					      s0.bytes_from_vram) >> 10);
		/* at least two splits, and the counters saw them */
		igt_assert_lte(3, portions);
		igt_assert_eq_u64(s1.split_portions - s0.split_portions,
				  portions);
		igt_assert_eq_u64(s1.submissions - s0.submissions, 1);
		igt_assert_eq_u64(c1.portions - c0.portions, portions);
		igt_assert_eq_u64(c1.submissions - c0.submissions, 1);
		igt_assert_lt(0, s1.evictions - s0.evictions);
		igt_assert_lt(0, s1.bytes_from_vram - s0.bytes_from_vram);
		/* again, now that everything starts out of place */
		bad = chain(dev.fd, ctx, h, 12, chunk, res, rmap, 2, &portions);
		igt_assert_eq(bad, 0);
		igt_assert_lte(3, portions);
		for (i = 0; i < 12; i++)
			qt_close(dev.fd, h[i]);
		qt_unmap(dev.fd, res, rmap, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("split-early-spares-what-the-buffer-uses-later") {
		/*
		 * One DMA buffer over twice VRAM uses each of 8 allocations
		 * once, each at a split point of its own (read, then
		 * rewrite), and runs twice. The second run finds VRAM full of
		 * what its own later steps use: a walk that evicts those to
		 * place the first steps pages all 8 in again; one that splits
		 * early evicts what its earlier portions no longer need and
		 * uses the ones still resident in place. Contents survive
		 * every move.
		 */
		uint64_t vram = qgpu_vram_usable(&dev);
		uint64_t chunk = (vram / 4) & ~4095ull;
		struct drm_qgpu_stats s0, s1;
		uint32_t h[8], res, *r, portions, run, i;
		struct qgpu_cb cb;

		for (i = 0; i < 8; i++)
			h[i] = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		for (run = 1; run <= 2; run++) {
			igt_assert_eq(qgpu_cb_init(&cb, dev.info.max_slots), 0);
			for (i = 0; i < 8; i++) {
				qgpu_cb_bind(&cb, 0, h[i], 0, QGPU_CB_WHOLE);
				qgpu_cb_bind(&cb, 2, res, 0, 4096);
				qgpu_cb_checksum(&cb, 0, 0, chunk, 2, i * 4);
				qgpu_cb_fill(&cb, 0, 0, chunk, run * 0x100 + i);
			}
			for (i = 0; i < 8; i++)
				r[i] = 0;
			qt_stats(dev.fd, &s0);
			igt_assert_eq(qgpu_submit_wait(dev.fd, ctx, &cb,
						       120 * SEC_NS,
						       &portions), 0);
			qt_stats(dev.fd, &s1);
			qgpu_cb_fini(&cb);
			for (i = 0; i < 8; i++)
				igt_assert_eq(r[i], qt_csum_const(run == 1 ? 0 :
								  0x100 + i,
								  chunk / 4));
			igt_info("run %u: %u portions, %llu KiB into VRAM\n",
				 run, portions,
				 (unsigned long long)(s1.bytes_to_vram -
						      s0.bytes_to_vram) >> 10);
			igt_assert_lte(2, portions);
			/* each is paged in at most once by one buffer */
			igt_assert_lte(s1.bytes_to_vram - s0.bytes_to_vram,
				       8 * chunk);
		}
		/* the second run used some where the first left them */
		igt_assert_lt(s1.bytes_to_vram - s0.bytes_to_vram, 8 * chunk);
		for (i = 0; i < 8; i++)
			qt_close(dev.fd, h[i]);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("split-by-choice-spares-a-higher-priority-allocation") {
		/*
		 * X (high priority) is resident in visible VRAM; one DMA
		 * buffer then fills and reads four allocations of a quarter
		 * of that segment each, each at a split point of its own.
		 * The fourth needs room: X, or one of the three that a split
		 * there would release (the buffer is done with them). The
		 * victim policy weighs both and takes the lower priority
		 * first, so the walk splits and X stays where it is. A walk
		 * that offered the policy only X would evict it (and not
		 * split). Contents are checked byte for byte.
		 */
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t chunk = (v / 4) & ~4095ull;
		const uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
		uint32_t x, a[4], res, *r, portions, i, prio = QGPU_PRIORITY_HIGH;
		struct drm_qgpu_stats s0, s1;
		struct qgpu_cb *cb;

		x = qt_bo(dev.fd, chunk, vis, 0, 0);
		for (i = 0; i < 4; i++)
			a[i] = qt_bo(dev.fd, chunk, vis, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		igt_assert_eq(qgpu_bo_set_priority(dev.fd, &x, &prio, 1), 0);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, chunk, 0x5a5a0000);
		igt_assert_eq(qt_run(dev.fd, ctx, cb, 60), 1);
		qt_cb_free(cb);
		igt_assert_eq(qt_info(dev.fd, x).segment, QGPU_SEG_VISIBLE);

		cb = qt_cb(&dev);
		for (i = 0; i < 4; i++) {
			qgpu_cb_bind(cb, 0, a[i], 0, QGPU_CB_WHOLE);
			qgpu_cb_bind(cb, 2, res, 0, 4096);
			qgpu_cb_fill(cb, 0, 0, chunk, 0x300 + i);
			qgpu_cb_checksum(cb, 0, 0, chunk, 2, i * 4);
		}
		qt_stats(dev.fd, &s0);
		portions = qt_run(dev.fd, ctx, cb, 60);
		qt_stats(dev.fd, &s1);
		qt_cb_free(cb);
		igt_info("%u portions, %llu evictions\n", portions,
			 (unsigned long long)(s1.evictions - s0.evictions));
		for (i = 0; i < 4; i++)
			igt_assert_eq(r[i], qt_csum_const(0x300 + i, chunk / 4));
		igt_assert_lte(2, portions);
		igt_assert_eq(qt_info(dev.fd, x).segment, QGPU_SEG_VISIBLE);

		/* X kept its content */
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 2, res, 0, 4096);
		qgpu_cb_checksum(cb, 0, 0, chunk, 2, 64);
		qt_run(dev.fd, ctx, cb, 60);
		qt_cb_free(cb);
		igt_assert_eq(r[16], qt_csum_const(0x5a5a0000, chunk / 4));
		qt_close(dev.fd, x);
		for (i = 0; i < 4; i++)
			qt_close(dev.fd, a[i]);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("rebind-all-at-split-points") {
		/*
		 * A persistent accumulator P stays bound through a stream of
		 * allocations twice the size of VRAM; libqgpu re-binds it
		 * (and everything else live) at every binding change, as seed
		 * 000 advises, so each one is a complete split point.
		 */
		uint64_t vram = qgpu_vram_usable(&dev);
		uint64_t chunk = (vram / 4) & ~4095ull;
		const uint32_t words = 4096;
		uint32_t a[8], p, res, *r, i, j, sum = 0, want, portions;
		struct qgpu_cb *cb;

		for (i = 0; i < 8; i++)
			a[i] = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		p = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 3, p, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 2, res, 0, 4096);
		for (i = 0; i < 8; i++) {
			uint32_t first = cb->npatches;

			qgpu_cb_bind(cb, 0, a[i], 0, QGPU_CB_WHOLE);
			igt_assert_eq(qgpu_cb_rebind_all(cb), i ? 2 : 0);
			/* one split point: the new slot and every live one */
			for (j = first; j < cb->npatches; j++)
				igt_assert_eq(cb->patches[j].split_offset,
					      cb->patches[first].split_offset);
			igt_assert_eq(cb->npatches - first, i ? 3 : 1);
			qgpu_cb_fill(cb, 0, 0, chunk, 1000 + i);
			qgpu_cb_add(cb, 3, 0, 3, 0, 0, 0, words);
			sum += 1000 + i;
		}
		/* a new split point of its own when no BIND precedes */
		{
			uint32_t first = cb->npatches;

			igt_assert_eq(qgpu_cb_rebind_all(cb), 3);
			igt_assert_eq(cb->patches[first].split_offset,
				      cb->patches[first].patch_offset - 8);
		}
		qgpu_cb_checksum(cb, 3, 0, chunk, 2, 0);
		portions = qt_run(dev.fd, ctx, cb, 60);
		igt_assert_lte(2, portions);
		want = qt_csum_const(sum, words);
		for (j = words; j < chunk / 4; j++)
			want = (want ^ 0) * QGPU_CSUM_PRIME;
		igt_assert_eq(r[0], want);
		qt_cb_free(cb);
		for (i = 0; i < 8; i++)
			qt_close(dev.fd, a[i]);
		qt_close(dev.fd, p);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("slot-replacement-frees-previous") {
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t size = (v * 6 / 10) & ~4095ull;
		uint32_t x, y, res, *r, portions, seg;
		struct qgpu_cb *cb;

		x = qt_bo(dev.fd, size, VIS, 0, 0);
		y = qt_bo(dev.fd, size, VIS, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, size, 0x11111111);
		qgpu_cb_checksum(cb, 0, 0, size, 1, 0);
		/* same slot, new allocation: X is no longer required */
		qgpu_cb_bind(cb, 0, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, size, 0x22222222);
		qgpu_cb_checksum(cb, 0, 0, size, 1, 4);
		portions = qt_run(dev.fd, ctx, cb, 30);
		igt_assert_eq(portions, 2);
		igt_assert_eq(r[0], qt_csum_const(0x11111111, size / 4));
		igt_assert_eq(r[1], qt_csum_const(0x22222222, size / 4));
		/* nothing holds X any more: it can be evicted */
		igt_assert_eq(qgpu_bo_reside(dev.fd, x, QGPU_RESIDE_EVICT_SYSTEM,
					     0, &seg), 0);
		igt_assert_eq(seg, QGPU_SEG_SYSTEM);
		igt_assert_eq(qgpu_bo_reside(dev.fd, y, QGPU_RESIDE_EVICT_SYSTEM,
					     0, &seg), 0);
		qt_cb_free(cb);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("unbind-frees") {
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t size = (v * 6 / 10) & ~4095ull;
		uint32_t x, y, res, *r, portions;
		struct qgpu_cb *cb;

		x = qt_bo(dev.fd, size, VIS, 0, 0);
		y = qt_bo(dev.fd, size, VIS, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, size, 0x33333333);
		qgpu_cb_checksum(cb, 0, 0, size, 1, 0);
		/* another slot for Y: possible only because X is unbound */
		qgpu_cb_unbind(cb, 0);
		qgpu_cb_bind(cb, 2, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 2, 0, size, 0x44444444);
		qgpu_cb_checksum(cb, 2, 0, size, 1, 4);
		portions = qt_run(dev.fd, ctx, cb, 30);
		igt_assert_eq(portions, 2);
		igt_assert_eq(r[0], qt_csum_const(0x33333333, size / 4));
		igt_assert_eq(r[1], qt_csum_const(0x44444444, size / 4));
		qt_cb_free(cb);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("reprogrammed-slot-may-move") {
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		const struct drm_qgpu_segment *vs =
			qgpu_dev_segment(&dev, QGPU_SEG_VISIBLE);
		struct drm_qgpu_segment_stats ss;
		uint32_t a, l, b, res, *r, portions;
		uint64_t l_before, l_after;
		struct qgpu_cb *cb;

		/*
		 * VISIBLE is split A (V/2) | L (V/4) | free (V/4). At the
		 * split point B (3V/4) is bound first and L re-bound with it:
		 * every 3V/4 window overlaps L's place, so L has to move.
		 */
		qt_seg_stats(dev.fd, QGPU_SEG_VISIBLE, &ss);
		igt_require_f(ss.allocations == 0,
			      "visible VRAM is not empty\n");
		a = qt_bo(dev.fd, v / 2, VIS, 0, 0);
		l = qt_bo(dev.fd, v / 4, VIS, 0, 0);
		b = qt_bo(dev.fd, v * 3 / 4, VIS, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		qt_reside(dev.fd, a, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		qt_reside(dev.fd, l, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		l_before = qt_info(dev.fd, l).gpu_addr - vs->base;
		igt_require_f(l_before >= v / 4 && l_before <= v / 2,
			      "L placed at %#llx\n",
			      (unsigned long long)l_before);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, l, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, a, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 2, res, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, v / 4, 0x5a5a5a5a);
		qgpu_cb_fill(cb, 1, 0, v / 2, 0x0f0f0f0f);
		/* one binding change: B first, then L reprogrammed */
		qgpu_cb_bind(cb, 1, b, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 0, l, 0, QGPU_CB_WHOLE);
		qgpu_cb_copy(cb, 1, 0, 0, 0, v / 4);
		qgpu_cb_checksum(cb, 1, 0, v / 4, 2, 0);
		qgpu_cb_checksum(cb, 0, 0, v / 4, 2, 4);
		portions = qt_run(dev.fd, ctx, cb, 30);
		igt_assert_eq(portions, 2);
		/* L's content travelled with it */
		igt_assert_eq(r[0], qt_csum_const(0x5a5a5a5a, v / 16));
		igt_assert_eq(r[1], qt_csum_const(0x5a5a5a5a, v / 16));
		l_after = qt_info(dev.fd, l).gpu_addr - vs->base;
		igt_assert_eq(qt_info(dev.fd, l).segment, QGPU_SEG_VISIBLE);
		igt_info("L moved from %#llx to %#llx at the split point\n",
			 (unsigned long long)l_before,
			 (unsigned long long)l_after);
		igt_assert_neq_u64(l_after, l_before);
		qt_cb_free(cb);
		qt_close(dev.fd, a);
		qt_close(dev.fd, l);
		qt_close(dev.fd, b);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("unsplittable-enospc") {
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t size = (v * 6 / 10) & ~4095ull;
		struct drm_qgpu_context_status c0, c1;
		struct drm_qgpu_stats s0, s1;
		uint32_t x, y, huge, portions = 77;
		struct qgpu_cb *cb;

		x = qt_bo(dev.fd, size, VIS, 0, 0);
		y = qt_bo(dev.fd, size, VIS, 0, 0);
		huge = qt_bo(dev.fd, 2 * v, VIS, 0, 0);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, size, 1);
		/* both needed at once: no split can help */
		qgpu_cb_bind(cb, 1, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_copy(cb, 1, 0, 0, 0, 4096);
		qt_stats(dev.fd, &s0);
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &c0), 0);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, NULL, 0,
					  &portions), -ENOSPC);
		usleep(100000);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &c1), 0);
		stats_equal(&s0, &s1);
		igt_assert_eq_u64(c1.submissions, c0.submissions);
		igt_assert_eq_u64(c1.portions, c0.portions);
		igt_assert_eq(c1.state, QGPU_CTX_OK);
		igt_assert_eq(qt_info(dev.fd, x).segment, QGPU_SEG_SYSTEM);
		igt_assert_eq(qt_info(dev.fd, y).segment, QGPU_SEG_SYSTEM);
		/* an allocation larger than every segment it supports */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, huge, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, 4096, 1);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, NULL, 0,
					  NULL), -ENOSPC);
		usleep(100000);
		qt_stats(dev.fd, &s1);
		stats_equal(&s0, &s1);
		qt_cb_free(cb);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_close(dev.fd, huge);
	}

	igt_subtest("unsplittable-with-an-aperture-slot") {
		/*
		 * The same impossible table, with a small aperture allocation
		 * bound as well: the aperture's space does not help X and Y
		 * (visible-only), so this too must fail before anything ran.
		 */
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t size = (v * 6 / 10) & ~4095ull;
		struct drm_qgpu_context_status c0, c1;
		struct drm_qgpu_stats s0, s1;
		uint32_t x, y, res, *r, c = qt_ctx(dev.fd);
		struct qgpu_cb *cb;
		int ret;

		x = qt_bo(dev.fd, size, VIS, 0, 0);
		y = qt_bo(dev.fd, size, VIS, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 2, res, 0, 4096);
		qgpu_cb_fence(cb, 2, 0, 1);	/* must never run */
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, size, 1);
		qgpu_cb_bind(cb, 1, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_copy(cb, 1, 0, 0, 0, 4096);
		qt_stats(dev.fd, &s0);
		igt_assert_eq(qgpu_query_context(dev.fd, c, &c0), 0);
		ret = qgpu_submit(dev.fd, c, cb, NULL, 0, NULL, 0, NULL);
		usleep(200000);
		qt_stats(dev.fd, &s1);
		igt_assert_eq(qgpu_query_context(dev.fd, c, &c1), 0);
		igt_assert_f(r[0] == 0,
			     "a portion of the unsplittable buffer ran (submit returned %d, %llu portion(s) queued)\n",
			     ret, (unsigned long long)(c1.portions - c0.portions));
		igt_assert_eq(ret, -ENOSPC);
		stats_equal(&s0, &s1);
		igt_assert_eq_u64(c1.portions, c0.portions);
		qt_cb_free(cb);
		qgpu_ctx_destroy(dev.fd, c);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("split-offset-inside-bind") {
		/*
		 * A split offset the kernel accepts must be a place where the
		 * buffer can be cut. Put it inside a BIND that needs a split:
		 * either the submit is refused (EINVAL) or it runs correctly;
		 * a device fault (half a BIND executed) is a kernel bug.
		 */
		uint64_t v = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint64_t size = (v * 6 / 10) & ~4095ull;
		struct drm_qgpu_context_status cs;
		uint32_t x, y, res, *r, c = qt_ctx(dev.fd);
		struct qgpu_cb *cb;
		int ret;

		x = qt_bo(dev.fd, size, VIS, 0, 0);
		y = qt_bo(dev.fd, size, VIS, 0, 0);
		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, size, 1);
		qgpu_cb_bind(cb, 0, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_fence(cb, 1, 8, 0x77);
		igt_assert_eq(cb->npatches, 3);
		cb->patches[2].split_offset += 4;
		ret = qgpu_submit_wait(dev.fd, c, cb, 20 * SEC_NS, NULL);
		if (ret) {
			igt_assert_eq(ret, -EINVAL);
		} else {
			igt_assert_eq(qgpu_query_context(dev.fd, c, &cs), 0);
			igt_assert_f(cs.state == QGPU_CTX_OK,
				     "accepted split offset %u (inside the BIND at %u) made the device fault: %s at DMA offset %u\n",
				     cb->patches[2].split_offset,
				     cb->patches[2].split_offset - 4,
				     qgpu_fault_name(cs.fault_reason),
				     cs.fault_offset);
			igt_assert_eq_u64(((uint64_t *)r)[1], 0x77);
		}
		qt_cb_free(cb);
		qgpu_ctx_destroy(dev.fd, c);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("four-processes") {
		pid_t pids[4];
		int i, st, bad = 0;

		for (i = 0; i < 4; i++) {
			pids[i] = fork();
			igt_assert(pids[i] >= 0);
			if (pids[i] == 0)
				_exit(worker(i + 1));
		}
		for (i = 0; i < 4; i++) {
			st = qt_wait_child(pids[i]);
			if (st) {
				igt_warn("worker %d exited with %d\n", i + 1, st);
				bad++;
			}
		}
		igt_assert_eq(bad, 0);
	}

	igt_subtest("hang-recovery") {
		struct drm_qgpu_sync_entry sa = { 0 }, sb = { 0 };
		struct drm_qgpu_context_status cs;
		struct drm_qgpu_stats s0, s1;
		uint32_t hung = qt_ctx(dev.fd), other = qt_ctx(dev.fd), c2;
		uint32_t h = qt_bo(dev.fd, 4096, VIS | APT, QGPU_GEM_CPU_ACCESS,
				   0), h2;
		struct qgpu_cb *cb = qt_cb(&dev);
		uint64_t *m, *m2;
		int64_t t0;
		int fd2;

		igt_expect_dmesg("engine hang");
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
		m = qt_map(dev.fd, h, 4096);
		memset(m, 0, 4096);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sa.handle), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sb.handle), 0);
		qt_stats(dev.fd, &s0);
		/* an endless WAIT */
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_wait(cb, 0, 0, 1);
		qgpu_cb_fence(cb, 0, 8, 1);
		igt_assert_eq(qgpu_submit(dev.fd, hung, cb, NULL, 0, &sa, 1,
					  NULL), 0);
		/* another context's work queued behind it */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 16, 2);
		t0 = qgpu_now_ns();
		igt_assert_eq(qgpu_submit(dev.fd, other, cb, NULL, 0, &sb, 1,
					  NULL), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb.handle, 0,
						30 * SEC_NS), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sa.handle, 0,
						30 * SEC_NS), 0);
		igt_info("the hung job was killed after %.1f s\n",
			 (qgpu_now_ns() - t0) / 1e9);
		igt_assert_eq_u64(m[2], 2);	/* the other context's work */
		igt_assert_eq_u64(m[1], 0);	/* never past the WAIT */
		qt_stats(dev.fd, &s1);
		igt_assert_lte(1, s1.resets - s0.resets);
		igt_assert_eq(qgpu_query_context(dev.fd, hung, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_LOST_HANG);
		igt_assert_eq(qgpu_query_context(dev.fd, other, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_OK);
		/* the lost context refuses work */
		igt_assert_eq(qgpu_submit(dev.fd, hung, cb, NULL, 0, NULL, 0,
					  NULL), -ECANCELED);
		/* the device keeps working: old and new contexts, new files */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 24, 3);
		qt_run(dev.fd, other, cb, 10);
		igt_assert_eq_u64(m[3], 3);
		fd2 = qt_reopen(&dev);
		c2 = qt_ctx(fd2);
		h2 = qt_bo(fd2, 4096, APT, QGPU_GEM_CPU_ACCESS, 0);
		qt_reside(fd2, h2, QGPU_RESIDE_MAKE_RESIDENT, 0);
		m2 = qt_map(fd2, h2, 4096);
		m2[0] = 0;
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h2, 0, 4096);
		qgpu_cb_fence(cb, 0, 0, 4);
		qt_run(fd2, c2, cb, 10);
		igt_assert_eq_u64(m2[0], 4);
		qt_unmap(fd2, h2, m2, 4096);
		qt_close(fd2, h2);
		close(fd2);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, hung), 0);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, other), 0);
		qgpu_syncobj_destroy(dev.fd, sa.handle);
		qgpu_syncobj_destroy(dev.fd, sb.handle);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("isolation-other-process-handle") {
		int to_child[2], to_parent[2], fd, st;
		uint32_t theirs = 0, mine, c;
		struct qgpu_cb *cb;
		uint64_t *m;
		pid_t pid;
		char go = 0;

		igt_assert_eq(pipe(to_child), 0);
		igt_assert_eq(pipe(to_parent), 0);
		pid = fork();
		igt_assert(pid >= 0);
		if (pid == 0) {
			/* the other process: an allocation of its own */
			int cfd = open(dev.path, O_RDWR | O_CLOEXEC);
			uint32_t ch;
			uint64_t *cm;
			int i, bad = 0;

			if (cfd < 0 ||
			    qgpu_bo_create(cfd, 4096, VIS | APT,
					   QGPU_GEM_CPU_ACCESS, 0, &ch) ||
			    qgpu_bo_map(cfd, ch, 4096, (void **)&cm))
				_exit(2);
			memset(cm, 0, 4096);
			if (write(to_parent[1], &ch, 4) != 4 ||
			    read(to_child[0], &go, 1) != 1)
				_exit(3);
			for (i = 0; i < 512; i++)
				bad |= cm[i] != 0;
			_exit(bad);
		}
		igt_assert_eq(read(to_parent[0], &theirs, 4), 4);
		/* a file without objects: the other process's number is
		 * nothing here */
		fd = qt_reopen(&dev);
		c = qt_ctx(fd);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, theirs, 0, 4096);
		qgpu_cb_fence(cb, 0, 0, MAGIC_ISOLATION);
		igt_assert_eq(qgpu_submit(fd, c, cb, NULL, 0, NULL, 0, NULL),
			      -ENOENT);
		/* the same number naming our own object reaches only ours */
		mine = qt_bo(fd, 4096, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		if (mine == theirs) {
			qt_reside(fd, mine, QGPU_RESIDE_MAKE_RESIDENT, 0);
			m = qt_map(fd, mine, 4096);
			m[0] = 0;
			qt_run(fd, c, cb, 10);
			igt_assert_eq_u64(m[0], MAGIC_ISOLATION);
			qt_unmap(fd, mine, m, 4096);
		}
		igt_assert_eq(write(to_child[1], &go, 1), 1);
		st = qt_wait_child(pid);
		igt_assert_f(st == 0, "the other process's allocation changed (%d)\n",
			     st);
		qt_cb_free(cb);
		qt_close(fd, mine);
		close(fd);
		close(to_child[0]);
		close(to_child[1]);
		close(to_parent[0]);
		close(to_parent[1]);
	}

	igt_subtest("slot-out-of-bounds") {
		uint32_t x, y, res, *r, c, fill_at;
		struct drm_qgpu_context_status cs;
		struct drm_qgpu_stats s0, s1;
		struct drm_qgpu_gem_info ix, iy;
		struct qgpu_cb *cb;
		void *mx, *my;

		/* X and Y side by side in visible VRAM, both patterned */
		x = qt_bo(dev.fd, 64 * 1024, VIS, QGPU_GEM_CPU_ACCESS, 0);
		y = qt_bo(dev.fd, 64 * 1024, VIS, QGPU_GEM_CPU_ACCESS, 0);
		qt_reside(dev.fd, x, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		qt_reside(dev.fd, y, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		mx = qt_map(dev.fd, x, 64 * 1024);
		my = qt_map(dev.fd, y, 64 * 1024);
		qgpu_pattern_fill(mx, 64 * 1024, 71);
		qgpu_pattern_fill(my, 64 * 1024, 72);
		ix = qt_info(dev.fd, x);
		iy = qt_info(dev.fd, y);
		res = qt_result_buf(dev.fd, 4096, &r);
		c = qt_ctx(dev.fd);
		qt_stats(dev.fd, &s0);
		/* a 4 KiB window on X; a FILL of 8 KiB through it */
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, x, 0, 4096);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_fence(cb, 1, 0, 1);
		fill_at = qgpu_cb_offset(cb);
		qgpu_cb_fill(cb, 0, 0, 8192, 0);
		qgpu_cb_fence(cb, 1, 8, 2);
		cs = run_status(c, cb);
		igt_assert_eq(cs.state, QGPU_CTX_LOST_FAULT);
		igt_assert_f(cs.fault_reason == QGPU_FAULT_SLOT_BOUNDS,
			     "fault %u (%s)\n", cs.fault_reason,
			     qgpu_fault_name(cs.fault_reason));
		igt_assert_eq(cs.fault_offset, fill_at);
		igt_assert_eq_u64(cs.fault_addr, 0);
		igt_assert_eq(r[0], 1);		/* work before the fault */
		igt_assert_eq(r[2], 0);		/* nothing after it */
		qt_check_pattern(mx, 64 * 1024, 71, "X after the fault");
		qt_check_pattern(my, 64 * 1024, 72, "Y after the fault");
		igt_assert_eq_u64(qt_info(dev.fd, x).gpu_addr, ix.gpu_addr);
		igt_assert_eq_u64(qt_info(dev.fd, y).gpu_addr, iy.gpu_addr);
		qt_stats(dev.fd, &s1);
		igt_assert_lte(1, s1.faults - s0.faults);
		igt_assert_eq(qgpu_submit(dev.fd, c, cb, NULL, 0, NULL, 0, NULL),
			      -ECANCELED);
		qgpu_ctx_destroy(dev.fd, c);

		/* a window at the end of X (alloc_offset), written past */
		c = qt_ctx(dev.fd);
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, x, 60 * 1024, QGPU_CB_WHOLE);
		qgpu_cb_fence(cb, 0, 4096, 5);
		cs = run_status(c, cb);
		igt_assert_eq(cs.state, QGPU_CTX_LOST_FAULT);
		igt_assert_eq(cs.fault_reason, QGPU_FAULT_SLOT_BOUNDS);
		qt_check_pattern(my, 64 * 1024, 72, "Y after the fault");
		qgpu_ctx_destroy(dev.fd, c);

		/* a COPY reading past its source changes nothing */
		c = qt_ctx(dev.fd);
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, x, 0, 4096);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_copy(cb, 1, 0, 0, 2048, 4096);
		cs = run_status(c, cb);
		igt_assert_eq(cs.state, QGPU_CTX_LOST_FAULT);
		igt_assert_eq(cs.fault_reason, QGPU_FAULT_SLOT_BOUNDS);
		igt_assert_eq(r[0], 1);
		qgpu_ctx_destroy(dev.fd, c);

		/* an unbound slot, a misaligned fence, ALU past the end */
		c = qt_ctx(dev.fd);
		qgpu_cb_reset(cb);
		qgpu_cb_fence(cb, 5, 0, 1);
		cs = run_status(c, cb);
		igt_assert_eq(cs.fault_reason, QGPU_FAULT_BAD_SLOT);
		qgpu_ctx_destroy(dev.fd, c);
		c = qt_ctx(dev.fd);
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, x, 0, 4096);
		qgpu_cb_fence(cb, 0, 4, 1);
		cs = run_status(c, cb);
		igt_assert_eq(cs.fault_reason, QGPU_FAULT_BAD_ALIGN);
		qgpu_ctx_destroy(dev.fd, c);
		c = qt_ctx(dev.fd);
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, x, 0, 4096);
		qgpu_cb_bind(cb, 1, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_add(cb, 0, 0, 1, 0, 1, 0, 1025);
		cs = run_status(c, cb);
		igt_assert_eq(cs.fault_reason, QGPU_FAULT_SLOT_BOUNDS);
		qt_check_pattern(mx, 64 * 1024, 71, "X after the ALU fault");
		qt_check_pattern(my, 64 * 1024, 72, "Y after the ALU fault");
		qgpu_ctx_destroy(dev.fd, c);

		qt_cb_free(cb);
		qt_unmap(dev.fd, x, mx, 64 * 1024);
		qt_unmap(dev.fd, y, my, 64 * 1024);
		qt_close(dev.fd, x);
		qt_close(dev.fd, y);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("split-points-bounded") {
		struct drm_qgpu_stats s0, s1;
		uint32_t res, *r, c = qt_ctx(dev.fd), i, portions = 0;
		struct qgpu_cb *cb;

		res = qt_result_buf(dev.fd, 4096, &r);
		cb = qt_cb(&dev);
		/* the most split points one submit may have: accepted */
		for (i = 0; i < QGPU_MAX_SPLIT_POINTS; i++) {
			qgpu_cb_split_point(cb);
			qgpu_cb_bind(cb, i % dev.info.max_slots, res, 0, 4096);
			qgpu_cb_fill(cb, i % dev.info.max_slots, 0, 4, i);
		}
		igt_assert_eq(qgpu_submit_wait(dev.fd, c, cb, 60 * SEC_NS,
					       &portions), 0);
		igt_assert_eq(r[0], QGPU_MAX_SPLIT_POINTS - 1);
		/* one more: E2BIG, and nothing ran */
		qgpu_cb_split_point(cb);
		qgpu_cb_bind(cb, 0, res, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, 4, 0xbad);
		qt_stats(dev.fd, &s0);
		igt_assert_eq(qgpu_submit(dev.fd, c, cb, NULL, 0, NULL, 0, NULL),
			      -E2BIG);
		qt_stats(dev.fd, &s1);
		stats_equal(&s0, &s1);
		igt_assert_eq(r[0], QGPU_MAX_SPLIT_POINTS - 1);
		qt_cb_free(cb);
		qgpu_ctx_destroy(dev.fd, c);
		qt_unmap(dev.fd, res, r, 4096);
		qt_close(dev.fd, res);
	}

	igt_subtest("counters-back-to-zero") {
		/* the context survived everything; nothing is left */
		qt_assert_clean(dev.fd, ctx);
	}

	igt_fixture {
		qgpu_ctx_destroy(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
