// SPDX-License-Identifier: MIT
/*
 * qgpu-bench: numbers, never pass/fail on time.
 *
 *   latency   NOP DMA buffer submit -> out-syncobj signalled, median and
 *             p99 over N runs, and in the same run the floor: a bare
 *             QUERY ioctl round trip.
 *   paging    paging-engine TRANSFER bandwidth: GEM_RESIDE of a >= 64 MiB
 *             allocation system -> VRAM and VRAM -> system, against a
 *             memcpy of the same size in guest RAM (ratio).
 *   cpu       CPU write bandwidth through a BAR2 (visible VRAM) mapping and
 *             through the host aperture (non-visible VRAM), against a
 *             memcpy in guest RAM (ratios).
 *   split     one fixed workload (working set W, default 32 MiB): bytes
 *             paged and splits. Run it on devices whose VRAM is 100%, 50%
 *             and 25% of W to see split efficiency.
 *
 * usage: qgpu-bench [-d NODE] [-n RUNS] [-s PAGING_MIB] [-w WORKING_SET]
 *                   [latency|paging|cpu|split|all]...
 * Output lines start with "bench:" and are key=value, for scripts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libqgpu.h"

#define MiB (1024.0 * 1024.0)

static struct qgpu_dev dev;
static int runs = 1000;
static uint64_t paging_size = 64ull << 20;
static uint64_t working_set = 32ull << 20;

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void percentiles(int64_t *v, int n, double *med, double *p99)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	*med = v[n / 2] / 1000.0;
	*p99 = v[(int)((n - 1) * 0.99)] / 1000.0;
}

static int bench_latency(void)
{
	struct drm_qgpu_sync_entry out = { 0 };
	int64_t *lat = calloc(runs, sizeof(*lat));
	double med, p99, qmed, qp99;
	struct qgpu_cb cb;
	uint32_t ctx;
	int i, ret;

	if (!lat)
		return 1;
	ret = qgpu_ctx_create(dev.fd, &ctx);
	if (!ret)
		ret = qgpu_syncobj_create(dev.fd, &out.handle);
	if (!ret)
		ret = qgpu_cb_init(&cb, dev.info.max_slots);
	if (!ret)
		ret = qgpu_cb_nop(&cb, 1);
	if (ret) {
		printf("bench: latency error=\"%s\"\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < runs; i++) {
		int64_t t0 = qgpu_now_ns();

		ret = qgpu_submit(dev.fd, ctx, &cb, NULL, 0, &out, 1, NULL);
		if (!ret)
			ret = qgpu_syncobj_wait(dev.fd, out.handle, 0,
						5000000000ll);
		if (ret) {
			printf("bench: latency error=\"run %d: %s\"\n", i,
			       strerror(-ret));
			return 1;
		}
		lat[i] = qgpu_now_ns() - t0;
	}
	percentiles(lat, runs, &med, &p99);
	for (i = 0; i < runs; i++) {
		struct drm_qgpu_device_info info;
		int64_t t0 = qgpu_now_ns();

		qgpu_query_device(dev.fd, &info);
		lat[i] = qgpu_now_ns() - t0;
	}
	percentiles(lat, runs, &qmed, &qp99);
	printf("bench: latency runs=%d nop_submit_signal_median_us=%.1f nop_submit_signal_p99_us=%.1f query_ioctl_median_us=%.1f query_ioctl_p99_us=%.1f ratio_median=%.1f\n",
	       runs, med, p99, qmed, qp99, qmed > 0 ? med / qmed : 0);
	qgpu_cb_fini(&cb);
	qgpu_syncobj_destroy(dev.fd, out.handle);
	qgpu_ctx_destroy(dev.fd, ctx);
	free(lat);
	return 0;
}

/* memcpy bandwidth in guest RAM, MiB/s (best of 3) */
static double memcpy_bw(uint64_t size)
{
	char *a = malloc(size), *b = malloc(size);
	double best = 0;
	int i;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, size);
	memset(b, 2, size);
	for (i = 0; i < 3; i++) {
		int64_t t0 = qgpu_now_ns(), dt;

		memcpy(b, a, size);
		dt = qgpu_now_ns() - t0;
		if (dt > 0 && size / MiB / (dt / 1e9) > best)
			best = size / MiB / (dt / 1e9);
	}
	/* keep the copy observable */
	if (b[size - 1] != 1)
		best = 0;
	free(a);
	free(b);
	return best;
}

