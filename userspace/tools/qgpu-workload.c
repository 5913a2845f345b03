// SPDX-License-Identifier: MIT
/*
 * qgpu-workload: memory-management workloads to record with qgpu-trace
 * (the trace suite in traces/, tests/vm/qgpu_replay). Each is a real run
 * on the device, sized from the device's VRAM (qgpu_vram_usable()), and
 * checks its results where the GPU computed something.
 *
 * usage: qgpu-workload [-d NODE] [-n N] [-s SEED] WORKLOAD
 *
 *   split      one DMA buffer over twice VRAM, in binding changes the
 *              kernel splits at, run N times (default 3) over the same
 *              allocations
 *   frames     a frame loop: a render target and 16 textures that
 *              together are twice VRAM, each frame drawing from 6 of them
 *              (streamed: a window sliding by 2 a frame), N frames
 *              (default 24)
 *   training   a training-style loop: weights (a third of VRAM) kept,
 *              per step large activations made, used forward then
 *              backward, destroyed, with a gradient buffer; N steps
 *              (default 8)
 *   smallhuge  many small allocations (256 of 64 KiB) and one huge one
 *              (three quarters of the largest VRAM segment), used in
 *              turns, N rounds (default 6)
 *   multi      several processes (N, default 3) each running a smaller
 *              frame loop at the same time
 *   cpu        CPU access between GPU work: Lock2, CPU writes, GPU use,
 *              GEM_RESIDE and evictions on request, N rounds (default 6)
 *   virtual    GPU virtual addressing: MakeResident of a working set
 *              twice VRAM (eight allocations, four of which fit beside
 *              their page tables) in turns, virtual DMA buffers on it, N rounds
 *              (default 4); skipped (exit 77) without an MMU
 *
 * Exit status 0 when every check passed, 1 otherwise, 77 when the
 * workload cannot run on this device.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libqgpu.h"

#define SEC	1000000000ll
#define KIB	((uint64_t)1024)

static struct qgpu_dev dev;
static unsigned int rounds;
static uint64_t seed = 1;
static int failures;

#define VRAM_MASK	(QGPU_SEGBIT(QGPU_SEG_VISIBLE) | \
			 (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) ? \
			  QGPU_SEGBIT(QGPU_SEG_LOCAL) : 0))
#define ALL_MASK	(VRAM_MASK | QGPU_SEGBIT(QGPU_SEG_APERTURE))

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "qgpu-workload: %s\n", what);
		failures++;
	}
}

static uint64_t page_down(uint64_t v)
{
	return v & ~(4096ull - 1);
}

/*
 * An allocation the GPU uses, in VRAM only: an eviction sends it to system
 * memory and its next use pages it in again, so that victim choices show
 * in the bytes paged (with the aperture in its set it would stay there
 * once evicted)
 */
static uint32_t gpu_bo(uint64_t size)
{
	uint32_t h = 0;
	int ret = qgpu_bo_create(dev.fd, size, VRAM_MASK, 0,
				 QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0), &h);

	if (ret) {
		fprintf(stderr, "qgpu-workload: create %" PRIu64 " bytes: %s\n",
			size, strerror(-ret));
		exit(1);
	}
	return h;
}

/* A small CPU-readable result allocation */
static uint32_t result_bo(void **map)
{
	uint32_t h = 0;

	if (qgpu_bo_create(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
			   QGPU_GEM_CPU_ACCESS, 0, &h) ||
	    qgpu_bo_map(dev.fd, h, 4096, map)) {
		fprintf(stderr, "qgpu-workload: result allocation\n");
		exit(1);
	}
	return h;
}

static int run(uint32_t ctx, struct qgpu_cb *cb, uint32_t *portions)
{
	int ret = qgpu_submit_wait(dev.fd, ctx, cb, 120 * SEC, portions);

	check(!ret, "submission failed");
	return ret;
}

/*
 * split: allocations that together are twice VRAM, one binding change
 * each (fill it, checksum it into the result): the kernel must split.
 */
