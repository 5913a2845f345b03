// SPDX-License-Identifier: MIT
/*
 * qgpu-demo: the `make run` demonstration.
 *
 *  1. prints the device identity and segments;
 *  2. oversubscribes VRAM with CPU-accessible allocations (2x VRAM by
 *     default), fills each with its own pattern through a CPU mapping, then
 *     forces them in and out of VRAM with GEM_RESIDE several times and
 *     verifies every byte through the same mappings ("Mapping Virtual
 *     Addresses to a Memory Segment": eviction is invisible to a mapped
 *     application);
 *  3. runs one DMA buffer whose allocations total 3x VRAM (a FILL/XOR/
 *     CHECKSUM chain built with libqgpu's builder), which the kernel must
 *     split ("Splitting a DMA Buffer"); prints the portions and the paging
 *     counters and checks every checksum against the host's.
 *
 * usage: qgpu-demo [-d NODE] [-o FACTOR] [-x FACTOR] [-r ROUNDS]
 * Exit status 0 when every check passed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libqgpu.h"

#define MiB (1024.0 * 1024.0)

static struct qgpu_dev dev;

/*
 * Bytes of guest RAM the demo may fill with allocation backing store: every
 * allocation that was ever resident keeps its system pages, so a demo
 * larger than the guest's memory would only show the OOM killer.
 */
static uint64_t ram_budget(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return ~0ull;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb ? kb * 1024 / 2 : ~0ull;
}

/* factor x VRAM, capped by the RAM budget; tells when it was capped */
static uint64_t demo_total(double factor, uint64_t vram)
{
	uint64_t want = (uint64_t)(factor * vram), budget = ram_budget();

	if (want <= budget)
		return want;
	printf("   (guest RAM: using %.0f MiB instead of %.0f MiB; boot the VM with more memory for the full %.1fx)\n",
	       budget / MiB, want / MiB, factor);
	return budget;
}

static void stats_delta(const struct drm_qgpu_stats *a,
			const struct drm_qgpu_stats *b)
{
	const __u64 *va = (const __u64 *)a, *vb = (const __u64 *)b;
	unsigned int i;

	for (i = 0; i < QGPU_NUM_STATS; i++) {
		if (i < 2) /* current values, not counters */
			printf("    %-20s %llu\n", qgpu_stat_name(i),
			       (unsigned long long)vb[i]);
		else if (vb[i] != va[i])
			printf("    %-20s +%llu\n", qgpu_stat_name(i),
			       (unsigned long long)(vb[i] - va[i]));
	}
}

static void identity(void)
{
	const struct drm_qgpu_device_info *in = &dev.info;
	char buf[200];
	unsigned int i;

	printf("== qgpu %04x:%04x rev %u, device version %u.%u on %s\n",
	       in->vendor_id, in->device_id, in->revision, in->version >> 16,
	       in->version & 0xffff, dev.path);
	printf("   caps %s, %u slots, %u contexts\n",
	       qgpu_format_caps(in->caps, buf, sizeof(buf)), in->max_slots,
	       in->max_contexts);
	printf("   VRAM %.0f MiB (%.0f MiB CPU-visible), GART %.0f MiB, host aperture %.0f MiB\n",
	       in->vram_size / MiB, in->visible_vram_size / MiB,
	       in->gart_size / MiB, in->host_aperture_size / MiB);
	for (i = 0; i < dev.nsegs; i++)
		printf("   segment %u %-12s %7.1f MiB  %s\n", dev.segs[i].id,
		       qgpu_segment_name(dev.segs[i].id),
		       dev.segs[i].size / MiB,
		       qgpu_format_segment_flags(dev.segs[i].flags, buf,
						 sizeof(buf)));
}

