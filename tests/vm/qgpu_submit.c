// SPDX-License-Identifier: MIT
/*
 * qgpu_submit: the submit ioctl. GPU writes land where they should,
 * submissions in a row, in/out syncobjs (binary and timeline), and every
 * field of DRM_IOCTL_QGPU_SUBMIT rejected with its errno when bad, with
 * nothing run and nothing counted. A job longer than the timeout that
 * keeps the engine moving bytes is not a hang (long-job-not-a-hang).
 */
#include "qgpu_test.h"

#define MAGIC 0x5eed5eedcafef00dull

static struct qgpu_dev dev;
static uint32_t ctx;

/* A CPU-accessible 4 KiB allocation, resident and with its mapping faulted
 * in, so that later CPU accesses never wait for the GPU. */
static uint32_t target(uint64_t **map)
{
	uint32_t h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_GEM_CPU_ACCESS,
			   0);

	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	*map = qt_map(dev.fd, h, 4096);
	memset(*map, 0, 4096);
	return h;
}

/*
 * The reference buffer the bad-input tests start from:
 *	0: BIND slot 0 <- h (patch at 8)	24: FENCE slot 0 +off = value
 */
static struct qgpu_cb *fence_cb(uint32_t h, uint32_t off, uint64_t value)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	igt_assert_eq(qgpu_cb_bind(cb, 0, h, 0, 4096), 0);
	igt_assert_eq(qgpu_cb_fence(cb, 0, off, value), 0);
	return cb;
}

/* A syncobj that has no fence at all (never signalled or submitted). */
static int no_fence(uint32_t handle)
{
	return drmSyncobjWait(dev.fd, &handle, 1, 0, 0, NULL) == -EINVAL;
}

static struct drm_qgpu_stats fs0;

static void nothing_begin(void)
{
	igt_assert_eq(qgpu_query_file_stats(dev.fd, &fs0), 0);
}

/* No submission was counted, no portion queued, no paging done. */
static void nothing_end(const uint64_t *map)
{
	struct drm_qgpu_stats fs1;

	igt_assert_eq(qgpu_query_file_stats(dev.fd, &fs1), 0);
	igt_assert_eq_u64(fs1.submissions, fs0.submissions);
	igt_assert_eq_u64(fs1.split_portions, fs0.split_portions);
	if (map)
		igt_assert_eq_u64(map[0], 0);
}

/* Submit a (mutated) argument struct, expecting -err. */
static void expect_err(struct drm_qgpu_submit *a, int err, const char *what)
{
	struct drm_qgpu_submit copy = *a;
	int ret = qgpu_submit_raw(dev.fd, &copy);

	igt_assert_f(ret == -err, "%s: submit returned %d (%s), expected -%d (%s)\n",
		     what, ret, ret ? strerror(-ret) : "success", err,
		     strerror(err));
	igt_assert_eq(copy.portions, 0);
}