static int do_split(void)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t chunk = page_down(vram / 6);
	unsigned int n = 12, i, r;
	uint32_t h[12], res, ctx, portions = 0, *out;
	struct qgpu_cb cb;

	for (i = 0; i < n; i++)
		h[i] = gpu_bo(chunk);
	res = result_bo((void **)&out);
	if (qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots))
		return 1;
	for (r = 0; r < rounds; r++) {
		qgpu_cb_reset(&cb);
		for (i = 0; i < n; i++) {
			qgpu_cb_bind(&cb, 0, h[i], 0, QGPU_CB_WHOLE);
			qgpu_cb_bind(&cb, 1, res, 0, 4096);
			qgpu_cb_fill(&cb, 0, 0, (uint32_t)chunk, 0x1000 + i + r);
			qgpu_cb_checksum(&cb, 0, 0, (uint32_t)chunk, 1, i * 4);
			qgpu_cb_split_point(&cb);
		}
		run(ctx, &cb, &portions);
		check(portions > 1, "the kernel did not split");
	}
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < n; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_destroy(dev.fd, res);
	printf("split: %u rounds, %u allocations of %" PRIu64 " KiB, %u portions in the last\n",
	       rounds, n, chunk / KIB, portions);
	return 0;
}

/*
 * frames: a render target and textures twice VRAM together; each frame
 * draws from a window of 6 textures that slides by 2, plus a random one.
 */
static void frame_loop(unsigned int frames, uint64_t vram, unsigned int ntex,
		       const char *who)
{
	uint64_t tex_size = page_down(2 * vram / ntex);
	uint64_t rt_size = page_down(vram / 8);
	uint32_t *tex = calloc(ntex, sizeof(*tex)), rt, ctx;
	struct qgpu_cb cb;
	unsigned int f, k;

	if (!tex)
		exit(1);
	rt = gpu_bo(rt_size);
	for (k = 0; k < ntex; k++)
		tex[k] = gpu_bo(tex_size);
	if (qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots))
		exit(1);
	/* the textures' content, once */
	for (k = 0; k < ntex; k++) {
		qgpu_cb_reset(&cb);
		qgpu_cb_bind(&cb, 0, tex[k], 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(&cb, 0, 0, (uint32_t)tex_size, 0x7e0000 + k);
		run(ctx, &cb, NULL);
	}
	for (f = 0; f < frames; f++) {
		unsigned int first = (2 * f) % ntex, extra = rnd() % ntex;

		qgpu_cb_reset(&cb);
		qgpu_cb_bind(&cb, 0, rt, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(&cb, 0, 0, (uint32_t)rt_size, f);
		for (k = 0; k < 7; k++) {
			uint32_t t = tex[k < 6 ? (first + k) % ntex : extra];
			uint32_t n = (uint32_t)(rt_size < tex_size ? rt_size :
						tex_size) / 4;

			qgpu_cb_split_point(&cb);
			qgpu_cb_bind_flags(&cb, 1, t, 0, QGPU_CB_WHOLE, 0);
			qgpu_cb_bind(&cb, 0, rt, 0, QGPU_CB_WHOLE);
			qgpu_cb_add(&cb, 0, 0, 0, 0, 1, 0, n);
		}
		run(ctx, &cb, NULL);
	}
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (k = 0; k < ntex; k++)
		qgpu_bo_destroy(dev.fd, tex[k]);
	qgpu_bo_destroy(dev.fd, rt);
	free(tex);
	printf("%s: %u frames, %u textures of %" PRIu64 " KiB, a target of %" PRIu64 " KiB\n",
	       who, frames, ntex, tex_size / KIB, rt_size / KIB);
}

static int do_frames(void)
{
	frame_loop(rounds, qgpu_vram_usable(&dev), 16, "frames");
	return 0;
}

/*
 * training: weights kept; per step activations (forward: weights ->
 * activations; backward: activations -> gradients), destroyed at once.
 */
static int do_training(void)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t wsize = page_down(vram / 3), asize = page_down(vram / 4);
	uint32_t w, g, act[3], ctx, res, *out;
	struct qgpu_cb cb;
	unsigned int s, k;

	w = gpu_bo(wsize);
	g = gpu_bo(wsize);
	res = result_bo((void **)&out);
	if (qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots))
		return 1;
	qgpu_cb_bind(&cb, 0, w, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(&cb, 0, 0, (uint32_t)wsize, 0x3f800000);
	run(ctx, &cb, NULL);
	for (s = 0; s < rounds; s++) {
		/* forward: three layers of activations */
		qgpu_cb_reset(&cb);
		for (k = 0; k < 3; k++) {
			act[k] = gpu_bo(asize);
			qgpu_cb_bind_flags(&cb, 0, w, 0, QGPU_CB_WHOLE, 0);
			qgpu_cb_bind(&cb, 1, act[k], 0, QGPU_CB_WHOLE);
			qgpu_cb_fill(&cb, 1, 0, (uint32_t)asize, s * 3 + k);
			qgpu_cb_xor(&cb, 1, 0, 1, 0, 0, 0,
				    (uint32_t)(asize < wsize ? asize : wsize) / 4);
			qgpu_cb_split_point(&cb);
		}
		run(ctx, &cb, NULL);
		/* backward: the activations in reverse into the gradients */
		qgpu_cb_reset(&cb);
		for (k = 3; k-- > 0;) {
			qgpu_cb_bind_flags(&cb, 0, act[k], 0, QGPU_CB_WHOLE, 0);
			qgpu_cb_bind(&cb, 1, g, 0, QGPU_CB_WHOLE);
			qgpu_cb_bind(&cb, 2, res, 0, 4096);
			qgpu_cb_add(&cb, 1, 0, 1, 0, 0, 0,
				    (uint32_t)(asize < wsize ? asize : wsize) / 4);
			qgpu_cb_checksum(&cb, 1, 0, 4096, 2, k * 4);
			qgpu_cb_split_point(&cb);
		}
		run(ctx, &cb, NULL);
		for (k = 0; k < 3; k++)
			qgpu_bo_destroy(dev.fd, act[k]);
		/* the update: gradients into the weights */
		qgpu_cb_reset(&cb);
		qgpu_cb_bind(&cb, 0, w, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind_flags(&cb, 1, g, 0, QGPU_CB_WHOLE, 0);
		qgpu_cb_xor(&cb, 0, 0, 0, 0, 1, 0, (uint32_t)wsize / 4);
		run(ctx, &cb, NULL);
	}
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	qgpu_bo_destroy(dev.fd, w);
	qgpu_bo_destroy(dev.fd, g);
	qgpu_bo_destroy(dev.fd, res);
	printf("training: %u steps, weights %" PRIu64 " KiB, 3 activations of %" PRIu64 " KiB a step\n",
	       rounds, wsize / KIB, asize / KIB);
	return 0;
}

/* The largest VRAM segment: what one allocation can take */
static uint64_t largest_segment(void)
{
	const struct drm_qgpu_segment *v = qgpu_dev_segment(&dev, QGPU_SEG_VISIBLE);
	const struct drm_qgpu_segment *l = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL);
	uint64_t a = v ? v->size : 0, b = l ? l->size : 0;

	return a > b ? a : b;
}