/* Part 2: CPU-mapped allocations through forced evictions. */
static int oversubscribe(double factor, int rounds)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t chunk = vram / 8;
	unsigned int n, i, bad = 0;
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			QGPU_SEGBIT(QGPU_SEG_APERTURE);
	struct drm_qgpu_stats s0, s1;
	uint32_t *h, *seed;
	void **map;
	int r, ret;

	if (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) &&
	    dev.info.host_aperture_size) {
		mask |= QGPU_SEGBIT(QGPU_SEG_LOCAL);
		/* a local-VRAM allocation is CPU-mapped through the aperture */
		if (chunk > dev.info.host_aperture_size / 2)
			chunk = dev.info.host_aperture_size / 2;
	}
	chunk &= ~4095ull;
	if (chunk < 4096)
		chunk = 4096;
	printf("\n== oversubscription\n");
	n = (unsigned int)(demo_total(factor, vram) / chunk);
	if (n < 2)
		n = 2;
	printf("   %u CPU-mapped allocations of %.1f MiB = %.1f MiB (%.1fx VRAM)\n",
	       n, chunk / MiB, n * chunk / MiB, (double)n * chunk / vram);
	h = calloc(n, sizeof(*h));
	map = calloc(n, sizeof(*map));
	seed = calloc(n, sizeof(*seed));
	if (!h || !map || !seed)
		return 1;
	qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	for (i = 0; i < n; i++) {
		ret = qgpu_bo_create(dev.fd, chunk, mask, QGPU_GEM_CPU_ACCESS,
				     QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0), &h[i]);
		if (!ret)
			ret = qgpu_bo_map(dev.fd, h[i], chunk, &map[i]);
		if (ret) {
			printf("   allocation %u: %s\n", i, strerror(-ret));
			return 1;
		}
		seed[i] = 1000 + i;
		qgpu_pattern_fill(map[i], chunk, seed[i]);
	}
	printf("   filled every allocation with its own pattern through its mapping\n");
	for (r = 0; r < rounds; r++) {
		unsigned int where[QGPU_SEG_MAX + 1] = { 0 };

		/* make each one resident in turn, alternating between the
		 * VRAM segments: the others get evicted */
		for (i = 0; i < n; i++) {
			unsigned int k = r % 2 ? n - 1 - i : i;
			uint32_t seg = QGPU_SEG_VISIBLE;

			if (mask & QGPU_SEGBIT(QGPU_SEG_LOCAL) && k % 2)
				seg = QGPU_SEG_LOCAL;
			ret = qgpu_bo_reside(dev.fd, h[k],
					     QGPU_RESIDE_MAKE_RESIDENT, seg,
					     NULL);
			if (ret)
				printf("   make resident %u: %s\n", k,
				       strerror(-ret));
		}
		for (i = 0; i < n; i++) {
			struct drm_qgpu_gem_info info;

			if (!qgpu_bo_info(dev.fd, h[i], &info) &&
			    info.segment <= QGPU_SEG_MAX)
				where[info.segment]++;
		}
		printf("   round %d: %u in visible VRAM, %u in local VRAM, %u in the aperture, %u in system memory;",
		       r + 1, where[QGPU_SEG_VISIBLE], where[QGPU_SEG_LOCAL],
		       where[QGPU_SEG_APERTURE], where[QGPU_SEG_SYSTEM]);
		/* every byte through the same mappings, then new content */
		for (i = 0; i < n; i++) {
			int64_t at = qgpu_pattern_check(map[i], chunk,
							seed[i]);

			if (at >= 0) {
				printf("\n   round %d: allocation %u differs at word %lld",
				       r, i, (long long)at);
				bad++;
			}
			seed[i] += 7919;
			qgpu_pattern_fill(map[i], chunk, seed[i]);
		}
		printf(" %s\n", bad ? "MISMATCH" : "all verified and rewritten");
	}
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	printf("   counters during this part:\n");
	stats_delta(&s0, &s1);
	for (i = 0; i < n; i++) {
		qgpu_bo_unmap(dev.fd, h[i], map[i], chunk);
		qgpu_bo_destroy(dev.fd, h[i]);
	}
	free(h);
	free(map);
	free(seed);
	printf("   %s\n", bad ? "FAILED" : "OK: eviction was invisible to the mapped application");
	return bad ? 1 : 0;
}