static void submit_sync(struct drm_qgpu_submit *a)
{
	struct drm_qgpu_sync_entry out = { 0 };
	int ret;

	igt_assert_eq(qgpu_syncobj_create(dev.fd, &out.handle), 0);
	a->out_syncs = (uintptr_t)&out;
	a->num_out_syncs = 1;
	ret = qgpu_submit_raw(dev.fd, a);
	igt_assert_f(ret == 0, "submit: %s\n", strerror(-ret));
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, out.handle, 0, 10 * SEC_NS),
		      0);
	qgpu_syncobj_destroy(dev.fd, out.handle);
	a->out_syncs = 0;
	a->num_out_syncs = 0;
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("fence-write") {
		struct drm_qgpu_context_status cs;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), portions;

		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 3, h, 0, 4096);
		qgpu_cb_fence(cb, 3, 8, MAGIC);
		qgpu_cb_fence(cb, 3, 4088, ~MAGIC);
		portions = qt_run(dev.fd, ctx, cb, 10);
		igt_assert_eq(portions, 1);
		igt_assert_eq_u64(m[0], 0);
		igt_assert_eq_u64(m[1], MAGIC);
		igt_assert_eq_u64(m[2], 0);
		igt_assert_eq_u64(m[511], ~MAGIC);
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &cs), 0);
		igt_assert_lte(1, cs.submissions);
		igt_assert_lte(1, cs.portions);
		/* with an offset into the allocation */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 2048, QGPU_CB_WHOLE);
		qgpu_cb_fence(cb, 0, 8, 0x1234);
		qt_run(dev.fd, ctx, cb, 10);
		igt_assert_eq_u64(m[257], 0x1234);
		/* the same allocation in several slots */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_bind(cb, 1, h, 1024, 1024);
		qgpu_cb_fence(cb, 1, 0, 7);
		qgpu_cb_copy(cb, 0, 16, 1, 0, 8);
		qt_run(dev.fd, ctx, cb, 10);
		igt_assert_eq(cb->nallocs, 1);
		igt_assert_eq_u64(m[128], 7);
		igt_assert_eq_u64(m[2], 7);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("submits-in-a-row") {
		struct drm_qgpu_stats s0, s1;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), i;

		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 0, 0);
		igt_assert_eq(qgpu_query_file_stats(dev.fd, &s0), 0);
		for (i = 1; i <= 1000; i++) {
			/* the FENCE value is dwords 3-4 of the FENCE command */
			cb->dw[QGPU_DMA_BIND_LEN + 3] = i;
			igt_assert_eq(qgpu_submit_wait(dev.fd, ctx, cb,
						       10 * SEC_NS, NULL), 0);
			igt_assert_f(m[0] == i, "submit %u: value %llu\n", i,
				     (unsigned long long)m[0]);
		}
		igt_assert_eq(qgpu_query_file_stats(dev.fd, &s1), 0);
		igt_assert_eq_u64(s1.submissions - s0.submissions, 1000);
		igt_assert_eq_u64(s1.split_portions - s0.split_portions, 1000);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("in-syncobj-order") {
		struct drm_qgpu_sync_entry sa = { 0 }, sb = { 0 };
		struct qgpu_cb *a, *b;
		uint32_t ctx2 = qt_ctx(dev.fd);
		uint64_t *m;
		uint32_t h = target(&m);

		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sa.handle), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sb.handle), 0);
		/* A (ctx): stalls until the CPU releases it, then writes */
		a = qt_cb(&dev);
		qgpu_cb_bind(a, 0, h, 0, 4096);
		qgpu_cb_wait(a, 0, 0, 1);
		qgpu_cb_fence(a, 0, 8, 0xa);
		/* B (ctx2): after A by its in-syncobj: copies A's value */
		b = qt_cb(&dev);
		qgpu_cb_bind(b, 0, h, 0, 4096);
		qgpu_cb_copy(b, 0, 16, 0, 8, 8);
		qgpu_cb_fence(b, 0, 24, 0xb);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, a, NULL, 0, &sa, 1,
					  NULL), 0);
		igt_assert_eq(qgpu_submit(dev.fd, ctx2, b, &sa, 1, &sb, 1,
					  NULL), 0);
		/* neither may complete while A is stalled */
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb.handle, 0,
						300000000), -ETIME);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sa.handle, 0, 0),
			      -ETIME);
		igt_assert_eq_u64(m[2], 0);
		igt_assert_eq_u64(m[3], 0);
		/* release A */
		__atomic_store_n(&m[0], 1, __ATOMIC_SEQ_CST);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb.handle, 0,
						10 * SEC_NS), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sa.handle, 0, 0), 0);
		igt_assert_eq_u64(m[1], 0xa);
		igt_assert_eq_u64(m[2], 0xa);	/* B saw A's write */
		igt_assert_eq_u64(m[3], 0xb);
		/* an in-syncobj signalled by the CPU is no obstacle */
		igt_assert_eq(drmSyncobjSignal(dev.fd, &sa.handle, 1), 0);
		qgpu_cb_reset(b);
		qgpu_cb_bind(b, 0, h, 0, 4096);
		qgpu_cb_fence(b, 0, 32, 0xc);
		igt_assert_eq(qgpu_submit(dev.fd, ctx2, b, &sa, 1, &sb, 1,
					  NULL), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb.handle, 0,
						10 * SEC_NS), 0);
		igt_assert_eq_u64(m[4], 0xc);
		qgpu_syncobj_destroy(dev.fd, sa.handle);
		qgpu_syncobj_destroy(dev.fd, sb.handle);
		qt_cb_free(a);
		qt_cb_free(b);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, ctx2), 0);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("timeline-points") {
		struct drm_qgpu_sync_entry s = { 0 };
		struct qgpu_cb *cb;
		uint32_t ctx2 = qt_ctx(dev.fd);
		uint64_t *m, point = 0;
		uint32_t h = target(&m);

		igt_assert_eq(qgpu_syncobj_create(dev.fd, &s.handle), 0);
		cb = qt_cb(&dev);
		/* point 1 */
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 8, 1);
		s.point = 1;
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &s, 1,
					  NULL), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, s.handle, 1,
						10 * SEC_NS), 0);
		igt_assert_eq(drmSyncobjQuery(dev.fd, &s.handle, &point, 1), 0);
		igt_assert_eq_u64(point, 1);
		igt_assert_eq_u64(m[1], 1);
		/* point 2: stalled on the GPU until the CPU releases it */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_wait(cb, 0, 0, 2);
		qgpu_cb_fence(cb, 0, 16, 2);
		s.point = 2;
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &s, 1,
					  NULL), 0);
		/* point 3 on another context waits for point 2 */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_copy(cb, 0, 24, 0, 16, 8);
		{
			struct drm_qgpu_sync_entry in = { .handle = s.handle,
							  .point = 2 };
			struct drm_qgpu_sync_entry out = { .handle = s.handle,
							   .point = 3 };

			igt_assert_eq(qgpu_submit(dev.fd, ctx2, cb, &in, 1,
						  &out, 1, NULL), 0);
		}
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, s.handle, 2,
						200000000), -ETIME);
		igt_assert_eq(drmSyncobjQuery(dev.fd, &s.handle, &point, 1), 0);
		igt_assert_eq_u64(point, 1);
		__atomic_store_n(&m[0], 2, __ATOMIC_SEQ_CST);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, s.handle, 3,
						10 * SEC_NS), 0);
		igt_assert_eq(drmSyncobjQuery(dev.fd, &s.handle, &point, 1), 0);
		igt_assert_eq_u64(point, 3);
		igt_assert_eq_u64(m[2], 2);
		igt_assert_eq_u64(m[3], 2);
		/* waiting on an earlier point is immediate */
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, s.handle, 1, 0), 0);
		qgpu_syncobj_destroy(dev.fd, s.handle);
		qt_cb_free(cb);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, ctx2), 0);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("many-out-syncobjs") {
		struct drm_qgpu_sync_entry out[QGPU_MAX_SYNCS], in[QGPU_MAX_SYNCS];
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), i;

		memset(out, 0, sizeof(out));
		memset(in, 0, sizeof(in));
		for (i = 0; i < QGPU_MAX_SYNCS; i++) {
			igt_assert_eq(qgpu_syncobj_create(dev.fd,
							  &out[i].handle), 0);
			/* half of them as timeline points */
			out[i].point = i % 2 ? 5 : 0;
		}
		cb = fence_cb(h, 0, 9);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, out,
					  QGPU_MAX_SYNCS, NULL), 0);
		for (i = 0; i < QGPU_MAX_SYNCS; i++)
			igt_assert_eq(qgpu_syncobj_wait(dev.fd, out[i].handle,
							out[i].point,
							10 * SEC_NS), 0);
		igt_assert_eq_u64(m[0], 9);
		/* and all of them as in-syncobjs at once */
		for (i = 0; i < QGPU_MAX_SYNCS; i++)
			in[i] = out[i];
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 8, 10);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, in, QGPU_MAX_SYNCS,
					  out, 1, NULL), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, out[0].handle, 0,
						10 * SEC_NS), 0);
		igt_assert_eq_u64(m[1], 10);
		for (i = 0; i < QGPU_MAX_SYNCS; i++)
			qgpu_syncobj_destroy(dev.fd, out[i].handle);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	/*
	 * A DMA buffer that keeps the engine busy for longer than the job
	 * timeout (2 s) while moving bytes all along is not a hang: it
	 * completes, with its result, no reset and its context intact. The
	 * fill rate is measured first and the job sized to last about 6 s;
	 * if it still ran for less than 3 s it is made longer, so that the
	 * test only passes having crossed at least one timeout.
	 */
	igt_subtest("long-job-not-a-hang") {
		const uint32_t sz = 16u << 20;
		struct drm_qgpu_stats s0, s1;
		struct qgpu_cb *cb;
		uint64_t *m, n = 64, i;
		double secs = 0;
		int64_t t0;
		uint32_t h = target(&m), big, tries;

		big = qt_bo(dev.fd, sz, QGPU_SEGBIT(QGPU_SEG_LOCAL) |
			    QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		qt_reside(dev.fd, big, QGPU_RESIDE_MAKE_RESIDENT, 0);
		qt_stats(dev.fd, &s0);
		for (tries = 0; tries < 4 && secs < 3; tries++) {
			if (secs > 0)
				n = n * 6.0 / secs + 1;
			if (n > 40000)
				n = 40000;
			cb = qt_cb(&dev);
			qgpu_cb_bind(cb, 0, big, 0, sz);
			qgpu_cb_bind(cb, 1, h, 0, 4096);
			/* bytes that differ: not a memset */
			for (i = 0; i < n; i++)
				qgpu_cb_fill(cb, 0, 0, sz, 0x01020304 + i);
			qgpu_cb_copy(cb, 1, 0, 0, sz - 8, 8);
			t0 = qgpu_now_ns();
			qt_run(dev.fd, ctx, cb, 60);
			secs = (qgpu_now_ns() - t0) / 1e9;
			igt_info("%llu fills of 16 MiB: %.2f s\n",
				 (unsigned long long)n, secs);
			igt_assert_eq_u64(((uint32_t *)m)[0],
					  0x01020304 + n - 1);
			qt_cb_free(cb);
		}
		igt_assert_f(secs >= 3, "the job never outlasted a timeout\n");
		qt_stats(dev.fd, &s1);
		igt_assert_eq_u64(s1.resets, s0.resets);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
		qt_close(dev.fd, big);
	}

	igt_subtest("bad-flags") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), bits[] = { 1, 2, 0x100, 0x80000000u };
		unsigned int i;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		nothing_begin();
		for (i = 0; i < ARRAY_SIZE(bits); i++) {
			a.flags = bits[i];
			expect_err(&a, EINVAL, "flags");
		}
		nothing_end(m);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-ctx") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), dead, theirs;
		int fd2 = qt_reopen(&dev);

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		dead = qt_ctx(dev.fd);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, dead), 0);
		theirs = qt_ctx(fd2);
		nothing_begin();
		a.ctx = 0;
		expect_err(&a, ENOENT, "context 0");
		a.ctx = 0xffffffffu;
		expect_err(&a, ENOENT, "context ~0");
		a.ctx = dev.info.max_contexts;
		expect_err(&a, ENOENT, "context max_contexts");
		a.ctx = dead;
		expect_err(&a, ENOENT, "destroyed context");
		if (theirs != ctx) {
			a.ctx = theirs;
			expect_err(&a, ENOENT, "another file's context");
		}
		nothing_end(m);
		close(fd2);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-dma-size") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb, *big;
		uint64_t *m;
		uint32_t h = target(&m), left;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		nothing_begin();
		a.dma_size = 0;
		expect_err(&a, EINVAL, "dma_size 0");
		a.dma_size = 2;
		expect_err(&a, EINVAL, "dma_size 2");
		a.dma_size = 42;
		expect_err(&a, EINVAL, "dma_size 42 (unaligned)");
		a.dma_size = 43;
		expect_err(&a, EINVAL, "dma_size 43 (unaligned)");
		a.dma_size = QGPU_MAX_DMA_SIZE + 4;
		expect_err(&a, EINVAL, "dma_size max + 4");
		a.dma_size = 0xfffffffcu;
		expect_err(&a, EINVAL, "dma_size ~3");
		/* shorter than its commands: cuts the FENCE, then the BIND */
		a.dma_size = 40;
		expect_err(&a, EINVAL, "dma_size cuts a command");
		a.dma_size = 16;
		expect_err(&a, EINVAL, "dma_size cuts the BIND");
		nothing_end(m);
		/* the largest buffer is fine: 1 MiB of NOPs around the fence */
		big = qt_cb(&dev);
		qgpu_cb_bind(big, 0, h, 0, 4096);
		qgpu_cb_fence(big, 0, 8, 77);
		left = QGPU_MAX_DMA_SIZE / 4 - big->ndw;
		while (left) {
			uint32_t n = left > 0xffff ? 0xffff : left;

			qgpu_cb_nop(big, n);
			left -= n;
		}
		igt_assert_eq(qgpu_cb_offset(big), QGPU_MAX_DMA_SIZE);
		qt_run(dev.fd, ctx, big, 10);
		igt_assert_eq_u64(m[1], 77);
		qt_cb_free(big);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-pointers") {
		struct drm_qgpu_sync_entry sync = { 0 };
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m);
		char *pages;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync.handle), 0);
		/* a buffer whose second page is not mapped */
		pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		igt_assert(pages != MAP_FAILED);
		igt_assert_eq(munmap(pages + 4096, 4096), 0);
		memcpy(pages + 4096 - 24, cb->dw, 24);
		nothing_begin();
		a.dma = 0;
		expect_err(&a, EFAULT, "dma NULL");
		a.dma = 16;
		expect_err(&a, EFAULT, "dma 16");
		a.dma = 0xffff800000000000ull;
		expect_err(&a, EFAULT, "dma kernel address");
		a.dma = (uintptr_t)(pages + 4096 - 24);
		expect_err(&a, EFAULT, "dma straddling an unmapped page");
		qgpu_cb_to_submit(cb, ctx, &a);
		a.allocs = 16;
		expect_err(&a, EFAULT, "allocs pointer");
		a.allocs = (uintptr_t)(pages + 4096 - 4);
		expect_err(&a, EFAULT, "allocs straddling an unmapped page");
		qgpu_cb_to_submit(cb, ctx, &a);
		a.patches = 16;
		expect_err(&a, EFAULT, "patches pointer");
		a.patches = (uintptr_t)(pages + 4096 - 16);
		expect_err(&a, EFAULT, "patches straddling an unmapped page");
		qgpu_cb_to_submit(cb, ctx, &a);
		a.in_syncs = 16;
		a.num_in_syncs = 1;
		expect_err(&a, EFAULT, "in_syncs pointer");
		qgpu_cb_to_submit(cb, ctx, &a);
		a.out_syncs = 16;
		a.num_out_syncs = 1;
		expect_err(&a, EFAULT, "out_syncs pointer");
		/* the first entry readable, the second not */
		a.num_out_syncs = 2;
		a.out_syncs = (uintptr_t)(pages + 4096 - sizeof(sync));
		memcpy(pages + 4096 - sizeof(sync), &sync, sizeof(sync));
		expect_err(&a, EFAULT, "out_syncs straddling an unmapped page");
		nothing_end(m);
		/* the out-syncobj got no fence */
		igt_assert(no_fence(sync.handle));
		munmap(pages, 4096);
		qgpu_syncobj_destroy(dev.fd, sync.handle);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-counts") {
		static struct drm_qgpu_alloc_entry allocs[QGPU_MAX_ALLOCS + 1];
		static struct drm_qgpu_patch_entry patches[QGPU_MAX_PATCHES + 1];
		struct drm_qgpu_sync_entry syncs[QGPU_MAX_SYNCS + 1];
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), i, sobj;

		cb = fence_cb(h, 0, MAGIC);
		memset(allocs, 0, sizeof(allocs));
		allocs[0] = cb->allocs[0];
		memset(patches, 0, sizeof(patches));
		patches[0] = cb->patches[0];
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sobj), 0);
		igt_assert_eq(drmSyncobjSignal(dev.fd, &sobj, 1), 0);
		memset(syncs, 0, sizeof(syncs));
		for (i = 0; i <= QGPU_MAX_SYNCS; i++)
			syncs[i].handle = sobj;
		qgpu_cb_to_submit(cb, ctx, &a);
		a.allocs = (uintptr_t)allocs;
		a.patches = (uintptr_t)patches;
		nothing_begin();
		a.num_allocs = QGPU_MAX_ALLOCS + 1;
		expect_err(&a, EINVAL, "num_allocs max + 1");
		a.num_allocs = 0xffffffffu;
		expect_err(&a, EINVAL, "num_allocs ~0");
		a.num_allocs = 1;
		a.num_patches = QGPU_MAX_PATCHES + 1;
		expect_err(&a, EINVAL, "num_patches max + 1");
		a.num_patches = 0xffffffffu;
		expect_err(&a, EINVAL, "num_patches ~0");
		/* more patch entries than the buffer has dwords */
		a.num_patches = a.dma_size / 4 + 1;
		expect_err(&a, EINVAL, "num_patches > dwords");
		a.num_patches = 1;
		a.in_syncs = (uintptr_t)syncs;
		a.num_in_syncs = QGPU_MAX_SYNCS + 1;
		expect_err(&a, EINVAL, "num_in_syncs max + 1");
		a.num_in_syncs = 0;
		a.out_syncs = (uintptr_t)syncs;
		a.num_out_syncs = QGPU_MAX_SYNCS + 1;
		expect_err(&a, EINVAL, "num_out_syncs max + 1");
		a.num_out_syncs = 0;
		/* zero patches for a buffer with a BIND */
		a.num_patches = 0;
		expect_err(&a, EINVAL, "BIND without its patch entry");
		nothing_end(m);
		/* exactly at the limits: accepted */
		a.num_patches = 1;
		a.num_allocs = QGPU_MAX_ALLOCS;	/* the rest NULL entries */
		a.in_syncs = (uintptr_t)syncs;
		a.num_in_syncs = QGPU_MAX_SYNCS;
		a.out_syncs = 0;
		a.num_out_syncs = 0;
		submit_sync(&a);
		igt_assert_eq_u64(m[0], MAGIC);
		qgpu_syncobj_destroy(dev.fd, sobj);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-alloc-entries") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), closed, bits[] = { 2, 4, 0x80000000u };
		unsigned int i;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		closed = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0,
			       0);
		qt_close(dev.fd, closed);
		nothing_begin();
		for (i = 0; i < ARRAY_SIZE(bits); i++) {
			cb->allocs[0].flags = bits[i];
			expect_err(&a, EINVAL, "allocation flags");
		}
		cb->allocs[0].flags = QGPU_ALLOC_WRITE;
		cb->allocs[0].handle = 0x7fffffff;
		expect_err(&a, ENOENT, "unknown handle");
		cb->allocs[0].handle = closed;
		expect_err(&a, ENOENT, "closed handle");
		cb->allocs[0].handle = h;
		nothing_end(m);
		/* read-only (flags 0) is a valid entry */
		cb->allocs[0].flags = 0;
		submit_sync(&a);
		igt_assert_eq_u64(m[0], MAGIC);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("foreign-handle") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint32_t theirs, c;
		int mine = qt_reopen(&dev), other = qt_reopen(&dev);

		/* a handle that exists only in the other file */
		theirs = qt_bo(other, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0,
			       0);
		c = qt_ctx(mine);
		cb = fence_cb(theirs, 0, MAGIC);
		qgpu_cb_to_submit(cb, c, &a);
		igt_assert_eq(qgpu_submit_raw(mine, &a), -ENOENT);
		/* and in the other file it works */
		c = qt_ctx(other);
		a.ctx = c;
		igt_assert_eq(qgpu_submit_raw(other, &a), 0);
		qt_cb_free(cb);
		close(mine);
		close(other);
	}

	igt_subtest("bad-patch-entries") {
		struct drm_qgpu_patch_entry good;
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m);

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		good = cb->patches[0];
		igt_assert_eq(good.patch_offset, 8);
		igt_assert_eq(good.split_offset, 0);
		nothing_begin();