/*
 * smallhuge: 256 small allocations and a huge one (three quarters of the
 * largest VRAM segment), used in turns
 */
static int do_smallhuge(void)
{
	uint64_t huge_size = page_down(largest_segment() * 3 / 4);
	uint64_t small = 64 * KIB;
	unsigned int nsmall = 256, i, r, per = 32;
	uint32_t *h = calloc(nsmall, sizeof(*h)), huge, ctx;
	struct qgpu_cb cb;

	if (!h)
		return 1;
	for (i = 0; i < nsmall; i++)
		h[i] = gpu_bo(small);
	huge = gpu_bo(huge_size);
	if (qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots))
		return 1;
	for (r = 0; r < rounds; r++) {
		/* the small ones, a batch per buffer, then the huge one */
		for (i = 0; i < nsmall; i++) {
			if (!(i % per))
				qgpu_cb_reset(&cb);
			qgpu_cb_bind(&cb, i % 8, h[(i + r * 37) % nsmall], 0,
				     QGPU_CB_WHOLE);
			qgpu_cb_fill(&cb, i % 8, 0, (uint32_t)small, i + r);
			if (i % 8 == 7)
				qgpu_cb_split_point(&cb);
			if (i % per == per - 1)
				run(ctx, &cb, NULL);
		}
		qgpu_cb_reset(&cb);
		qgpu_cb_bind(&cb, 0, huge, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(&cb, 0, 0, (uint32_t)huge_size, r);
		run(ctx, &cb, NULL);
	}
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < nsmall; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_destroy(dev.fd, huge);
	free(h);
	printf("smallhuge: %u rounds, %u allocations of %" PRIu64 " KiB and one of %" PRIu64 " KiB\n",
	       rounds, nsmall, small / KIB, huge_size / KIB);
	return 0;
}