/*
 * Time one GEM_RESIDE move and its completion: the ioctl queues paging
 * buffers; touching a one-page probe mapping waits for them (the fault
 * handler waits for the allocation's last paging fence).
 */
static int64_t timed_move(uint32_t h, volatile uint32_t *probe, uint32_t op,
			  uint32_t seg, int *err)
{
	int64_t t0 = qgpu_now_ns();

	*err = qgpu_bo_reside(dev.fd, h, op, seg, NULL);
	(void)probe[0];
	return qgpu_now_ns() - t0;
}

static int bench_paging(void)
{
	const struct drm_qgpu_segment *vis = qgpu_dev_segment(&dev,
							       QGPU_SEG_VISIBLE);
	uint64_t size = paging_size;
	double in_bw = 0, out_bw = 0, ref;
	uint32_t h;
	void *map;
	volatile uint32_t *probe;
	int i, err, ret;

	if (!vis)
		return 1;
	if (size > vis->size - vis->reserved_size) {
		size = (vis->size - vis->reserved_size) & ~((1ull << 20) - 1);
		printf("bench: paging note=\"visible VRAM holds only %.0f MiB; using that (want >= 64 MiB: give the device more VRAM)\"\n",
		       size / MiB);
	}
	ret = qgpu_bo_create(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			     QGPU_SEGBIT(QGPU_SEG_APERTURE),
			     QGPU_GEM_CPU_ACCESS, QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0),
			     &h);
	if (!ret)
		ret = qgpu_bo_map(dev.fd, h, size, &map);
	if (ret) {
		printf("bench: paging error=\"%s\"\n", strerror(-ret));
		return 1;
	}
	/* real content: a pristine allocation would be zero-filled instead */
	qgpu_pattern_fill(map, size, 77);
	munmap(map, size);
	qgpu_bo_unlock(dev.fd, h);
	ret = qgpu_bo_map(dev.fd, h, 4096, (void **)&probe);
	if (ret) {
		printf("bench: paging error=\"probe map: %s\"\n",
		       strerror(-ret));
		return 1;
	}
	(void)probe[0];
	/* it starts in system memory: in, then out, three times */
	for (i = 0; i < 3; i++) {
		int64_t t;

		t = timed_move(h, probe, QGPU_RESIDE_MAKE_RESIDENT,
			       QGPU_SEG_VISIBLE, &err);
		if (err)
			break;
		if (t > 0 && size / MiB / (t / 1e9) > in_bw)
			in_bw = size / MiB / (t / 1e9);
		t = timed_move(h, probe, QGPU_RESIDE_EVICT_SYSTEM, 0, &err);
		if (err)
			break;
		if (t > 0 && size / MiB / (t / 1e9) > out_bw)
			out_bw = size / MiB / (t / 1e9);
	}
	if (err) {
		printf("bench: paging error=\"reside: %s\"\n", strerror(-err));
		return 1;
	}
	if (probe[0] != qgpu_pattern(77, 0))
		printf("bench: paging note=\"content changed across moves!\"\n");
	ref = memcpy_bw(size);
	printf("bench: paging size_mib=%.0f to_vram_mib_s=%.0f from_vram_mib_s=%.0f guest_memcpy_mib_s=%.0f to_vram_ratio=%.3f from_vram_ratio=%.3f\n",
	       size / MiB, in_bw, out_bw, ref, ref ? in_bw / ref : 0,
	       ref ? out_bw / ref : 0);
	qgpu_bo_unmap(dev.fd, h, (void *)probe, 4096);
	qgpu_bo_destroy(dev.fd, h);
	return 0;
}

/* CPU write bandwidth (MiB/s, best of 3) into an allocation resident in
 * @seg, mapped; reports its cpu_path. */
