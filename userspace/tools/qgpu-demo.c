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
 *     counters and checks every checksum against the host's;
 *  4. on a device with a GPU MMU, runs one compute workload (C = A + B and
 *     the checksum of C) in both addressing models side by side: the
 *     physical one (allocation and patch-location lists, as in 3) and the
 *     virtual one ("GpuMmu Example Scenarios": VM map, MakeResident, a
 *     virtual-mode DMA buffer); checks both against the host, prints each
 *     model's paging counters and the MMU counters, and the paging commands
 *     one MakeResident queued, as the driver's tracepoints logged them.
 *
 * usage: qgpu-demo [-d NODE] [-o FACTOR] [-x FACTOR] [-r ROUNDS]
 * Exit status 0 when every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Part 4: the same workload in the physical and the virtual model. */

#define TRACEFS		"/sys/kernel/tracing"
#define SZ_64K		0x10000ull
#define SEC		1000000000ll

/* The paging operations of "GpuMmu Example Scenarios", as traced */
static const char *const paging_events[] = {
	"qgpu_update_pt", "qgpu_flush_tlb", "qgpu_transfer_virtual",
	"qgpu_fill_virtual", "qgpu_paging_signal",
};

/* tracing_on as it was before the demo, put back afterwards */
static char trace_was_on[8] = "1";

static int trace_write(const char *file, const char *val)
{
	char path[160];
	int fd, ok;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -EIO;
}

/*
 * Start tracing the paging events; a reason on stdout and false when
 * tracefs or the events are not there.
 */
static bool trace_start(void)
{
	char path[160];
	struct stat st;
	unsigned int i;
	FILE *f;

	if (stat(TRACEFS "/events", &st))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	if (stat(TRACEFS "/events", &st)) {
		printf("   (tracefs is not available at " TRACEFS ": no command sequence to show)\n");
		return false;
	}
	for (i = 0; i < sizeof(paging_events) / sizeof(paging_events[0]); i++) {
		snprintf(path, sizeof(path), TRACEFS "/events/qgpu/%s",
			 paging_events[i]);
		if (stat(path, &st)) {
			printf("   (the driver has no %s tracepoint: no command sequence to show)\n",
			       paging_events[i]);
			return false;
		}
	}
	f = fopen(TRACEFS "/tracing_on", "r");
	if (f) {
		if (!fgets(trace_was_on, sizeof(trace_was_on), f))
			snprintf(trace_was_on, sizeof(trace_was_on), "1");
		fclose(f);
	}
	if (trace_write("tracing_on", "0") || trace_write("trace", "") ||
	    trace_write("events/qgpu/enable", "1") ||
	    trace_write("tracing_on", "1")) {
		printf("   (cannot enable the qgpu tracepoints)\n");
		return false;
	}
	return true;
}

/* Stop tracing and print the paging events, as the driver logged them. */
static void trace_show(void)
{
	unsigned int shown = 0, i;
	char line[512];
	FILE *f;

	trace_write("tracing_on", "0");
	trace_write("events/qgpu/enable", "0");
	f = fopen(TRACEFS "/trace", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(paging_events) / sizeof(paging_events[0]); i++) {
			char key[64], *at;

			snprintf(key, sizeof(key), " %s: ", paging_events[i]);
			at = strstr(line, key);
			if (!at)
				continue;
			if (shown++ < 48)
				printf("     %s", at + 1);
			break;
		}
	}
	fclose(f);
	if (shown > 48)
		printf("     ... %u more\n", shown - 48);
	if (!shown)
		printf("     (no paging events were logged)\n");
	trace_write("trace", "");
	trace_write("tracing_on", trace_was_on);
}

struct workload {
	uint64_t size;		/* bytes of A, B and C each */
	uint32_t *a, *b;	/* host copies of the inputs */
	uint32_t *c;		/* host result */
	uint32_t csum;		/* host checksum of c */
	uint32_t seg_mask;
};

/* The three allocations of one model, A and B filled through the CPU */
static int wl_create(const struct workload *w, uint32_t h[3])
{
	void *p;
	int i, ret;

	for (i = 0; i < 3; i++) {
		ret = qgpu_bo_create(dev.fd, w->size, w->seg_mask,
				     QGPU_GEM_CPU_ACCESS,
				     QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0), &h[i]);
		if (ret)
			return ret;
		if (i == 2)
			break;
		ret = qgpu_bo_map(dev.fd, h[i], w->size, &p);
		if (ret)
			return ret;
		memcpy(p, i ? w->b : w->a, w->size);
		/* unlocked again: MakeResident refuses a locked allocation */
		qgpu_bo_unmap(dev.fd, h[i], p, w->size);
	}
	return 0;
}