/* Part 3: one DMA buffer over allocations totalling FACTOR x VRAM. */
static int split_workload(double factor)
{
	uint64_t vram = qgpu_vram_usable(&dev);
	uint64_t chunk = (vram / 4) & ~4095ull;
	uint32_t vram_mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
	unsigned int n, i, bad = 0;
	struct drm_qgpu_stats s0, s1;
	struct drm_qgpu_context_status cs;
	uint32_t *h, res, ctx, portions = 0, c = 0;
	uint32_t *out;
	struct qgpu_cb cb;
	int ret;

	if (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL))
		vram_mask |= QGPU_SEGBIT(QGPU_SEG_LOCAL);
	printf("\n== DMA-buffer splitting\n");
	n = (unsigned int)(demo_total(factor, vram) / chunk);
	if (n < 5)
		n = 5;
	printf("   %u allocations of %.1f MiB = %.1f MiB (%.1fx VRAM) in one DMA buffer\n",
	       n, chunk / MiB, n * chunk / MiB, (double)n * chunk / vram);
	printf("   A[0] = fill(p0); A[i] = fill(p_i) ^ A[i-1]; result[i] = checksum(A[i])\n");
	h = calloc(n, sizeof(*h));
	if (!h)
		return 1;
	for (i = 0; i < n; i++) {
		ret = qgpu_bo_create(dev.fd, chunk, vram_mask, 0, 0, &h[i]);
		if (ret) {
			printf("   allocation %u: %s\n", i, strerror(-ret));
			return 1;
		}
	}
	ret = qgpu_bo_create(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE) |
			     QGPU_SEGBIT(QGPU_SEG_VISIBLE), QGPU_GEM_CPU_ACCESS,
			     QGPU_PREF(QGPU_SEG_APERTURE, 0, 0), &res);
	if (!ret)
		ret = qgpu_ctx_create(dev.fd, &ctx);
	if (!ret)
		ret = qgpu_cb_init(&cb, dev.info.max_slots);
	if (ret) {
		printf("   set-up: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint32_t p = 0x1000193u * (i + 7);

		qgpu_cb_bind(&cb, 0, h[i], 0, QGPU_CB_WHOLE);
		if (i)
			qgpu_cb_bind(&cb, 1, h[i - 1], 0, QGPU_CB_WHOLE);
		else
			qgpu_cb_unbind(&cb, 1);
		qgpu_cb_bind(&cb, 2, res, 0, 4096);
		qgpu_cb_fill(&cb, 0, 0, chunk, p);
		if (i)
			qgpu_cb_xor(&cb, 0, 0, 0, 0, 1, 0, chunk / 4);
		qgpu_cb_checksum(&cb, 0, 0, chunk, 2, i * 4);
	}
	printf("   DMA buffer: %u bytes, %u allocation-list entries, %u patch locations\n",
	       qgpu_cb_offset(&cb), cb.nallocs, cb.npatches);
	qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	ret = qgpu_submit_wait(dev.fd, ctx, &cb, 60ll * 1000000000, &portions);
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	if (ret) {
		printf("   submit: %s\n", strerror(-ret));
		bad++;
	} else {
		printf("   the kernel split it into %u portions (%u splits)\n",
		       portions, portions ? portions - 1 : 0);
	}
	if (!qgpu_query_context(dev.fd, ctx, &cs) && cs.state != QGPU_CTX_OK) {
		printf("   context lost: %s (fault %s at offset %u)\n",
		       qgpu_ctx_state_name(cs.state),
		       qgpu_fault_name(cs.fault_reason), cs.fault_offset);
		bad++;
	}
	printf("   counters during this part:\n");
	stats_delta(&s0, &s1);
	ret = qgpu_bo_map(dev.fd, res, 4096, (void **)&out);
	if (ret) {
		printf("   map results: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < n && !bad; i++) {
		uint32_t p = 0x1000193u * (i + 7), want, k;

		c = i ? c ^ p : p;
		want = QGPU_CSUM_INIT;
		for (k = 0; k < chunk / 4; k++)
			want = (want ^ c) * QGPU_CSUM_PRIME;
		if (out[i] != want) {
			printf("   result[%u] = %08x, host computed %08x\n", i,
			       out[i], want);
			bad++;
		}
	}
	if (!bad)
		printf("   all %u checksums equal the host's\n", n);
	qgpu_bo_unmap(dev.fd, res, out, 4096);
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < n; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_destroy(dev.fd, res);
	free(h);
	if (portions < 2 && !bad) {
		printf("   note: no split happened\n");
	}
	printf("   %s\n", bad ? "FAILED" : "OK");
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *node = NULL;
	double over = 2.0, split = 3.0;
	int rounds = 3, c, ret, fail = 0;
	struct drm_qgpu_stats st;

	while ((c = getopt(argc, argv, "d:o:x:r:h")) != -1) {
		switch (c) {
		case 'd':
			node = optarg;
			break;
		case 'o':
			over = atof(optarg);
			break;
		case 'x':
			split = atof(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d NODE] [-o OVERSUBSCRIPTION] [-x SPLIT_FACTOR] [-r ROUNDS]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	ret = node ? qgpu_open_path(&dev, node) :
		     qgpu_open(&dev, QGPU_NODE_RENDER);
	if (ret) {
		fprintf(stderr, "qgpu-demo: no qgpu device: %s\n",
			strerror(-ret));
		return 1;
	}
	identity();
	fail |= oversubscribe(over, rounds);
	fail |= split_workload(split);
	if (!qgpu_query_stats(dev.fd, &st, NULL, 0, NULL))
		printf("\n== totals since boot: %llu MiB paged into VRAM, %llu MiB out, %llu evictions, %llu split portions, %llu paging buffers\n",
		       (unsigned long long)st.bytes_to_vram >> 20,
		       (unsigned long long)st.bytes_from_vram >> 20,
		       (unsigned long long)st.evictions,
		       (unsigned long long)st.split_portions,
		       (unsigned long long)st.paging_buffers);
	qgpu_close(&dev);
	printf("%s\n", fail ? "demo: FAILED" : "demo: all checks passed");
	return fail;
}