static double cpu_write_bw(uint32_t seg, uint64_t size, uint32_t *path)
{
	uint32_t mask = QGPU_SEGBIT(seg) | QGPU_SEGBIT(QGPU_SEG_APERTURE);
	struct drm_qgpu_gem_info info;
	char *src = malloc(size);
	double best = 0;
	void *map;
	uint32_t h;
	int i, ret;

	*path = QGPU_CPU_PATH_NONE;
	if (!src)
		return -1;
	memset(src, 0x5a, size);
	ret = qgpu_bo_create(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS,
			     QGPU_PREF(seg, 0, 0), &h);
	if (!ret)
		ret = qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg,
				     NULL);
	if (!ret)
		ret = qgpu_bo_map(dev.fd, h, size, &map);
	if (ret) {
		free(src);
		return -1;
	}
	((volatile char *)map)[0] = 0;	/* fault it in */
	if (!qgpu_bo_info(dev.fd, h, &info))
		*path = info.cpu_path;
	for (i = 0; i < 3; i++) {
		int64_t t0 = qgpu_now_ns(), dt;

		memcpy(map, src, size);
		dt = qgpu_now_ns() - t0;
		if (dt > 0 && size / MiB / (dt / 1e9) > best)
			best = size / MiB / (dt / 1e9);
	}
	if (((volatile char *)map)[size - 1] != 0x5a)
		best = 0;
	qgpu_bo_unmap(dev.fd, h, map, size);
	qgpu_bo_destroy(dev.fd, h);
	free(src);
	return best;
}

static int bench_cpu(void)
{
	uint64_t size = 16ull << 20;
	const struct drm_qgpu_segment *vis, *loc;
	double bar, hap = -1, ref;
	uint32_t pbar, phap = QGPU_CPU_PATH_NONE;

	vis = qgpu_dev_segment(&dev, QGPU_SEG_VISIBLE);
	loc = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL);
	if (vis && size > vis->size)
		size = vis->size;
	if (loc && dev.info.host_aperture_size) {
		if (size > loc->size)
			size = loc->size;
		if (size > dev.info.host_aperture_size)
			size = dev.info.host_aperture_size;
	}
	ref = memcpy_bw(size);
	bar = cpu_write_bw(QGPU_SEG_VISIBLE, size, &pbar);
	if (loc && dev.info.host_aperture_size)
		hap = cpu_write_bw(QGPU_SEG_LOCAL, size, &phap);
	printf("bench: cpu size_mib=%.0f guest_memcpy_mib_s=%.0f bar2_write_mib_s=%.0f bar2_path=%s bar2_ratio=%.3f",
	       size / MiB, ref, bar, qgpu_cpu_path_name(pbar),
	       ref > 0 && bar > 0 ? bar / ref : 0);
	if (hap >= 0)
		printf(" hap_write_mib_s=%.0f hap_path=%s hap_ratio=%.3f\n",
		       hap, qgpu_cpu_path_name(phap),
		       ref > 0 ? hap / ref : 0);
	else
		printf(" hap=unavailable (no non-visible VRAM or no host aperture)\n");
	return bar < 0;
}

/*
 * The fixed split workload: 16 allocations of W/16 in VRAM only, one DMA
 * buffer: A[i] = fill(p_i) ^ A[i-1], checksum into a result buffer.
 */