/* Compare a model's C (read back through the CPU) and checksum with the host's */
static int wl_check(const struct workload *w, const char *model, uint32_t c,
		    uint32_t csum)
{
	uint64_t k;
	void *p;
	int bad = 0;

	if (qgpu_bo_map(dev.fd, c, w->size, &p)) {
		printf("   %s: cannot map the result\n", model);
		return 1;
	}
	for (k = 0; k < w->size / 4; k++)
		if (((uint32_t *)p)[k] != w->c[k]) {
			printf("   %s: C[%llu] = %08x, host computed %08x\n",
			       model, (unsigned long long)k,
			       ((uint32_t *)p)[k], w->c[k]);
			bad = 1;
			break;
		}
	qgpu_bo_unmap(dev.fd, c, p, w->size);
	if (csum != w->csum) {
		printf("   %s: checksum %08x, host computed %08x\n", model,
		       csum, w->csum);
		bad = 1;
	}
	if (!bad)
		printf("   %-8s C = A + B equals the host's, checksum %08x equals the host's\n",
		       model, csum);
	return bad;
}

static uint32_t result_buf(uint32_t **map)
{
	uint32_t h;

	if (qgpu_bo_create(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
			   QGPU_GEM_CPU_ACCESS, 0, &h))
		return 0;
	if (qgpu_bo_map(dev.fd, h, 4096, (void **)map)) {
		qgpu_bo_destroy(dev.fd, h);
		return 0;
	}
	(*map)[0] = 0;
	return h;
}

static int run_physical(const struct workload *w)
{
	struct drm_qgpu_stats s0, s1;
	uint32_t h[3], res, ctx, *r, csum;
	struct qgpu_cb cb;
	int ret, bad, i;

	printf("   physical model: allocation list + patch-location list, the kernel pages on submit\n");
	res = result_buf(&r);
	if (!res || wl_create(w, h) || qgpu_ctx_create(dev.fd, &ctx) ||
	    qgpu_cb_init(&cb, dev.info.max_slots)) {
		printf("   physical: set-up failed: %s\n", strerror(errno));
		return 1;
	}
	qgpu_cb_bind_flags(&cb, 0, h[0], 0, w->size, 0);
	qgpu_cb_bind_flags(&cb, 1, h[1], 0, w->size, 0);
	qgpu_cb_bind(&cb, 2, h[2], 0, w->size);
	qgpu_cb_bind(&cb, 3, res, 0, 4096);
	qgpu_cb_add(&cb, 2, 0, 0, 0, 1, 0, w->size / 4);
	qgpu_cb_checksum(&cb, 2, 0, w->size, 3, 0);
	qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	ret = qgpu_submit_wait(dev.fd, ctx, &cb, 60 * SEC, NULL);
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	csum = r[0];
	if (ret) {
		printf("   physical: submit: %s\n", strerror(-ret));
		bad = 1;
	} else {
		bad = wl_check(w, "physical", h[2], csum);
	}
	printf("   physical counters: %.1f MiB paged into VRAM, %.1f MiB out, %llu paging buffers\n",
	       (s1.bytes_to_vram - s0.bytes_to_vram) / MiB,
	       (s1.bytes_from_vram - s0.bytes_from_vram) / MiB,
	       (unsigned long long)(s1.paging_buffers - s0.paging_buffers));
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < 3; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_unmap(dev.fd, res, r, 4096);
	qgpu_bo_destroy(dev.fd, res);
	return bad;
}

static void mmu_delta(const struct drm_qgpu_mmu_info *a,
		      const struct drm_qgpu_mmu_info *b)
{
	printf("   virtual MMU counters: %llu PTEs written by %llu UPDATE_PT, %llu TLB flushes, %.1f MiB TRANSFER_VIRTUAL, %.1f MiB FILL_VIRTUAL\n",
	       (unsigned long long)(b->pte_writes - a->pte_writes),
	       (unsigned long long)(b->update_pt_cmds - a->update_pt_cmds),
	       (unsigned long long)(b->tlb_flushes - a->tlb_flushes),
	       (b->transfer_virtual_bytes - a->transfer_virtual_bytes) / MiB,
	       (b->fill_virtual_bytes - a->fill_virtual_bytes) / MiB);
}

/* Reserve a range and map A, B, C and the result buffer in it */
static int vm_layout(const struct workload *w, const uint32_t h[3],
		     uint32_t res, uint64_t *va)
{
	int i, ret;

	ret = qgpu_vm_reserve(dev.fd, 0, 3 * w->size + SZ_64K, 0, va);
	for (i = 0; i < 3 && !ret; i++)
		ret = qgpu_vm_map(dev.fd, h[i], *va + i * w->size, 0,
				  w->size, i < 2 ? QGPU_VM_MAP_READ_ONLY : 0);
	if (!ret)
		ret = qgpu_vm_map(dev.fd, res, *va + 3 * w->size, 0, 4096, 0);
	return ret;
}