#define BAD(field, value, err, what) do { \
		cb->patches[0] = good; \
		cb->patches[0].field = (value); \
		expect_err(&a, err, what); \
	} while (0)
		BAD(alloc_index, 1, EINVAL, "alloc_index == num_allocs");
		BAD(alloc_index, 0xffffffffu, EINVAL, "alloc_index ~0");
		BAD(slot, dev.info.max_slots, EINVAL, "slot == max_slots");
		BAD(slot, 0xffffffffu, EINVAL, "slot ~0");
		BAD(patch_offset, 10, EINVAL, "patch_offset misaligned");
		BAD(patch_offset, 9, EINVAL, "patch_offset misaligned");
		BAD(patch_offset, 12, EINVAL, "patch_offset not a BIND address");
		BAD(patch_offset, 4, EINVAL, "patch_offset not a BIND address");
		BAD(patch_offset, 0, EINVAL, "patch_offset at the BIND header");
		BAD(patch_offset, 32, EINVAL, "patch_offset inside the FENCE");
		BAD(patch_offset, a.dma_size, EINVAL, "patch_offset == dma_size");
		BAD(patch_offset, a.dma_size - 4, EINVAL,
		    "patch_offset: 8 bytes not in the buffer");
		BAD(patch_offset, 0xfffffff8u, EINVAL, "patch_offset huge");
		BAD(split_offset, 2, EINVAL, "split_offset misaligned");
		BAD(split_offset, 12, EINVAL, "split_offset after the BIND");
		BAD(split_offset, 0xfffffffcu, EINVAL, "split_offset huge");
		BAD(pad[0], 1, EINVAL, "pad[0]");
		BAD(pad[1], 0x80000000u, EINVAL, "pad[1]");
		BAD(alloc_offset, 4096, EINVAL, "alloc_offset == size");
		BAD(alloc_offset, 8192, EINVAL, "alloc_offset > size");
		BAD(alloc_offset, 1ull << 63, EINVAL, "alloc_offset huge");
		BAD(alloc_offset, 2, EINVAL, "alloc_offset misaligned");