static int bench_split(void)
{
	uint64_t chunk = (working_set / 16) & ~4095ull;
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE), h[16], res, ctx;
	uint64_t vram = dev.info.vram_size;
	struct drm_qgpu_stats s0, s1;
	uint32_t portions = 0, c = 0, *out;
	struct qgpu_cb cb;
	int64_t t0, dt;
	int i, ret, bad = 0;

	if (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL))
		mask |= QGPU_SEGBIT(QGPU_SEG_LOCAL);
	ret = qgpu_bo_create(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
			     QGPU_GEM_CPU_ACCESS, 0, &res);
	for (i = 0; i < 16 && !ret; i++)
		ret = qgpu_bo_create(dev.fd, chunk, mask, 0, 0, &h[i]);
	if (!ret)
		ret = qgpu_ctx_create(dev.fd, &ctx);
	if (!ret)
		ret = qgpu_cb_init(&cb, dev.info.max_slots);
	if (ret) {
		printf("bench: split error=\"%s\"\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < 16; i++) {
		qgpu_cb_bind(&cb, 0, h[i], 0, QGPU_CB_WHOLE);
		if (i)
			qgpu_cb_bind(&cb, 1, h[i - 1], 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(&cb, 2, res, 0, 4096);
		qgpu_cb_fill(&cb, 0, 0, chunk, 0x01000193u * (i + 3));
		if (i)
			qgpu_cb_xor(&cb, 0, 0, 0, 0, 1, 0, chunk / 4);
		qgpu_cb_checksum(&cb, 0, 0, chunk, 2, i * 4);
	}
	qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	t0 = qgpu_now_ns();
	ret = qgpu_submit_wait(dev.fd, ctx, &cb, 120ll * 1000000000,
			       &portions);
	dt = qgpu_now_ns() - t0;
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	if (ret) {
		printf("bench: split error=\"submit: %s\"\n", strerror(-ret));
		return 1;
	}
	if (!qgpu_bo_map(dev.fd, res, 4096, (void **)&out)) {
		for (i = 0; i < 16; i++) {
			uint32_t want = QGPU_CSUM_INIT, p = 0x01000193u * (i + 3);
			uint64_t k;

			c = i ? c ^ p : p;
			for (k = 0; k < chunk / 4; k++)
				want = (want ^ c) * QGPU_CSUM_PRIME;
			bad += out[i] != want;
		}
		qgpu_bo_unmap(dev.fd, res, out, 4096);
	}
	printf("bench: split working_set_mib=%.0f vram_mib=%.0f vram_pct=%.0f portions=%u splits=%u bytes_paged=%llu bytes_to_vram=%llu bytes_from_vram=%llu bytes_vram_to_vram=%llu bytes_filled=%llu evictions=%llu paging_buffers=%llu time_ms=%.1f results=%s\n",
	       16 * chunk / MiB, vram / MiB, 100.0 * vram / (16 * chunk),
	       portions, portions ? portions - 1 : 0,
	       (unsigned long long)(s1.bytes_to_vram - s0.bytes_to_vram +
				    s1.bytes_from_vram - s0.bytes_from_vram +
				    s1.bytes_vram_to_vram - s0.bytes_vram_to_vram),
	       (unsigned long long)(s1.bytes_to_vram - s0.bytes_to_vram),
	       (unsigned long long)(s1.bytes_from_vram - s0.bytes_from_vram),
	       (unsigned long long)(s1.bytes_vram_to_vram - s0.bytes_vram_to_vram),
	       (unsigned long long)(s1.bytes_filled - s0.bytes_filled),
	       (unsigned long long)(s1.evictions - s0.evictions),
	       (unsigned long long)(s1.paging_buffers - s0.paging_buffers),
	       dt / 1e6, bad ? "WRONG" : "correct");
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < 16; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_destroy(dev.fd, res);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *node = NULL;
	bool lat = false, pag = false, cpu = false, spl = false;
	int c, i, ret, fail = 0;
	int64_t v;

	while ((c = getopt(argc, argv, "d:n:s:w:h")) != -1) {
		switch (c) {
		case 'd':
			node = optarg;
			break;
		case 'n':
			runs = atoi(optarg);
			if (runs < 1)
				runs = 1;
			break;
		case 's':
			v = qgpu_parse_size(optarg);
			if (v > 0)
				paging_size = v < 4096 ? (uint64_t)v << 20 : (uint64_t)v;
			break;
		case 'w':
			v = qgpu_parse_size(optarg);
			if (v > 0)
				working_set = v < 4096 ? (uint64_t)v << 20 : (uint64_t)v;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d NODE] [-n RUNS] [-s PAGING_SIZE] [-w WORKING_SET] [latency|paging|cpu|split|all]...\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "latency"))
			lat = true;
		else if (!strcmp(argv[i], "paging"))
			pag = true;
		else if (!strcmp(argv[i], "cpu"))
			cpu = true;
		else if (!strcmp(argv[i], "split"))
			spl = true;
		else if (!strcmp(argv[i], "all"))
			lat = pag = cpu = spl = true;
		else {
			fprintf(stderr, "qgpu-bench: unknown benchmark %s\n",
				argv[i]);
			return 2;
		}
	}
	if (!lat && !pag && !cpu && !spl)
		lat = pag = cpu = spl = true;
	ret = node ? qgpu_open_path(&dev, node) :
		     qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret) {
		fprintf(stderr, "qgpu-bench: no qgpu device: %s\n",
			strerror(-ret));
		return 1;
	}
	printf("bench: device vram_mib=%.0f visible_mib=%.0f gart_mib=%.0f hap_mib=%.0f\n",
	       dev.info.vram_size / MiB, dev.info.visible_vram_size / MiB,
	       dev.info.gart_size / MiB, dev.info.host_aperture_size / MiB);
	if (lat)
		fail |= bench_latency();
	if (pag)
		fail |= bench_paging();
	if (cpu)
		fail |= bench_cpu();
	if (spl)
		fail |= bench_split();
	qgpu_close(&dev);
	return fail;
}