static int run_virtual(const struct workload *w)
{
	struct drm_qgpu_mmu_info m0, m1;
	struct drm_qgpu_stats s0, s1;
	uint32_t h[3], res, ctx, *r, csum;
	uint64_t va = 0, fence = 0;
	struct qgpu_vcb vcb;
	bool traced;
	int ret, bad, i;

	printf("   virtual model: VM map + MakeResident + a virtual DMA buffer (no lists)\n");
	res = result_buf(&r);
	if (!res || wl_create(w, h) || qgpu_ctx_create_virtual(dev.fd, &ctx)) {
		printf("   virtual: set-up failed: %s\n", strerror(errno));
		return 1;
	}
	qgpu_vcb_init(&vcb);
	qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	qgpu_query_mmu(dev.fd, &m0);
	ret = vm_layout(w, h, res, &va);
	traced = !ret && trace_start();
	if (!ret)
		ret = qgpu_make_resident(dev.fd, h, 3, &fence);
	if (!ret)
		ret = qgpu_paging_fence_wait(dev.fd, fence, 60 * SEC);
	if (traced) {
		printf("   MakeResident of A, B and C (paging fence %llu), as the driver queued it:\n",
		       (unsigned long long)fence);
		trace_show();
	}
	if (!ret) {
		printf("   A at %#llx, B at %#llx (read-only), C at %#llx\n",
		       (unsigned long long)va,
		       (unsigned long long)(va + w->size),
		       (unsigned long long)(va + 2 * w->size));
		qgpu_vcb_add(&vcb, va + 2 * w->size, va, va + w->size,
			     w->size / 4);
		qgpu_vcb_checksum(&vcb, va + 2 * w->size, w->size,
				  va + 3 * w->size);
		ret = qgpu_vcb_submit_wait(dev.fd, ctx, &vcb, 60 * SEC);
	}
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	qgpu_query_mmu(dev.fd, &m1);
	csum = r[0];
	if (ret) {
		struct drm_qgpu_context_status cs;

		printf("   virtual: %s\n", strerror(-ret));
		if (!qgpu_query_context(dev.fd, ctx, &cs) && cs.state)
			printf("   virtual: context lost: fault %s at %#llx\n",
			       qgpu_fault_name(cs.fault_reason),
			       (unsigned long long)cs.fault_addr);
		bad = 1;
	} else {
		bad = wl_check(w, "virtual", h[2], csum);
	}
	printf("   virtual counters: %.1f MiB paged into VRAM, %.1f MiB out, %llu paging buffers\n",
	       (s1.bytes_to_vram - s0.bytes_to_vram) / MiB,
	       (s1.bytes_from_vram - s0.bytes_from_vram) / MiB,
	       (unsigned long long)(s1.paging_buffers - s0.paging_buffers));
	mmu_delta(&m0, &m1);
	qgpu_vcb_fini(&vcb);
	qgpu_ctx_destroy(dev.fd, ctx);
	if (va)
		qgpu_vm_free(dev.fd, va, 3 * w->size + SZ_64K);
	for (i = 0; i < 3; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_unmap(dev.fd, res, r, 4096);
	qgpu_bo_destroy(dev.fd, res);
	return bad;
}

static int two_models(void)
{
	uint64_t vram = qgpu_vram_usable(&dev), k;
	struct drm_qgpu_mmu_info m;
	struct workload w = { 0 };
	int bad = 0, ret;

	printf("\n== one workload, physical and virtual addressing side by side\n");
	if (!qgpu_dev_has_mmu(&dev)) {
		printf("   the device has no GPU MMU (QGPU_INFO_CAP_MMU clear): skipped\n");
		return 0;
	}
	ret = qgpu_query_mmu(dev.fd, &m);
	if (ret) {
		printf("   the driver does not offer GPU virtual addressing (%s): skipped\n",
		       strerror(-ret));
		return 0;
	}
	w.size = vram / 8 < 4 * (1u << 20) ? vram / 8 : 4 * (1u << 20);
	w.size &= ~(SZ_64K - 1);
	if (w.size < SZ_64K)
		w.size = SZ_64K;
	w.seg_mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) | QGPU_SEGBIT(QGPU_SEG_APERTURE);
	w.a = malloc(w.size);
	w.b = malloc(w.size);
	w.c = malloc(w.size);
	if (!w.a || !w.b || !w.c)
		return 1;
	qgpu_pattern_fill(w.a, w.size, 0xa11ce);
	qgpu_pattern_fill(w.b, w.size, 0xb0b);
	for (k = 0; k < w.size / 4; k++)
		w.c[k] = w.a[k] + w.b[k];
	w.csum = qgpu_csum(w.c, w.size / 4);
	printf("   C = A + B over %.1f MiB of 32-bit words, then checksum(C); MMU: %u-bit VA, %u levels\n",
	       w.size / MiB, m.va_bits, m.levels);
	bad |= run_physical(&w);
	bad |= run_virtual(&w);
	free(w.a);
	free(w.b);
	free(w.c);
	printf("   %s\n", bad ? "FAILED" : "OK: both models computed the host's bytes");
	return bad;
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
	fail |= two_models();
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