#undef BAD
		cb->patches[0] = good;
		/* a NULL allocation with an offset */
		cb->allocs[0].handle = 0;
		cb->patches[0].alloc_offset = 4;
		expect_err(&a, EINVAL, "NULL allocation with an offset");
		cb->allocs[0].handle = h;
		cb->patches[0] = good;
		nothing_end(m);
		/* the last dword of the allocation is a valid offset */
		cb->patches[0].alloc_offset = 4092;
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 5);
		submit_sync(&a);
		igt_assert_eq_u64(m[0], 0);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("split-offset-inside-bind") {
		struct drm_qgpu_patch_entry good;
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m);

		/*
		 * SplitOffset is where the buffer may be cut to page in the
		 * allocation: at or before its BIND. A cut inside the BIND
		 * would run half a command.
		 */
		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		good = cb->patches[0];
		nothing_begin();
		cb->patches[0].split_offset = 4;
		expect_err(&a, EINVAL, "split_offset inside the BIND (+4)");
		cb->patches[0].split_offset = 8;
		expect_err(&a, EINVAL, "split_offset inside the BIND (+8)");
		cb->patches[0] = good;
		nothing_end(m);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("patch-order") {
		struct drm_qgpu_patch_entry p0, p1;
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m);

		/* 0: NOP | 4: BIND s0 | 28: FENCE | 48: BIND s1 | 72: FENCE */
		cb = qt_cb(&dev);
		qgpu_cb_nop(cb, 1);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, 0, MAGIC);
		qgpu_cb_bind(cb, 1, h, 0, 4096);
		qgpu_cb_fence(cb, 1, 8, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		p0 = cb->patches[0];
		p1 = cb->patches[1];
		igt_assert_eq(p0.patch_offset, 12);
		igt_assert_eq(p0.split_offset, 4);
		igt_assert_eq(p1.patch_offset, 56);
		igt_assert_eq(p1.split_offset, 48);
		nothing_begin();
		/* out of buffer order */
		cb->patches[0] = p1;
		cb->patches[1] = p0;
		expect_err(&a, EINVAL, "patch entries out of order");
		/* the same BIND patched twice */
		cb->patches[0] = p0;
		cb->patches[1] = p0;
		expect_err(&a, EINVAL, "one BIND patched twice");
		/* split offsets decreasing (each one before its BIND) */
		cb->patches[0] = p0;
		cb->patches[1] = p1;
		cb->patches[1].split_offset = 0;
		expect_err(&a, EINVAL, "split offsets decreasing");
		/* a stray entry pointing into the FENCE, second BIND unpatched */
		cb->patches[1] = p1;
		cb->patches[1].patch_offset = 36;
		cb->patches[1].split_offset = 28;
		expect_err(&a, EINVAL, "second BIND unpatched, stray entry");
		nothing_end(m);
		/* equal split offsets are fine (one binding change), and so
		 * is an earlier split offset that is not decreasing */
		cb->patches[0] = p0;
		cb->patches[1] = p1;
		cb->patches[1].split_offset = 4;
		submit_sync(&a);
		igt_assert_eq_u64(m[0], MAGIC);
		igt_assert_eq_u64(m[1], MAGIC);
		m[0] = m[1] = 0;
		cb->patches[0].split_offset = 0;
		cb->patches[1].split_offset = 28;
		submit_sync(&a);
		igt_assert_eq_u64(m[0], MAGIC);
		igt_assert_eq_u64(m[1], MAGIC);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("unpatched-bind") {
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m);
		uint32_t bind[QGPU_DMA_BIND_LEN] = {
			QGPU_CMD_HDR(QGPU_DMA_BIND, 0, QGPU_DMA_BIND_LEN),
			1, 0, 0, 4096, 0,
		};

		/* a hand-written BIND the kernel does not know about */
		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_emit_raw(cb, bind, QGPU_DMA_BIND_LEN);
		qgpu_cb_fence(cb, 1, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		nothing_begin();
		expect_err(&a, EINVAL, "unpatched BIND");
		/* ... even at the very start */
		qgpu_cb_reset(cb);
		qgpu_cb_emit_raw(cb, bind, QGPU_DMA_BIND_LEN);
		qgpu_cb_fence(cb, 1, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		expect_err(&a, EINVAL, "unpatched BIND, no patch list");
		nothing_end(m);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-commands") {
		uint32_t bad_ops[] = { 0x01, 0x10, 0x20, 0x21, 0x3f, 0x49,
				       0x4f, 0x80, 0xff };
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), hdr, i;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		hdr = cb->dw[QGPU_DMA_BIND_LEN];	/* the FENCE */
		nothing_begin();
		for (i = 0; i < ARRAY_SIZE(bad_ops); i++) {
			cb->dw[QGPU_DMA_BIND_LEN] =
				QGPU_CMD_HDR(bad_ops[i], 0, QGPU_DMA_FENCE_LEN);
			expect_err(&a, EINVAL, "unknown opcode");
		}
		/* flags byte */
		cb->dw[QGPU_DMA_BIND_LEN] = hdr | 1 << 8;
		expect_err(&a, EINVAL, "FENCE with the IRQ flag");
		cb->dw[QGPU_DMA_BIND_LEN] = hdr | 0x80 << 8;
		expect_err(&a, EINVAL, "FENCE with flag 0x80");
		/* lengths: shorter, longer, zero, beyond the buffer */
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_FENCE, 0, 4);
		expect_err(&a, EINVAL, "FENCE of 4 dwords");
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 0);
		expect_err(&a, EINVAL, "NOP of length 0");
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 6);
		expect_err(&a, EINVAL, "NOP running past the end");
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_FILL, 0, 5);
		cb->dw[0] = QGPU_CMD_HDR(QGPU_DMA_BIND, 0, 7);
		expect_err(&a, EINVAL, "BIND of 7 dwords");
		cb->dw[0] = QGPU_CMD_HDR(QGPU_DMA_BIND, 0, QGPU_DMA_BIND_LEN);
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_FILL, 0, 6);
		expect_err(&a, EINVAL, "FILL of 6 dwords");
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_TIMESTAMP, 0,
							 QGPU_DMA_FENCE_LEN);
		expect_err(&a, EINVAL, "TIMESTAMP of 5 dwords");
		nothing_end(m);
		/* a longer NOP is allowed */
		cb->dw[QGPU_DMA_BIND_LEN] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 5);
		submit_sync(&a);
		igt_assert_eq_u64(m[0], 0);
		cb->dw[QGPU_DMA_BIND_LEN] = hdr;
		submit_sync(&a);
		igt_assert_eq_u64(m[0], MAGIC);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("bad-syncobjs") {
		struct drm_qgpu_sync_entry in = { 0 }, out[2];
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t *m;
		uint32_t h = target(&m), empty, signalled;

		cb = fence_cb(h, 0, MAGIC);
		qgpu_cb_to_submit(cb, ctx, &a);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &empty), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &signalled), 0);
		igt_assert_eq(drmSyncobjSignal(dev.fd, &signalled, 1), 0);
		memset(out, 0, sizeof(out));
		nothing_begin();
		a.in_syncs = (uintptr_t)&in;
		a.num_in_syncs = 1;
		in.handle = 0;
		expect_err(&a, ENOENT, "in-syncobj handle 0");
		in.handle = 0x7fffffff;
		expect_err(&a, ENOENT, "unknown in-syncobj");
		in.handle = empty;
		expect_err(&a, EINVAL, "in-syncobj without a fence");
		in.handle = signalled;
		in.flags = 2;	/* bit 0 is QGPU_SYNC_MONITORED */
		expect_err(&a, EINVAL, "in-syncobj flags");
		in.flags = 0;
		in.point = 7;
		expect_err(&a, EINVAL, "in-syncobj point never submitted");
		in.point = 0;
		a.out_syncs = (uintptr_t)out;
		a.num_out_syncs = 2;
		out[0].handle = empty;
		out[1].handle = 0x7fffffff;
		expect_err(&a, ENOENT, "unknown out-syncobj");
		out[1].handle = 0;
		expect_err(&a, ENOENT, "out-syncobj handle 0");
		out[1].handle = empty;
		out[1].flags = 2;
		expect_err(&a, EINVAL, "out-syncobj flags");
		nothing_end(m);
		/* the first out-syncobj was not touched by the failed submits */
		igt_assert(no_fence(empty));
		out[1].flags = 0;
		igt_assert_eq(qgpu_submit_raw(dev.fd, &a), 0);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, empty, 0, 10 * SEC_NS),
			      0);
		igt_assert_eq_u64(m[0], MAGIC);
		qgpu_syncobj_destroy(dev.fd, empty);
		qgpu_syncobj_destroy(dev.fd, signalled);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	/*
	 * "The same allocation may be listed more than once": two
	 * allocation-list entries naming one allocation that fits the
	 * visible segment once (but not twice) are one allocation to place,
	 * not two; the submit must not fail with ENOSPC.
	 */
	igt_subtest("same-allocation-listed-twice") {
		struct drm_qgpu_alloc_entry two[2];
		struct drm_qgpu_submit a;
		struct qgpu_cb *cb;
		uint64_t size = qt_seg_usable(&dev, QGPU_SEG_VISIBLE) / 4 * 3;
		uint32_t h;

		size &= ~4095ull;
		h = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE), 0, 0);
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_bind(cb, 1, h, 4096, 4096);
		qgpu_cb_fill(cb, 0, 0, 4096, 1);
		qgpu_cb_fill(cb, 1, 0, 4096, 2);
		igt_assert_eq(cb->error, 0);
		qgpu_cb_to_submit(cb, ctx, &a);
		igt_assert_eq(a.num_allocs, 1);
		igt_assert_eq(a.num_patches, 2);
		two[0] = cb->allocs[0];
		two[1] = cb->allocs[0];
		a.allocs = (uintptr_t)two;
		a.num_allocs = 2;
		cb->patches[1].alloc_index = 1;
		submit_sync(&a);
		igt_assert_eq(a.portions, 1);
		qt_cb_free(cb);
		qt_close(dev.fd, h);
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