/* multi: N processes, each a frame loop over its own textures */
static int do_multi(void)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	unsigned int n = rounds, i, bad = 0;
	pid_t pid;
	int status;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			char who[32];

			qgpu_close(&dev);
			if (qgpu_open(&dev, QGPU_NODE_RENDER))
				_exit(1);
			seed += i * 7919;
			snprintf(who, sizeof(who), "multi[%u]", i);
			frame_loop(12, vram / 2, 8, who);
			_exit(failures ? 1 : 0);
		}
	}
	for (i = 0; i < n; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	}
	check(!bad, "a process failed");
	printf("multi: %u processes\n", n);
	return 0;
}

/* cpu: Lock2 and CPU writes between GPU uses; residency on request */
static int do_cpu(void)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t size = page_down(vram / 4);
	unsigned int n = 6, i, r;
	uint32_t h[6], hidden[2], ctx, res, *out;
	uint64_t lock_offset;
	struct qgpu_cb cb;
	void *map[6];

	for (i = 0; i < n; i++) {
		if (qgpu_bo_create(dev.fd, size, ALL_MASK, QGPU_GEM_CPU_ACCESS,
				   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0), &h[i]) ||
		    qgpu_bo_map(dev.fd, h[i], size, &map[i]))
			return 1;
	}
	/* not CPU-accessible: Lock2 moves them out of VRAM (to the aperture) */
	for (i = 0; i < 2; i++)
		if (qgpu_bo_create(dev.fd, size / 2, ALL_MASK, 0,
				   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0),
				   &hidden[i]))
			return 1;
	res = result_bo((void **)&out);
	if (qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots))
		return 1;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {
			uint32_t *p = map[(i + r) % n];

			/* the CPU writes through its mapping (faults it in) */
			p[0] = r;
			p[size / 8] = i;
			qgpu_cb_reset(&cb);
			qgpu_cb_bind_flags(&cb, 0, h[(i + r) % n], 0,
					   QGPU_CB_WHOLE, 0);
			qgpu_cb_bind(&cb, 1, hidden[i % 2], 0, QGPU_CB_WHOLE);
			qgpu_cb_bind(&cb, 2, res, 0, 4096);
			qgpu_cb_copy(&cb, 1, 0, 0, 0, (uint32_t)size / 2);
			qgpu_cb_checksum(&cb, 1, 0, 4096, 2, i * 4);
			run(ctx, &cb, NULL);
		}
		/* Lock2 of an allocation without CPU access: out of VRAM */
		if (!qgpu_bo_lock(dev.fd, hidden[r % 2], &lock_offset))
			qgpu_bo_unlock(dev.fd, hidden[r % 2]);
		/* residency by request */
		qgpu_bo_reside(dev.fd, h[r % n], QGPU_RESIDE_MAKE_RESIDENT,
			       QGPU_SEG_VISIBLE, NULL);
		qgpu_bo_reside(dev.fd, h[(r + 3) % n], QGPU_RESIDE_EVICT, 0,
			       NULL);
		qgpu_bo_reside(dev.fd, h[(r + 4) % n],
			       QGPU_RESIDE_EVICT_SYSTEM, 0, NULL);
	}
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < n; i++) {
		qgpu_bo_unmap(dev.fd, h[i], map[i], size);
		qgpu_bo_destroy(dev.fd, h[i]);
	}
	for (i = 0; i < 2; i++)
		qgpu_bo_destroy(dev.fd, hidden[i]);
	qgpu_bo_destroy(dev.fd, res);
	printf("cpu: %u rounds, %u CPU-mapped allocations of %" PRIu64 " KiB\n",
	       rounds, n, size / KIB);
	return 0;
}

/*
 * virtual: the size of which two fit in each VRAM segment beside what it
 * holds now (the page tables of the address space; nothing else is
 * resident yet), 64 KiB aligned
 */
static uint64_t pair_size(void)
{
	struct drm_qgpu_segment_stats seg[8];
	struct drm_qgpu_stats st;
	uint64_t size = ~0ull;
	unsigned int n = 0, i;

	check(!qgpu_query_stats(dev.fd, &st, seg, 8, &n), "stats query");
	for (i = 0; i < n && i < 8; i++)
		if ((seg[i].id == QGPU_SEG_VISIBLE || seg[i].id == QGPU_SEG_LOCAL) &&
		    (seg[i].size - seg[i].used) / 2 < size)
			size = (seg[i].size - seg[i].used) / 2;
	return size & ~(64 * KIB - 1);
}

/*
 * virtual: MakeResident of a working set twice VRAM, in turns. Four of the
 * eight fit in VRAM beside their page tables: sized once, mapped (which
 * allocates the page tables), and made again smaller when the tables took
 * the room of one.
 */
static int do_virtual(void)
{
	uint64_t size = page_down(qgpu_vram_usable(&dev) / 4) & ~(64 * KIB - 1);
	unsigned int n = 8, i, r, pass;
	uint32_t h[8], ctx;
	uint64_t va, fence, fit;
	struct qgpu_vcb vcb;

	if (!qgpu_dev_has_mmu(&dev)) {
		printf("virtual: no GPU MMU\n");
		return 77;
	}
	for (pass = 0;; pass++) {
		for (i = 0; i < n; i++)
			h[i] = gpu_bo(size);
		if (qgpu_vm_reserve(dev.fd, 0, n * size, 0, &va))
			return 1;
		for (i = 0; i < n; i++)
			if (qgpu_vm_map(dev.fd, h[i], va + i * size, 0, size, 0))
				return 1;
		fit = pair_size();
		if (fit >= size)
			break;
		check(pass == 0 && fit, "virtual: no room for four allocations");
		check(!qgpu_vm_free(dev.fd, va, n * size), "VM_FREE failed");
		for (i = 0; i < n; i++)
			qgpu_bo_destroy(dev.fd, h[i]);
		size = fit;
	}
	if (qgpu_ctx_create_virtual(dev.fd, &ctx) || qgpu_vcb_init(&vcb))
		return 1;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i += 2) {
			uint32_t pair[2] = { h[(i + r) % n], h[(i + r + 1) % n] };
			uint64_t a = va + ((i + r) % n) * size;
			uint64_t b = va + ((i + r + 1) % n) * size;

			check(!qgpu_make_resident(dev.fd, pair, 2, &fence),
			      "MakeResident failed");
			qgpu_vcb_reset(&vcb);
			qgpu_vcb_fill(&vcb, a, (uint32_t)size, r + i);
			qgpu_vcb_add(&vcb, b, a, b, (uint32_t)size / 4);
			check(!qgpu_vcb_submit_wait(dev.fd, ctx, &vcb, 120 * SEC),
			      "virtual submission failed");
		}
	}
	qgpu_vcb_fini(&vcb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < n; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_vm_free(dev.fd, va, n * size);
	printf("virtual: %u rounds, %u allocations of %" PRIu64 " KiB made resident in pairs\n",
	       rounds, n, size / KIB);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
	unsigned int rounds;
} workloads[] = {
	{ "split", do_split, 3 },
	{ "frames", do_frames, 24 },
	{ "training", do_training, 8 },
	{ "smallhuge", do_smallhuge, 6 },
	{ "multi", do_multi, 3 },
	{ "cpu", do_cpu, 6 },
	{ "virtual", do_virtual, 4 },
};

int main(int argc, char **argv)
{
	const char *node = NULL;
	unsigned int i, n = 0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "d:n:s:")) != -1) {
		switch (opt) {
		case 'd':
			node = optarg;
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0) | 1;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: qgpu-workload [-d NODE] [-n N] [-s SEED] split|frames|training|smallhuge|multi|cpu|virtual\n");
		return 2;
	}
	for (i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(argv[optind], workloads[i].name))
			break;
	if (i == sizeof(workloads) / sizeof(workloads[0])) {
		fprintf(stderr, "qgpu-workload: no workload %s\n", argv[optind]);
		return 2;
	}
	ret = node ? qgpu_open_path(&dev, node) :
	      qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret) {
		fprintf(stderr, "qgpu-workload: no qgpu device: %s\n",
			strerror(-ret));
		return 77;
	}
	rounds = n ? n : workloads[i].rounds;
	ret = workloads[i].fn();
	qgpu_close(&dev);
	if (ret)
		return ret;
	if (failures)
		fprintf(stderr, "qgpu-workload: %d checks failed\n", failures);
	return failures ? 1 : 0;
}
