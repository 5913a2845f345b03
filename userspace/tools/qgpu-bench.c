// SPDX-License-Identifier: MIT
/*
 * qgpu-bench: numbers, never pass/fail on time.
 *
 *   latency   NOP DMA buffer submit -> out-syncobj signalled, median and
 *             p99 over N runs (-n, default 1000), and interleaved with it
 *             in the same run its baselines: a bare QUERY ioctl round
 *             trip; the device's floor, DRM_IOCTL_QGPU_PING (a doorbell
 *             the device answers at once with an interrupt that wakes the
 *             caller: the cheapest round trip the hardware allows); and,
 *             when a virtio-gpu render node is present (boot with both
 *             devices, modprobe virtio_gpu), virtio-gpu's fenced host
 *             round trip without virgl: RESOURCE_CREATE of a 16x16 2D
 *             resource + VIRTGPU_WAIT. floor_ratio = NOP median / PING
 *             median, virtio_gpu_ratio = NOP median / virtio-gpu median,
 *             p99_ratio = NOP p99 / NOP median.
 *   paging    paging-engine bandwidth, GEM_RESIDE of one allocation of
 *             -s PAGING_SIZE (default 64 MiB; less, with a note, when
 *             visible VRAM is smaller), each move timed from the ioctl to
 *             its completion (a poll of the allocation's dma-buf), after
 *             one untimed warm-up (the device commits VRAM's host memory
 *             on first touch); medians of -r PAGING_RUNS (default 5):
 *             TRANSFER system -> VRAM (to_vram) and back (from_vram), the
 *             system side through page lists; TRANSFER between visible
 *             and non-visible VRAM (vram_to_vram, both directions, when
 *             non-visible VRAM has room); FILL, the zero fill of a new
 *             allocation's first placement in VRAM (fill). Each figure
 *             beside a guest memcpy of the same size (at most 64 MiB;
 *             under TCG it is slow, so that ratio flatters the device)
 *             and, with -H, beside the host's memcpy of the same size
 *             measured by the caller in the same run (host_memcpy_ratio;
 *             scripts/bench.py gives it). The content is checked after
 *             the moves, every word.
 *   cpu       CPU write bandwidth through a BAR2 (visible VRAM) mapping and
 *             through the host aperture (non-visible VRAM), against a
 *             memcpy in guest RAM (ratios).
 *   split     one fixed workload (working set W, default 32 MiB): bytes
 *             paged and splits. Run it on devices whose VRAM is 100%, 50%
 *             and 25% of W to see split efficiency: split_efficiency =
 *             bytes paged (into VRAM, zero fills included, and out of it)
 *             / the minimum (every referenced byte paged in once, every
 *             byte that must leave VRAM paged out once: the allocations
 *             beyond those that fit whole in the VRAM segments' free room
 *             at the start).
 *   vm        GPU virtual addressing (GpuMmu), on a device with an MMU;
 *             its three parts can also be named on their own:
 *   vm-resident
 *             MakeResident latency of 1, 64 and 4096 allocations of 4 KiB
 *             (fewer, with a note, when VRAM cannot hold them and their
 *             page tables): created in system memory, mapped one after
 *             the other, placed once and evicted; then 5 times
 *             MakeResident of all of them timed from the ioctl to the
 *             paging fence signalled, each followed by an Evict. Medians:
 *             total, per allocation, the ioctl alone, the Evict; paging
 *             buffers, UPDATE_PT commands and TLB flushes per allocation;
 *             and the scaling figure per-allocation(N)/per-allocation(1).
 *   vm-pagetables
 *             page-table memory per GiB mapped: one allocation mapped again
 *             and again into one GiB of a fresh address space (mapping
 *             takes no memory but page tables), the file's page_table_bytes
 *             before and after; with 4 KiB pages (the allocation in system
 *             memory) and with 64 KiB pages (resident, mapped from a
 *             64 KiB boundary of VRAM), each against the raw size of its
 *             entries (8 bytes a page), and the PTEs written.
 *   split-virtual
 *             the split workload in the virtual model, against the
 *             physical run of the same invocation (split runs first if it
 *             was not asked for): the same 16 allocations (VRAM only) and
 *             a result allocation, mapped into a fresh address space; per
 *             step i a MakeResident of A[i], A[i-1] and the result, a wait
 *             for its paging fence, then one virtual DMA buffer (VFILL,
 *             VXOR, VCHECKSUM), not waited for. The memory manager evicts
 *             older allocations when VRAM is short. time_ms, bytes paged,
 *             evictions, and the virtual/physical ratios; the checksums
 *             are checked against the host and the physical run.
 *   submit-scale
 *             the submit ioctl's cost per patch-location entry: DMA buffers
 *             of 1024, 4096 and 16384 BINDs (each a patch entry; slots
 *             in turn, over up to 1024 resident allocations of 4 KiB)
 *             and a FENCE; medians of -r PAGING_RUNS (default 5) of the
 *             ioctl alone (the walk, patching, pinning, queueing) and of
 *             submit to signal, per entry; scale_ratio = per-entry cost
 *             at 16384 / at 1024 (flat is 1). Then the same with a split
 *             point every 4 BINDs (mode=split4: 4096 split points at
 *             16384 entries, the most the UAPI allows, where every entry's
 *             walk asks what a split there would release), and mode=tail:
 *             a quarter of the BINDs over the allocations, one split
 *             point, the rest all one allocation (every later entry finds
 *             that a split would release allocations, nothing to evict).
 *   vram-memory
 *             VRAM given back to the host (docs/hw-spec.md section 19):
 *             -s SIZE (the paging size, default 64 MiB) of allocations of
 *             64 MiB in VRAM only, made resident (zero-filled) and
 *             written by the GPU (a FILL), held 3 s, destroyed; then the
 *             wait until the driver has discarded all of them. Reports the
 *             device's committed VRAM (vram_committed) before, while held
 *             and after, and the bytes discarded; scripts/bench.py
 *             samples the QEMU process's resident memory meanwhile (idle,
 *             peak, after) and reports rss_ratio = after / idle.
 *   stream    the streaming update of "Allocation Usage Tracking": each
 *             frame (-f FRAMES, default 200) the CPU locks a 512 KiB
 *             resource (libqgpu's usage tracking), writes the frame's data
 *             (a pattern of the frame number), unlocks, and submits GPU
 *             work that reads it: its checksum into the frame's slot of a
 *             result buffer, then fills and copies over an 8 MiB scratch
 *             allocation (about as long as the CPU's part), between two
 *             device timestamps. The same frames run twice: with DISCARD
 *             locks (a renaming ring of 4 allocations: the CPU writes the
 *             next frame while the GPU reads the last) and with
 *             synchronising locks (each waits until the GPU is done with
 *             the buffer). Per mode: frames per second, lock waits and the
 *             time in the lock, renames, allocations created, CPU bytes
 *             written, bytes paged, the CPU's time per frame outside the
 *             lock and the GPU's (median of the frames' DMA buffers); and
 *             fps(discard)/fps(sync). Every frame's checksum of both modes
 *             is checked against the host's.
 *   progress  how much guest CPU work goes on while the device pages:
 *             a child process runs a fixed arithmetic loop for 2 s and
 *             counts its iterations, once with the device idle and once
 *             while the parent moves an allocation of -s PAGING_SIZE
 *             (default 256 MiB here) into VRAM and back again and again
 *             (TRANSFER through page lists, as "paging" does); -r rounds
 *             (default 5) of both, alternating. With more than one CPU the
 *             child runs on the last one and the parent on the first.
 *             Medians of idle_iters_s and busy_iters_s, and
 *             progress_ratio = busy / idle (ratios within a round, their
 *             median); the bytes moved while the child ran (busy_mib_s).
 *             Not part of "all" (it takes about 25 s).
 *
 * usage: qgpu-bench [-d NODE] [-f FRAMES] [-H HOST_MEMCPY_MIB_S] [-n RUNS]
 *                   [-r PAGING_RUNS] [-s PAGING_SIZE] [-w WORKING_SET]
 *                   [latency|paging|cpu|split|vm|vm-resident|vm-pagetables|
 *                    split-virtual|stream|progress|all]...
 * Output lines start with "bench:" and are key=value, for scripts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/virtio_gpu.h>
#include <virtgpu_drm.h>
#include <xf86drm.h>

#include "libqgpu.h"

#define MiB (1024.0 * 1024.0)

static struct qgpu_dev dev;
static int runs = 1000;
static uint64_t paging_size = 64ull << 20;
static bool paging_size_set;
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

/* The first render node whose driver is virtio_gpu, opened, or -1 */
static int virtio_gpu_open(void)
{
	char path[64];

	if (qgpu_find_driver_node("virtio_gpu", QGPU_NODE_RENDER, 0, path,
				  sizeof(path)))
		return -1;
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * virtio-gpu's fenced host round trip without virgl: RESOURCE_CREATE of a
 * 16x16 2D resource (the kernel fences the command) and VIRTGPU_WAIT on
 * it. The handle is closed after the clock stops.
 */
static int virtio_gpu_round_trip(int fd, int64_t *ns)
{
	struct drm_virtgpu_resource_create rc = {
		.target = 2,		/* PIPE_TEXTURE_2D: the only 2D target */
		.format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
		.width = 16,
		.height = 16,
		.depth = 1,
		.array_size = 1,
		.size = 16 * 16 * 4,
		.stride = 16 * 4,
	};
	struct drm_virtgpu_3d_wait w = { 0 };
	struct drm_gem_close cl = { 0 };
	int64_t t0 = qgpu_now_ns();
	int ret;

	if (drmIoctl(fd, DRM_IOCTL_VIRTGPU_RESOURCE_CREATE, &rc))
		return -errno;
	w.handle = rc.bo_handle;
	ret = drmIoctl(fd, DRM_IOCTL_VIRTGPU_WAIT, &w) ? -errno : 0;
	*ns = qgpu_now_ns() - t0;
	cl.handle = rc.bo_handle;
	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &cl);
	return ret;
}

enum { LAT_QUERY, LAT_PING, LAT_NOP, LAT_VIRTIO, LAT_KINDS };

struct lat_state {
	uint32_t ctx;
	struct drm_qgpu_sync_entry out;
	struct qgpu_cb cb;
	int virtio_fd;
	bool have[LAT_KINDS];
	int64_t *ns[LAT_KINDS];
};

/* One sample of @kind; 0 or a negative errno */
static int lat_sample(struct lat_state *st, int kind, int64_t *ns)
{
	struct drm_qgpu_device_info info;
	int64_t t0 = qgpu_now_ns();
	int ret;

	switch (kind) {
	case LAT_QUERY:
		ret = qgpu_query_device(dev.fd, &info);
		break;
	case LAT_PING:
		ret = qgpu_ping(dev.fd, NULL);
		break;
	case LAT_NOP:
		ret = qgpu_submit(dev.fd, st->ctx, &st->cb, NULL, 0, &st->out,
				  1, NULL);
		if (!ret)
			ret = qgpu_syncobj_wait(dev.fd, st->out.handle, 0,
						5000000000ll);
		break;
	default:
		return virtio_gpu_round_trip(st->virtio_fd, ns);
	}
	*ns = qgpu_now_ns() - t0;
	return ret;
}

static const char *const lat_names[LAT_KINDS] = {
	"query_ioctl", "ping", "nop_submit_signal", "virtio_gpu",
};

/*
 * Four round trips, interleaved (each run takes them in a rotating order,
 * so that none always follows the same one): a bare QUERY ioctl, the
 * device's floor (PING: a doorbell answered at once by an interrupt that
 * wakes the caller), a NOP DMA buffer submitted and its out-syncobj
 * waited for, and virtio-gpu's fenced round trip when a virtio-gpu render
 * node is present.
 */
static int bench_latency(void)
{
	struct lat_state st = { .virtio_fd = -1 };
	double med[LAT_KINDS] = { 0 }, p99[LAT_KINDS] = { 0 };
	const char *err = NULL;
	int i, k, n, ret;

	ret = qgpu_ctx_create(dev.fd, &st.ctx);
	if (!ret)
		ret = qgpu_syncobj_create(dev.fd, &st.out.handle);
	if (!ret)
		ret = qgpu_cb_init(&st.cb, dev.info.max_slots);
	if (!ret)
		ret = qgpu_cb_nop(&st.cb, 1);
	if (ret) {
		printf("bench: latency error=\"%s\"\n", strerror(-ret));
		return 1;
	}
	st.have[LAT_QUERY] = st.have[LAT_NOP] = true;
	st.have[LAT_PING] = dev.info.caps & QGPU_INFO_CAP_PING;
	st.virtio_fd = virtio_gpu_open();
	st.have[LAT_VIRTIO] = st.virtio_fd >= 0;
	for (k = 0; k < LAT_KINDS; k++) {
		st.ns[k] = calloc(runs, sizeof(int64_t));
		if (!st.ns[k])
			err = "out of memory";
	}
	for (i = 0; i < runs && !err; i++) {
		for (n = 0; n < LAT_KINDS && !err; n++) {
			k = (i + n) % LAT_KINDS;
			if (!st.have[k])
				continue;
			ret = lat_sample(&st, k, &st.ns[k][i]);
			if (ret) {
				printf("bench: latency error=\"run %d, %s: %s\"\n",
				       i, lat_names[k], strerror(-ret));
				err = "";
			}
		}
	}
	for (k = 0; k < LAT_KINDS && !err; k++)
		if (st.have[k])
			percentiles(st.ns[k], runs, &med[k], &p99[k]);
	if (!err) {
		printf("bench: latency runs=%d", runs);
		for (k = 0; k < LAT_KINDS; k++)
			if (st.have[k])
				printf(" %s_median_us=%.1f %s_p99_us=%.1f",
				       lat_names[k], med[k], lat_names[k], p99[k]);
		printf(" ratio_median=%.1f", med[LAT_QUERY] > 0 ?
		       med[LAT_NOP] / med[LAT_QUERY] : 0);
		if (st.have[LAT_PING] && med[LAT_PING] > 0)
			printf(" floor_ratio=%.2f", med[LAT_NOP] / med[LAT_PING]);
		else
			printf(" floor=\"the device has no PING\"");
		if (st.have[LAT_VIRTIO] && med[LAT_VIRTIO] > 0)
			printf(" virtio_gpu_ratio=%.2f",
			       med[LAT_NOP] / med[LAT_VIRTIO]);
		else
			printf(" virtio_gpu=\"no virtio-gpu render node\"");
		printf(" p99_ratio=%.2f\n", med[LAT_NOP] > 0 ?
		       p99[LAT_NOP] / med[LAT_NOP] : 0);
	} else if (*err) {
		printf("bench: latency error=\"%s\"\n", err);
	}
	for (k = 0; k < LAT_KINDS; k++)
		free(st.ns[k]);
	if (st.virtio_fd >= 0)
		close(st.virtio_fd);
	qgpu_cb_fini(&st.cb);
	qgpu_syncobj_destroy(dev.fd, st.out.handle);
	qgpu_ctx_destroy(dev.fd, st.ctx);
	return err ? 1 : 0;
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

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------------------ */
/* Paging bandwidth (benchmark "paging")                                     */

#define PAGING_MAX_RUNS	64
#define PAGING_SEED	77

static int paging_runs = 5;
/* -H: the host's memcpy bandwidth for the paging size (MiB/s), 0: unknown */
static double host_memcpy;

/* Guest memcpy at most this big: 1 GiB twice over would not fit a guest */
#define PAGING_MEMCPY_MAX	(64ull << 20)

/*
 * Wait for every move of an allocation queued so far: poll its dma-buf
 * for reading waits for the kernel's (move) fences and the writers' in its
 * reservation object; the benchmark has no writers.
 */
static int move_wait(int dmabuf)
{
	struct pollfd p = { .fd = dmabuf, .events = POLLIN };
	int ret;

	do {
		ret = poll(&p, 1, 120 * 1000);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	return ret ? 0 : -ETIMEDOUT;
}

/* One GEM_RESIDE move, timed from the ioctl to its completion (ns) */
static int timed_move(uint32_t h, int dmabuf, uint32_t op, uint32_t seg,
		      int64_t *ns)
{
	int64_t t0 = qgpu_now_ns();
	int ret = qgpu_bo_reside(dev.fd, h, op, seg, NULL);

	if (!ret)
		ret = move_wait(dmabuf);
	*ns = qgpu_now_ns() - t0;
	return ret;
}

static double mib_s(uint64_t size, int64_t ns)
{
	return ns > 0 ? size / MiB / (ns / 1e9) : 0;
}

/*
 * One paging figure: the median of @n moves (MiB/s), beside the guest's
 * memcpy and, when the caller gave it (-H), the host's memcpy of the same
 * size measured in the same run.
 */
static double paging_report(const char *op, uint64_t size, double *v, int n,
			    double guest_memcpy)
{
	double lo, hi, med;

	if (n <= 0)
		return 0;
	med = median(v, n);
	lo = v[0];
	hi = v[n - 1];
	printf("bench: paging op=%s size_mib=%.0f runs=%d mib_s=%.0f min_mib_s=%.0f max_mib_s=%.0f guest_memcpy_mib_s=%.0f guest_memcpy_ratio=%.3f",
	       op, size / MiB, n, med, lo, hi, guest_memcpy,
	       guest_memcpy > 0 ? med / guest_memcpy : 0);
	if (host_memcpy > 0)
		printf(" host_memcpy_mib_s=%.0f host_memcpy_ratio=%.3f",
		       host_memcpy, med / host_memcpy);
	printf("\n");
	return med;
}

/*
 * A CPU-accessible allocation of @size in @mask, written with the pattern
 * while it is in system memory, exported for move_wait()
 */
static int paging_alloc(uint64_t size, uint32_t mask, uint32_t pref,
			bool content, uint32_t *h, int *dmabuf)
{
	void *map;
	int ret;

	ret = qgpu_bo_create(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS,
			     QGPU_PREF(pref, 0, 0), h);
	if (ret)
		return ret;
	if (content) {
		ret = qgpu_bo_map(dev.fd, *h, size, &map);
		if (!ret) {
			/* real content: a pristine allocation is zero-filled */
			qgpu_pattern_fill(map, size, PAGING_SEED);
			qgpu_bo_unmap(dev.fd, *h, map, size);
		}
	}
	if (!ret && drmPrimeHandleToFD(dev.fd, *h, DRM_CLOEXEC, dmabuf))
		ret = -errno;
	if (ret)
		qgpu_bo_destroy(dev.fd, *h);
	return ret;
}

/* The pattern survived every move: check all of it, where it is now */
static int paging_check(uint32_t h, uint64_t size)
{
	int64_t bad;
	void *map;
	int ret = qgpu_bo_map_flags(dev.fd, h, size, QGPU_BO_MAP_READ, &map);

	if (ret)
		return ret;
	bad = qgpu_pattern_check(map, size, PAGING_SEED);
	qgpu_bo_unmap_flags(dev.fd, h, map, size, QGPU_BO_MAP_READ);
	if (bad >= 0) {
		printf("bench: paging note=\"content wrong at word %lld\"\n",
		       (long long)bad);
		return -EIO;
	}
	return 0;
}

/*
 * TRANSFER system -> VRAM and back (page lists on the system side): a
 * warm-up round trip (the device commits VRAM's host memory on first
 * touch), then @paging_runs timed ones.
 */
static int paging_sys(uint64_t size, double *in, double *out)
{
	int64_t ns;
	uint32_t h;
	int i, fd, ret;

	ret = paging_alloc(size, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_SEG_VISIBLE,
			   true, &h, &fd);
	if (ret)
		return ret;
	for (i = -1; i < paging_runs && !ret; i++) {
		ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT,
				 QGPU_SEG_VISIBLE, &ns);
		if (i >= 0)
			in[i] = mib_s(size, ns);
		if (!ret)
			ret = timed_move(h, fd, QGPU_RESIDE_EVICT_SYSTEM, 0,
					 &ns);
		if (i >= 0)
			out[i] = mib_s(size, ns);
	}
	if (!ret)
		ret = paging_check(h, size);
	close(fd);
	qgpu_bo_destroy(dev.fd, h);
	return ret;
}

/* TRANSFER visible VRAM <-> non-visible VRAM: 2 * @paging_runs moves */
static int paging_vram(uint64_t size, double *v)
{
	int64_t ns;
	uint32_t h;
	int i, fd, ret;

	/* CPU access to non-visible VRAM needs the aperture segment too */
	ret = paging_alloc(size, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_LOCAL) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_SEG_VISIBLE,
			   true, &h, &fd);
	if (ret)
		return ret;
	/* warm-up: into VRAM, across and back */
	ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE,
			 &ns);
	for (i = -1; i < paging_runs && !ret; i++) {
		ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT,
				 QGPU_SEG_LOCAL, &ns);
		if (i >= 0)
			v[2 * i] = mib_s(size, ns);
		if (!ret)
			ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT,
					 QGPU_SEG_VISIBLE, &ns);
		if (i >= 0)
			v[2 * i + 1] = mib_s(size, ns);
	}
	if (!ret)
		ret = paging_check(h, size);
	close(fd);
	qgpu_bo_destroy(dev.fd, h);
	return ret;
}

/* FILL: a new allocation's first placement in VRAM zero-fills it */
static int paging_fill(uint64_t size, double *v)
{
	volatile uint32_t *probe;
	int64_t ns;
	uint32_t h;
	int i, fd, ret = 0;

	for (i = -1; i < paging_runs && !ret; i++) {
		ret = paging_alloc(size, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
				   QGPU_SEG_VISIBLE, false, &h, &fd);
		if (ret)
			break;
		ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT,
				 QGPU_SEG_VISIBLE, &ns);
		if (i >= 0)
			v[i] = mib_s(size, ns);
		/* read back after the fill: its last page reads zero */
		if (!ret)
			ret = qgpu_bo_map_flags(dev.fd, h, size,
						QGPU_BO_MAP_READ,
						(void **)&probe);
		if (!ret) {
			if (probe[0] || probe[size / 4 - 1])
				ret = -EIO;
			qgpu_bo_unmap_flags(dev.fd, h, (void *)probe, size,
					    QGPU_BO_MAP_READ);
		}
		close(fd);
		qgpu_bo_destroy(dev.fd, h);
	}
	return ret;
}

static int bench_paging(void)
{
	const struct drm_qgpu_segment *vis = qgpu_dev_segment(&dev,
							       QGPU_SEG_VISIBLE);
	const struct drm_qgpu_segment *loc = qgpu_dev_segment(&dev,
							       QGPU_SEG_LOCAL);
	double in[PAGING_MAX_RUNS], out[PAGING_MAX_RUNS];
	double vv[2 * PAGING_MAX_RUNS], fill[PAGING_MAX_RUNS];
	double ref, in_bw, out_bw;
	uint64_t size = paging_size;
	bool vram_room;
	int ret;

	if (!vis)
		return 1;
	if (size > vis->size - vis->reserved_size) {
		size = (vis->size - vis->reserved_size) & ~((1ull << 20) - 1);
		printf("bench: paging note=\"visible VRAM holds only %.0f MiB; using that (want >= 64 MiB: give the device more VRAM)\"\n",
		       size / MiB);
	}
	ref = memcpy_bw(size < PAGING_MEMCPY_MAX ? size : PAGING_MEMCPY_MAX);
	/*
	 * VRAM <-> VRAM first: its allocation's first move (system -> VRAM)
	 * then comes before the timed system <-> VRAM moves, so that the
	 * last moves of each kind are the timed ones (scripts/bench.py
	 * finds them so in QEMU's trace).
	 */
	vram_room = loc && loc->size - loc->reserved_size >= size;
	if (vram_room) {
		ret = paging_vram(size, vv);
		if (ret) {
			printf("bench: paging error=\"VRAM<->VRAM: %s\"\n",
			       strerror(-ret));
			return 1;
		}
	}
	ret = paging_sys(size, in, out);
	if (ret) {
		printf("bench: paging error=\"system<->VRAM: %s\"\n",
		       strerror(-ret));
		return 1;
	}
	in_bw = paging_report("to_vram", size, in, paging_runs, ref);
	out_bw = paging_report("from_vram", size, out, paging_runs, ref);
	/* the summary line of earlier versions (medians now) */
	printf("bench: paging size_mib=%.0f to_vram_mib_s=%.0f from_vram_mib_s=%.0f guest_memcpy_mib_s=%.0f to_vram_ratio=%.3f from_vram_ratio=%.3f\n",
	       size / MiB, in_bw, out_bw, ref, ref ? in_bw / ref : 0,
	       ref ? out_bw / ref : 0);
	if (vram_room)
		paging_report("vram_to_vram", size, vv, 2 * paging_runs, ref);
	else
		printf("bench: paging op=vram_to_vram size_mib=%.0f note=\"no room: non-visible VRAM holds %.0f MiB\"\n",
		       size / MiB, loc ? (loc->size - loc->reserved_size) / MiB
				       : 0);
	ret = paging_fill(size, fill);
	if (ret) {
		printf("bench: paging error=\"fill: %s\"\n", strerror(-ret));
		return 1;
	}
	paging_report("fill", size, fill, paging_runs, ref);
	return 0;
}

/* Guest CPU progress during paging (benchmark "progress")                   */

#define PROGRESS_SIZE		(256ull << 20)
#define PROGRESS_NS		(2000000000ll)
#define PROGRESS_CHUNK		100000	/* loop iterations between clock reads */

struct progress_result {
	double iters_s;
	int64_t ns;
};

/* The fixed arithmetic loop: a 64-bit LCG, PROGRESS_CHUNK steps */
static uint64_t progress_chunk(uint64_t x)
{
	int i;

	for (i = 0; i < PROGRESS_CHUNK; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void progress_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Fork the child that loops for PROGRESS_NS and writes its result to the
 * pipe it returns (read end); -errno on failure
 */
static int progress_start(pid_t *pid)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int p[2];

	if (pipe(p))
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (*pid == 0) {
		struct progress_result r;
		volatile uint64_t sink;
		uint64_t x = 1, chunks = 0;
		int64_t t0, t;

		close(p[0]);
		if (cpus > 1)
			progress_pin(cpus - 1);
		t0 = qgpu_now_ns();
		do {
			x = progress_chunk(x);
			chunks++;
			t = qgpu_now_ns() - t0;
		} while (t < PROGRESS_NS);
		sink = x;
		(void)sink;
		r.ns = t;
		r.iters_s = (double)chunks * PROGRESS_CHUNK / (t / 1e9);
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	return p[0];
}

static int progress_finish(pid_t pid, int fd, struct progress_result *r)
{
	ssize_t n;
	int st;

	do {
		n = read(fd, r, sizeof(*r));
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) ||
	    n != sizeof(*r))
		return -EIO;
	return 0;
}

static bool progress_done(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/*
 * One round: the loop with the device idle, then with the allocation @h
 * moving system -> VRAM -> system until the loop ends
 */
static int progress_round(uint32_t h, int dmabuf, uint64_t size,
			  struct progress_result *idle,
			  struct progress_result *busy, double *mib_s_busy)
{
	int64_t ns, t0, moved = 0;
	int fd, ret;
	pid_t pid;

	fd = progress_start(&pid);
	if (fd < 0)
		return fd;
	ret = progress_finish(pid, fd, idle);
	if (ret)
		return ret;
	fd = progress_start(&pid);
	if (fd < 0)
		return fd;
	t0 = qgpu_now_ns();
	while (!ret && !progress_done(fd)) {
		ret = timed_move(h, dmabuf, QGPU_RESIDE_MAKE_RESIDENT,
				 QGPU_SEG_VISIBLE, &ns);
		if (!ret)
			ret = timed_move(h, dmabuf, QGPU_RESIDE_EVICT_SYSTEM, 0,
					 &ns);
		if (!ret)
			moved += 2 * size;
	}
	ns = qgpu_now_ns() - t0;
	if (ret) {
		kill(pid, SIGKILL);
		progress_finish(pid, fd, busy);
		return ret;
	}
	ret = progress_finish(pid, fd, busy);
	*mib_s_busy = mib_s(moved, ns);
	return ret;
}

static int bench_progress(void)
{
	const struct drm_qgpu_segment *vis = qgpu_dev_segment(&dev,
							       QGPU_SEG_VISIBLE);
	double idle[PAGING_MAX_RUNS], busy[PAGING_MAX_RUNS];
	double ratio[PAGING_MAX_RUNS], bw[PAGING_MAX_RUNS];
	uint64_t size = paging_size_set ? paging_size : PROGRESS_SIZE;
	struct progress_result ri, rb;
	int64_t ns;
	uint32_t h;
	int i, fd, ret;

	if (!vis || size > vis->size - vis->reserved_size) {
		printf("bench: progress error=\"visible VRAM cannot hold %.0f MiB\"\n",
		       size / MiB);
		return 1;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		progress_pin(0);
	ret = paging_alloc(size, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			   QGPU_SEGBIT(QGPU_SEG_APERTURE), QGPU_SEG_VISIBLE,
			   true, &h, &fd);
	if (ret)
		goto out;
	/* warm-up: the device commits VRAM's host memory on first touch */
	ret = timed_move(h, fd, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE,
			 &ns);
	if (!ret)
		ret = timed_move(h, fd, QGPU_RESIDE_EVICT_SYSTEM, 0, &ns);
	for (i = 0; i < paging_runs && !ret; i++) {
		ret = progress_round(h, fd, size, &ri, &rb, &bw[i]);
		idle[i] = ri.iters_s;
		busy[i] = rb.iters_s;
		ratio[i] = ri.iters_s > 0 ? rb.iters_s / ri.iters_s : 0;
		if (!ret)
			printf("bench: progress round=%d idle_iters_s=%.0f busy_iters_s=%.0f ratio=%.3f busy_mib_s=%.0f\n",
			       i, ri.iters_s, rb.iters_s, ratio[i], bw[i]);
	}
	if (!ret)
		ret = paging_check(h, size);
	close(fd);
	qgpu_bo_destroy(dev.fd, h);
out:
	if (ret) {
		printf("bench: progress error=\"%s\"\n", strerror(-ret));
		return 1;
	}
	printf("bench: progress size_mib=%.0f rounds=%d cpus=%ld idle_iters_s=%.0f busy_iters_s=%.0f busy_mib_s=%.0f progress_ratio=%.3f\n",
	       size / MiB, paging_runs, sysconf(_SC_NPROCESSORS_ONLN),
	       median(idle, paging_runs), median(busy, paging_runs),
	       median(bw, paging_runs), median(ratio, paging_runs));
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

/* The VRAM segments the device has, as a supported segment set */
static uint32_t vram_mask(void)
{
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE);

	if (qgpu_dev_segment(&dev, QGPU_SEG_LOCAL))
		mask |= QGPU_SEGBIT(QGPU_SEG_LOCAL);
	return mask;
}

static uint64_t split_chunk(void)
{
	return (working_set / 16) & ~4095ull;
}

/* What step @i of the split workload checksums: A[i] is @chunk bytes of
 * one repeated word, the xor of the fill patterns of steps 0..i. */
static uint32_t split_want(int i, uint64_t chunk)
{
	uint32_t c = 0, want = QGPU_CSUM_INIT;
	uint64_t k;
	int j;

	for (j = 0; j <= i; j++)
		c ^= 0x01000193u * (j + 3);
	for (k = 0; k < chunk / 4; k++)
		want = (want ^ c) * QGPU_CSUM_PRIME;
	return want;
}

/*
 * One run of the split workload in one addressing model, for comparing
 * the two (bench_split_virtual()).
 */
struct split_result {
	bool done;
	int64_t ns;
	uint64_t bytes_paged, evictions;
	uint32_t csum[16];
};

static struct split_result split_phys;

static uint64_t paged_bytes(const struct drm_qgpu_stats *a,
			    const struct drm_qgpu_stats *b)
{
	return b->bytes_to_vram - a->bytes_to_vram +
	       b->bytes_from_vram - a->bytes_from_vram +
	       b->bytes_vram_to_vram - a->bytes_vram_to_vram;
}

/*
 * The least the split workload can page: every referenced byte paged in
 * once (the 16 allocations' first placement, a zero fill) and every byte
 * that must leave VRAM paged out once. Allocations move whole and each
 * lies in one segment, so VRAM keeps at most the allocations that fit in
 * each VRAM segment's free room at the start (@seg: the segments' usage
 * then); the rest must leave.
 */
static void split_minimum(const struct drm_qgpu_segment_stats *seg,
			  unsigned int nseg, uint64_t chunk, uint64_t *min_in,
			  uint64_t *min_out)
{
	uint64_t fit = 0;
	unsigned int i;

	for (i = 0; i < nseg; i++)
		if ((seg[i].id == QGPU_SEG_VISIBLE || seg[i].id == QGPU_SEG_LOCAL) &&
		    seg[i].size > seg[i].used)
			fit += (seg[i].size - seg[i].used) / chunk;
	*min_in = 16 * chunk;
	*min_out = fit < 16 ? (16 - fit) * chunk : 0;
}

/*
 * The fixed split workload: 16 allocations of W/16 in VRAM only, one DMA
 * buffer: A[i] = fill(p_i) ^ A[i-1], checksum into a result buffer.
 * split_efficiency: the bytes paged into VRAM (transfers and zero fills)
 * and out of it, over split_minimum().
 */
static int bench_split(void)
{
	uint64_t chunk = split_chunk();
	uint32_t mask = vram_mask(), h[16], res, ctx;
	uint64_t vram = dev.info.vram_size, min_in, min_out, all;
	struct drm_qgpu_segment_stats seg[8];
	struct drm_qgpu_stats s0, s1;
	uint32_t portions = 0, *out;
	unsigned int nseg = 0;
	struct qgpu_cb cb;
	int64_t t0, dt;
	int i, ret, bad = 0;

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
	qgpu_query_stats(dev.fd, &s0, seg, 8, &nseg);
	split_minimum(seg, nseg < 8 ? nseg : 8, chunk, &min_in, &min_out);
	t0 = qgpu_now_ns();
	ret = qgpu_submit_wait(dev.fd, ctx, &cb, 120ll * 1000000000,
			       &portions);
	dt = qgpu_now_ns() - t0;
	qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	if (ret) {
		printf("bench: split error=\"submit: %s\"\n", strerror(-ret));
		return 1;
	}
	all = paged_bytes(&s0, &s1) + s1.bytes_filled - s0.bytes_filled;
	if (!qgpu_bo_map(dev.fd, res, 4096, (void **)&out)) {
		for (i = 0; i < 16; i++) {
			split_phys.csum[i] = out[i];
			bad += out[i] != split_want(i, chunk);
		}
		qgpu_bo_unmap(dev.fd, res, out, 4096);
	} else {
		bad = 16;
	}
	split_phys.done = true;
	split_phys.ns = dt;
	split_phys.bytes_paged = paged_bytes(&s0, &s1);
	split_phys.evictions = s1.evictions - s0.evictions;
	printf("bench: split working_set_mib=%.0f vram_mib=%.0f vram_pct=%.0f portions=%u splits=%u bytes_paged=%llu bytes_to_vram=%llu bytes_from_vram=%llu bytes_vram_to_vram=%llu bytes_filled=%llu evictions=%llu paging_buffers=%llu time_ms=%.1f min_bytes_in=%llu min_bytes_out=%llu split_efficiency=%.3f results=%s\n",
	       16 * chunk / MiB, vram / MiB, 100.0 * vram / (16 * chunk),
	       portions, portions ? portions - 1 : 0,
	       (unsigned long long)paged_bytes(&s0, &s1),
	       (unsigned long long)(s1.bytes_to_vram - s0.bytes_to_vram),
	       (unsigned long long)(s1.bytes_from_vram - s0.bytes_from_vram),
	       (unsigned long long)(s1.bytes_vram_to_vram - s0.bytes_vram_to_vram),
	       (unsigned long long)(s1.bytes_filled - s0.bytes_filled),
	       (unsigned long long)(s1.evictions - s0.evictions),
	       (unsigned long long)(s1.paging_buffers - s0.paging_buffers),
	       dt / 1e6, (unsigned long long)min_in,
	       (unsigned long long)min_out, (double)all / (min_in + min_out),
	       bad ? "WRONG" : "correct");
	qgpu_cb_fini(&cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	for (i = 0; i < 16; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_bo_destroy(dev.fd, res);
	return bad ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* GPU virtual addressing (benchmark "vm")                                   */

#define SZ_4K		0x1000ull
#define SZ_64K		0x10000ull
#define SEC		1000000000ll

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* A second file on the same device: a process with an address space of
 * its own, so that one measurement does not see another's page tables. */
static int vm_open(struct qgpu_dev *d)
{
	return qgpu_open_path(d, dev.path);
}

/* At most the page tables an address space needs to map @size bytes in
 * one range: leaf tables (2 MiB each), level-1 tables (1 GiB), the root. */
static uint64_t pt_bytes_for(uint64_t size)
{
	uint64_t tables = size / (2ull << 20) + 1 + size / (1ull << 30) + 1 + 1;

	return tables * SZ_4K;
}

/* Every mapping of @fd's address space is in VRAM (@in) or not (!@in) */
static int vm_all_placed(int fd, bool in, unsigned int *mappings)
{
	struct drm_qgpu_vm_layout_entry *e;
	unsigned int n, i, wrong = 0;
	int ret;

	ret = qgpu_query_vm_layout(fd, &e, &n);
	if (ret)
		return ret;
	*mappings = 0;
	for (i = 0; i < n; i++) {
		if (e[i].kind != QGPU_VM_LAYOUT_MAPPING)
			continue;
		(*mappings)++;
		wrong += in != (e[i].segment == QGPU_SEG_VISIBLE ||
				e[i].segment == QGPU_SEG_LOCAL);
	}
	free(e);
	return wrong ? -EIO : 0;
}

#define RESIDENT_REPS	5

/* MakeResident of @n allocations: median µs to the paging fence */
struct resident_result {
	uint32_t n;
	double total_us, ioctl_us, evict_us;
	double paging_buffers, update_pt_cmds, tlb_flushes;
};

/*
 * @n allocations of 4 KiB, created in system memory, mapped one after the
 * other in one reservation of a fresh address space. A first
 * MakeResident places them (zero fills) and an Evict takes them out again;
 * then RESIDENT_REPS times: MakeResident of all @n, timed from the ioctl
 * to the paging fence signalled, each followed by an Evict so that the
 * next one pages again. The layout query checks every time that all of
 * them are (or are no longer) in VRAM.
 */
static int resident_run(uint32_t n, struct resident_result *r)
{
	double tot[RESIDENT_REPS], ioc[RESIDENT_REPS], ev[RESIDENT_REPS];
	struct drm_qgpu_mmu_info m0, m1;
	struct drm_qgpu_stats s0, s1;
	struct drm_qgpu_vm_info vi;
	uint64_t span = align_up(n * SZ_4K, SZ_64K), va = 0, f;
	unsigned int mapped;
	struct qgpu_dev d;
	uint32_t *h, i;
	int rep, ret;
	const char *what = "set-up";

	memset(r, 0, sizeof(*r));
	r->n = n;
	h = calloc(n, sizeof(*h));
	if (!h)
		return -ENOMEM;
	ret = vm_open(&d);
	if (ret) {
		printf("bench: vm-resident error=\"open: %s\"\n",
		       strerror(-ret));
		free(h);
		return ret;
	}
	for (i = 0; i < n && !ret; i++)
		ret = qgpu_bo_create(d.fd, SZ_4K, vram_mask(), 0, 0, &h[i]);
	if (!ret)
		ret = qgpu_vm_reserve(d.fd, 0, span, 0, &va);
	for (i = 0; i < n && !ret; i++)
		ret = qgpu_vm_map(d.fd, h[i], va + i * SZ_4K, 0, SZ_4K, 0);
	if (!ret)
		ret = qgpu_query_vm_info(d.fd, &vi);
	/* first placement (zero fills), then out again */
	if (!ret) {
		what = "first MakeResident";
		ret = qgpu_make_resident(d.fd, h, n, &f);
	}
	if (!ret)
		ret = qgpu_syncobj_wait(d.fd, vi.paging_fence_syncobj, f,
					60 * SEC);
	if (!ret)
		ret = vm_all_placed(d.fd, true, &mapped);
	if (!ret) {
		what = "Evict";
		ret = qgpu_evict(d.fd, h, n, &f);
	}
	if (!ret)
		ret = qgpu_syncobj_wait(d.fd, vi.paging_fence_syncobj, f,
					60 * SEC);
	if (!ret)
		ret = vm_all_placed(d.fd, false, &mapped);
	for (rep = 0; rep < RESIDENT_REPS && !ret; rep++) {
		int64_t t0, t1, t2;

		what = "MakeResident";
		qgpu_query_stats(d.fd, &s0, NULL, 0, NULL);
		qgpu_query_mmu(d.fd, &m0);
		t0 = qgpu_now_ns();
		ret = qgpu_make_resident(d.fd, h, n, &f);
		t1 = qgpu_now_ns();
		if (!ret)
			ret = qgpu_syncobj_wait(d.fd, vi.paging_fence_syncobj,
						f, 60 * SEC);
		t2 = qgpu_now_ns();
		qgpu_query_stats(d.fd, &s1, NULL, 0, NULL);
		qgpu_query_mmu(d.fd, &m1);
		if (!ret)
			ret = vm_all_placed(d.fd, true, &mapped);
		if (ret)
			break;
		tot[rep] = (t2 - t0) / 1e3;
		ioc[rep] = (t1 - t0) / 1e3;
		r->paging_buffers += s1.paging_buffers - s0.paging_buffers;
		r->update_pt_cmds += m1.update_pt_cmds - m0.update_pt_cmds;
		r->tlb_flushes += m1.tlb_flushes - m0.tlb_flushes;
		what = "Evict";
		t0 = qgpu_now_ns();
		ret = qgpu_evict(d.fd, h, n, &f);
		if (!ret)
			ret = qgpu_syncobj_wait(d.fd, vi.paging_fence_syncobj,
						f, 60 * SEC);
		ev[rep] = (qgpu_now_ns() - t0) / 1e3;
		if (!ret)
			ret = vm_all_placed(d.fd, false, &mapped);
	}
	if (!ret && mapped != n)
		ret = -EIO;
	if (ret) {
		printf("bench: vm-resident allocs=%u error=\"%s: %s\"\n", n,
		       what, strerror(-ret));
	} else {
		r->total_us = median(tot, RESIDENT_REPS);
		r->ioctl_us = median(ioc, RESIDENT_REPS);
		r->evict_us = median(ev, RESIDENT_REPS);
		r->paging_buffers /= (double)RESIDENT_REPS * n;
		r->update_pt_cmds /= (double)RESIDENT_REPS * n;
		r->tlb_flushes /= (double)RESIDENT_REPS * n;
	}
	if (va)
		qgpu_vm_free(d.fd, va, span);
	for (i = 0; i < n; i++)
		if (h[i])
			qgpu_bo_destroy(d.fd, h[i]);
	qgpu_close(&d);
	free(h);
	return ret;
}

static int bench_vm_resident(void)
{
	static const uint32_t want[] = { 1, 64, 4096 };
	struct resident_result r[3];
	uint64_t usable = qgpu_vram_usable(&dev), fit;
	uint32_t n;
	int i, ret;

	/* room for the allocations, their page tables and a margin */
	fit = usable > (1ull << 20) + pt_bytes_for(16ull << 20) ?
	      (usable - (1ull << 20) - pt_bytes_for(16ull << 20)) / SZ_4K : 0;
	for (i = 0; i < 3; i++) {
		n = want[i];
		if (n > fit) {
			printf("bench: vm-resident note=\"VRAM (%.1f MiB usable) cannot hold %u x 4 KiB plus page tables; using %llu allocations\"\n",
			       usable / MiB, n, (unsigned long long)fit);
			n = fit;
		}
		if (!n)
			return 1;
		ret = resident_run(n, &r[i]);
		if (ret)
			return 1;
		printf("bench: vm-resident allocs=%u alloc_kib=4 reps=%d total_median_us=%.1f per_alloc_median_us=%.2f ioctl_median_us=%.1f ioctl_per_alloc_us=%.2f evict_median_us=%.1f paging_buffers_per_alloc=%.2f update_pt_per_alloc=%.2f tlb_flushes_per_alloc=%.2f\n",
		       r[i].n, RESIDENT_REPS, r[i].total_us,
		       r[i].total_us / r[i].n, r[i].ioctl_us,
		       r[i].ioctl_us / r[i].n, r[i].evict_us,
		       r[i].paging_buffers, r[i].update_pt_cmds,
		       r[i].tlb_flushes);
	}
	printf("bench: vm-resident-scaling allocs=%u,%u,%u per_alloc_us=%.2f,%.2f,%.2f ratio_%u_vs_1=%.2f ratio_%u_vs_1=%.2f\n",
	       r[0].n, r[1].n, r[2].n, r[0].total_us / r[0].n,
	       r[1].total_us / r[1].n, r[2].total_us / r[2].n,
	       r[1].n, (r[1].total_us / r[1].n) / (r[0].total_us / r[0].n),
	       r[2].n, (r[2].total_us / r[2].n) / (r[0].total_us / r[0].n));
	return 0;
}

#define PT_MAPPED	(1ull << 30)

/*
 * Page-table memory: one allocation of @size bytes mapped again and again
 * into one reservation of a fresh address space until PT_MAPPED bytes are
 * mapped; the file's page_table_bytes before and after. Mapping takes no
 * memory but page tables. With @big the allocation is first made
 * resident, and the part of it that is mapped starts on a 64 KiB
 * boundary of VRAM, so that every 64 KiB group of the mappings is a
 * 64 KiB page (the rule of DRM_IOCTL_QGPU_VM_MAP); else it stays in system
 * memory and every entry is a 4 KiB page.
 */
static int pt_run(bool big, uint64_t size, double *bytes_per_gib,
		  double *pte_writes_per_gib, double *tables_per_gib)
{
	struct drm_qgpu_vm_info v0, v1;
	struct drm_qgpu_mmu_info m0, m1;
	struct drm_qgpu_gem_info gi = { 0 };
	uint64_t va = 0, off = 0, k, f;
	const char *name = big ? "64k" : "4k";
	struct qgpu_dev d;
	uint32_t h = 0;
	int ret;

	ret = vm_open(&d);
	if (ret) {
		printf("bench: vm-pagetables error=\"open: %s\"\n",
		       strerror(-ret));
		return ret;
	}
	ret = qgpu_bo_create(d.fd, big ? size + SZ_64K : size, vram_mask(), 0,
			     0, &h);
	/* on a 1 GiB boundary: the tables of exactly one GiB of addresses */
	if (!ret)
		ret = qgpu_query_mmu(d.fd, &m0);
	if (!ret) {
		va = align_up(m0.va_start, PT_MAPPED);
		if (va + PT_MAPPED > m0.va_end ||
		    qgpu_vm_reserve(d.fd, va, PT_MAPPED, QGPU_VM_RESERVE_FIXED,
				    NULL))
			ret = qgpu_vm_reserve(d.fd, 0, PT_MAPPED, 0, &va);
		if (ret)
			va = 0;
	}
	if (!ret)
		ret = qgpu_query_vm_info(d.fd, &v0);
	if (!ret && big) {
		ret = qgpu_make_resident(d.fd, &h, 1, &f);
		if (!ret)
			ret = qgpu_syncobj_wait(d.fd, v0.paging_fence_syncobj,
						f, 60 * SEC);
		gi.handle = h;
		if (!ret)
			ret = qgpu_bo_info(d.fd, h, &gi);
		if (!ret && !gi.segment)
			ret = -ENOSPC;
		off = (SZ_64K - (gi.gpu_addr & (SZ_64K - 1))) & (SZ_64K - 1);
		/* the page tables the placement itself took are not counted */
		if (!ret)
			ret = qgpu_query_vm_info(d.fd, &v0);
	}
	if (!ret)
		ret = qgpu_query_mmu(d.fd, &m0);
	for (k = 0; k < PT_MAPPED / size && !ret; k++)
		ret = qgpu_vm_map(d.fd, h, va + k * size, off, size, 0);
	if (!ret)
		ret = qgpu_query_vm_info(d.fd, &v1);
	if (!ret)
		ret = qgpu_query_mmu(d.fd, &m1);
	if (!ret && v1.mapped_bytes - v0.mapped_bytes != PT_MAPPED)
		ret = -EIO;
	/* still where it was: the entries written were 64 KiB ones */
	if (!ret && big) {
		struct drm_qgpu_gem_info g2 = { .handle = h };

		ret = qgpu_bo_info(d.fd, h, &g2);
		if (!ret && (g2.gpu_addr != gi.gpu_addr || !g2.segment))
			ret = -EAGAIN;
	}
	if (ret) {
		printf("bench: vm-pagetables pages=%s error=\"%s\"\n", name,
		       strerror(-ret));
	} else {
		double gib = PT_MAPPED / (1024.0 * MiB);

		*bytes_per_gib = (v1.page_table_bytes - v0.page_table_bytes) /
				 gib;
		*tables_per_gib = (v1.page_tables - v0.page_tables) / gib;
		*pte_writes_per_gib = (m1.pte_writes - m0.pte_writes) / gib;
	}
	if (va)
		qgpu_vm_free(d.fd, va, PT_MAPPED);
	if (h)
		qgpu_bo_destroy(d.fd, h);
	qgpu_close(&d);
	return ret;
}

static int bench_vm_pagetables(void)
{
	uint64_t size = 16ull << 20, usable = qgpu_vram_usable(&dev);
	double b4 = 0, b64 = 0, w4 = 0, w64 = 0, t4 = 0, t64 = 0;
	struct drm_qgpu_mmu_info mmu;
	double raw4, raw64;
	int ret;

	/*
	 * the 64 KiB side's allocation must be resident, with room to spare;
	 * one allocation has at most QGPU_BO_MAX_MAPPINGS mappings
	 */
	while (size > PT_MAPPED / QGPU_BO_MAX_MAPPINGS &&
	       size + SZ_64K + pt_bytes_for(PT_MAPPED) > usable / 2)
		size /= 2;
	ret = qgpu_query_mmu(dev.fd, &mmu);
	if (!ret)
		ret = pt_run(false, size, &b4, &w4, &t4);
	if (!ret)
		ret = pt_run(true, size, &b64, &w64, &t64);
	if (ret)
		return 1;
	/* the entries themselves: one per page */
	raw4 = (1024.0 * MiB) / SZ_4K * mmu.pte_size;
	raw64 = (1024.0 * MiB) / SZ_64K * mmu.pte_size;
	printf("bench: vm-pagetables mapped_mib=%llu alloc_mib=%.2f maps=%llu pte_size=%u pt_bytes_per_gib_4k=%.0f pt_bytes_per_gib_64k=%.0f tables_per_gib_4k=%.1f tables_per_gib_64k=%.1f raw_pte_bytes_per_gib_4k=%.0f raw_pte_bytes_per_gib_64k=%.0f ratio_to_raw_4k=%.3f ratio_to_raw_64k=%.3f ratio_64k_vs_4k=%.3f pte_writes_per_gib_4k=%.0f pte_writes_per_gib_64k=%.0f\n",
	       (unsigned long long)(PT_MAPPED >> 20), size / MiB,
	       (unsigned long long)(PT_MAPPED / size), mmu.pte_size, b4, b64,
	       t4, t64, raw4, raw64, b4 / raw4, b64 / raw64,
	       b4 > 0 ? b64 / b4 : 0, w4, w64);
	return 0;
}

/*
 * The split workload of bench_split() in the virtual model: the same 16
 * allocations of W/16 (VRAM only) and a result allocation, mapped one
 * after the other into one reservation of a fresh address space; one
 * virtual DMA buffer per step i (VFILL A[i] with p_i, VXOR A[i] ^=
 * A[i-1], VCHECKSUM A[i] into the result), submitted after a MakeResident
 * of what it uses (A[i], A[i-1], the result) and a wait for that paging
 * fence. The buffers themselves are not waited for: the memory manager
 * evicts older allocations when VRAM is short, behind the work that still
 * uses them. The wait is needed: a buffer submitted while its
 * MakeResident is still with the memory manager's worker puts its fence
 * on every mapped allocation, the moves of that MakeResident then wait
 * for the buffer, and the buffer waits for their paging fence: neither
 * ever runs. Timed from the first MakeResident to the last buffer done;
 * the physical run (bench_split()) of the same invocation is the
 * reference for time, bytes paged and evictions.
 */
static int bench_split_virtual(void)
{
	uint64_t chunk = split_chunk(), span = align_up(16 * chunk + SZ_4K,
							 SZ_64K), va = 0, f;
	uint64_t vram = dev.info.vram_size, vpaged;
	struct drm_qgpu_sync_entry out = { 0 };
	struct drm_qgpu_stats s0, s1;
	struct drm_qgpu_vm_info vi;
	struct qgpu_vcb vcb[16];
	uint32_t h[17] = { 0 }, ctx = 0, *res = NULL, list[3];
	const char *what = "set-up";
	int64_t t0 = 0, dt = 0;
	int i, ret, bad = 0, differ = 0;
	struct qgpu_dev d;

	if (!split_phys.done && bench_split())
		return 1;
	ret = vm_open(&d);
	if (ret) {
		printf("bench: split-virtual error=\"open: %s\"\n",
		       strerror(-ret));
		return 1;
	}
	memset(vcb, 0, sizeof(vcb));
	for (i = 0; i < 16 && !ret; i++)
		ret = qgpu_bo_create(d.fd, chunk, vram_mask(), 0, 0, &h[i]);
	if (!ret)
		ret = qgpu_bo_create(d.fd, SZ_4K, vram_mask() |
				     QGPU_SEGBIT(QGPU_SEG_APERTURE),
				     QGPU_GEM_CPU_ACCESS, 0, &h[16]);
	if (!ret)
		ret = qgpu_ctx_create_virtual(d.fd, &ctx);
	if (!ret)
		ret = qgpu_syncobj_create(d.fd, &out.handle);
	if (!ret)
		ret = qgpu_vm_reserve(d.fd, 0, span, 0, &va);
	for (i = 0; i < 17 && !ret; i++)
		ret = qgpu_vm_map(d.fd, h[i], va + i * chunk, 0,
				  i < 16 ? chunk : SZ_4K, 0);
	if (!ret)
		ret = qgpu_query_vm_info(d.fd, &vi);
	for (i = 0; i < 16 && !ret; i++) {
		uint64_t a = va + i * chunk;

		ret = qgpu_vcb_init(&vcb[i]);
		if (!ret)
			ret = qgpu_vcb_fill(&vcb[i], a, chunk,
					    0x01000193u * (i + 3));
		if (!ret && i)
			ret = qgpu_vcb_xor(&vcb[i], a, a, a - chunk, chunk / 4);
		if (!ret)
			ret = qgpu_vcb_checksum(&vcb[i], a, chunk,
						va + 16 * chunk + i * 4);
	}
	if (!ret) {
		what = "run";
		qgpu_query_stats(d.fd, &s0, NULL, 0, NULL);
		t0 = qgpu_now_ns();
	}
	for (i = 0; i < 16 && !ret; i++) {
		uint32_t n = 0;

		list[n++] = h[i];
		if (i)
			list[n++] = h[i - 1];
		list[n++] = h[16];
		ret = qgpu_make_resident(d.fd, list, n, &f);
		if (!ret)
			ret = qgpu_syncobj_wait(d.fd, vi.paging_fence_syncobj,
						f, 60 * SEC);
		if (!ret)
			ret = qgpu_vcb_submit(d.fd, ctx, &vcb[i], NULL, 0,
					      i == 15 ? &out : NULL,
					      i == 15 ? 1 : 0);
	}
	if (!ret)
		ret = qgpu_syncobj_wait(d.fd, out.handle, 0, 120 * SEC);
	if (!ret) {
		dt = qgpu_now_ns() - t0;
		qgpu_query_stats(d.fd, &s1, NULL, 0, NULL);
		what = "result";
		ret = qgpu_bo_map(d.fd, h[16], SZ_4K, (void **)&res);
	}
	if (ret) {
		struct drm_qgpu_context_status cs;

		printf("bench: split-virtual error=\"%s: %s\"\n", what,
		       strerror(-ret));
		if (ctx && !qgpu_query_context(d.fd, ctx, &cs) && cs.state)
			printf("bench: split-virtual error=\"context lost: fault %s at %#llx\"\n",
			       qgpu_fault_name(cs.fault_reason),
			       (unsigned long long)cs.fault_addr);
		bad = 1;
	} else {
		for (i = 0; i < 16; i++) {
			bad += res[i] != split_want(i, chunk);
			differ += res[i] != split_phys.csum[i];
		}
		qgpu_bo_unmap(d.fd, h[16], res, SZ_4K);
		vpaged = paged_bytes(&s0, &s1);
		printf("bench: split-virtual working_set_mib=%.0f vram_mib=%.0f vram_pct=%.0f make_resident_calls=16 bytes_paged=%llu bytes_to_vram=%llu bytes_from_vram=%llu bytes_vram_to_vram=%llu bytes_filled=%llu evictions=%llu paging_buffers=%llu time_ms=%.1f results=%s same_as_physical=%s physical_time_ms=%.1f physical_bytes_paged=%llu physical_evictions=%llu time_ratio=%.2f",
		       16 * chunk / MiB, vram / MiB,
		       100.0 * vram / (16 * chunk), (unsigned long long)vpaged,
		       (unsigned long long)(s1.bytes_to_vram - s0.bytes_to_vram),
		       (unsigned long long)(s1.bytes_from_vram - s0.bytes_from_vram),
		       (unsigned long long)(s1.bytes_vram_to_vram - s0.bytes_vram_to_vram),
		       (unsigned long long)(s1.bytes_filled - s0.bytes_filled),
		       (unsigned long long)(s1.evictions - s0.evictions),
		       (unsigned long long)(s1.paging_buffers - s0.paging_buffers),
		       dt / 1e6, bad ? "WRONG" : "correct",
		       differ ? "no" : "yes", split_phys.ns / 1e6,
		       (unsigned long long)split_phys.bytes_paged,
		       (unsigned long long)split_phys.evictions,
		       split_phys.ns ? (double)dt / split_phys.ns : 0);
		if (split_phys.bytes_paged)
			printf(" bytes_ratio=%.2f",
			       (double)vpaged / split_phys.bytes_paged);
		else
			printf(" bytes_ratio=n/a");
		if (split_phys.evictions)
			printf(" evictions_ratio=%.2f\n",
			       (double)(s1.evictions - s0.evictions) /
			       split_phys.evictions);
		else
			printf(" evictions_ratio=n/a\n");
		bad += differ;
	}
	for (i = 0; i < 16; i++)
		qgpu_vcb_fini(&vcb[i]);
	if (va)
		qgpu_vm_free(d.fd, va, span);
	if (out.handle)
		qgpu_syncobj_destroy(d.fd, out.handle);
	if (ctx)
		qgpu_ctx_destroy(d.fd, ctx);
	for (i = 0; i < 17; i++)
		if (h[i])
			qgpu_bo_destroy(d.fd, h[i]);
	qgpu_close(&d);
	return bad ? 1 : 0;
}

static int bench_vm(bool resident, bool pagetables, bool split)
{
	int fail = 0;

	if (!qgpu_dev_has_mmu(&dev)) {
		printf("bench: vm note=\"the device has no GPU MMU: skipped\"\n");
		return 0;
	}
	/* next to the physical split run, so that both see the same load */
	if (split)
		fail |= bench_split_virtual();
	if (resident)
		fail |= bench_vm_resident();
	if (pagetables)
		fail |= bench_vm_pagetables();
	return fail;
}

/* ------------------------------------------------------------------------ */
/* Usage tracking (benchmark "stream")                                       */

/*
 * Per frame the CPU writes STREAM_SIZE bytes and the GPU checksums them
 * and moves 2 x STREAM_PASSES x STREAM_SCRATCH / 2 bytes of scratch: in a
 * TCG guest about the same time on each side (about 2 ms), so that either
 * one would leave the other idle if they did not overlap.
 */
#define STREAM_SIZE	(512 * 1024u)
#define STREAM_BACKINGS	4		/* the DISCARD ring */
#define STREAM_SCRATCH	(8u << 20)
#define STREAM_PASSES	3
#define STREAM_SEED	0x57000000u

static int stream_frames = 200;
static uint32_t stream_scratch = STREAM_SCRATCH;

/*
 * One mode's run. Its result buffer holds one checksum per frame, then
 * (8-byte aligned) the device time at the start and at the end of each
 * frame's DMA buffer.
 */
struct stream_result {
	const char *mode;
	uint32_t lock_flags;
	uint32_t max_backings;
	int64_t ns, lock_ns, cpu_ns;
	uint64_t waits, renames, backings, cpu_bytes;
	struct drm_qgpu_stats s0, s1;
	uint32_t res;
	uint64_t res_size;
	double gpu_ms;		/* median of the frames' DMA-buffer times */
	int wrong;
};

static uint32_t stream_ts_off(int f)
{
	return align_up(stream_frames * 4ull, 8) + f * 16;
}

/*
 * One frame's GPU work: the checksum of the frame's data into its slot of
 * the result buffer, then STREAM_PASSES passes over the scratch buffer
 * (fill its first half, copy it to the second) so that the GPU is busy
 * while the CPU prepares the next frame; between two timestamps. The
 * resource is only read.
 */
static int stream_build(struct qgpu_cb *cb, uint32_t data, uint32_t res,
			uint32_t scratch, int f)
{
	uint32_t half = stream_scratch / 2;
	int i;

	/* the builder's errors are sticky: checked once at the end */
	qgpu_cb_reset(cb);
	qgpu_cb_bind_flags(cb, 0, data, 0, STREAM_SIZE, 0);
	qgpu_cb_bind(cb, 1, res, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 2, scratch, 0, stream_scratch);
	qgpu_cb_timestamp(cb, 1, stream_ts_off(f));
	qgpu_cb_checksum(cb, 0, 0, STREAM_SIZE, 1, f * 4);
	for (i = 0; i < STREAM_PASSES; i++) {
		qgpu_cb_fill(cb, 2, 0, half, f * STREAM_PASSES + i);
		qgpu_cb_copy(cb, 2, half, 2, 0, half);
	}
	qgpu_cb_timestamp(cb, 1, stream_ts_off(f) + 8);
	return cb->error;
}

/*
 * Every frame: lock the resource with @r->lock_flags, write the frame's
 * data (a pattern of the frame number) through the mapping, unlock,
 * submit the frame's GPU work on the context and record that it reads the
 * resource. Timed from the first lock to the last frame's fence.
 */
static int stream_run(struct stream_result *r)
{
	const char *what = "set-up";
	struct qgpu_context ctx = { 0 };
	struct qgpu_resource rs = { 0 };
	struct drm_qgpu_submit args;
	uint32_t scratch = 0;
	struct qgpu_cb cb;
	bool cb_ok = false;
	int64_t t0, t1;
	int f, ret;
	void *p;

	r->res_size = align_up(stream_ts_off(stream_frames), SZ_4K);
	ret = qgpu_bo_create(dev.fd, r->res_size,
			     QGPU_SEGBIT(QGPU_SEG_APERTURE),
			     QGPU_GEM_CPU_ACCESS, 0, &r->res);
	if (!ret)
		ret = qgpu_bo_create(dev.fd, stream_scratch, vram_mask(), 0, 0,
				     &scratch);
	if (!ret)
		ret = qgpu_resource_create(dev.fd, STREAM_SIZE,
					   QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
					   QGPU_SEGBIT(QGPU_SEG_APERTURE), 0,
					   QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0),
					   r->max_backings, &rs);
	if (!ret)
		ret = qgpu_context_create(dev.fd, 0, &ctx);
	if (!ret)
		ret = qgpu_cb_init(&cb, dev.info.max_slots);
	cb_ok = !ret;
	qgpu_query_stats(dev.fd, &r->s0, NULL, 0, NULL);
	t0 = qgpu_now_ns();
	for (f = 0; f < stream_frames && !ret; f++) {
		int64_t l0 = qgpu_now_ns(), l1;

		what = "lock";
		ret = qgpu_resource_lock(&rs, r->lock_flags, &p);
		l1 = qgpu_now_ns();
		r->lock_ns += l1 - l0;
		if (ret)
			break;
		qgpu_pattern_fill(p, STREAM_SIZE, STREAM_SEED + f);
		r->cpu_bytes += STREAM_SIZE;
		what = "unlock";
		ret = qgpu_resource_unlock(&rs);
		if (!ret) {
			what = "build";
			ret = stream_build(&cb, qgpu_resource_handle(&rs),
					   r->res, scratch, f);
		}
		if (!ret) {
			what = "submit";
			qgpu_cb_to_submit(&cb, ctx.id, &args);
			ret = qgpu_context_submit(&ctx, &args, NULL, 0, NULL, 0);
		}
		if (!ret) {
			what = "used";
			ret = qgpu_resource_used(&rs, &ctx, false);
		}
		r->cpu_ns += qgpu_now_ns() - l1;
	}
	if (!ret) {
		what = "wait";
		ret = qgpu_mfence_wait(&ctx.fence, ctx.last, 120 * SEC);
	}
	t1 = qgpu_now_ns();
	qgpu_query_stats(dev.fd, &r->s1, NULL, 0, NULL);
	r->ns = t1 - t0;
	r->waits = rs.waits;
	r->renames = rs.renames;
	r->backings = rs.nbackings;
	if (ret) {
		struct drm_qgpu_context_status cs;

		printf("bench: stream mode=%s error=\"%s: %s\"\n", r->mode,
		       what, strerror(-ret));
		if (ctx.id && !qgpu_query_context(dev.fd, ctx.id, &cs) &&
		    cs.state)
			printf("bench: stream mode=%s error=\"context lost: fault %s at %#llx\"\n",
			       r->mode, qgpu_fault_name(cs.fault_reason),
			       (unsigned long long)cs.fault_addr);
	}
	if (cb_ok)
		qgpu_cb_fini(&cb);
	if (ctx.id)
		qgpu_context_destroy(&ctx);
	if (rs.nbackings)
		qgpu_resource_destroy(&rs);
	if (scratch)
		qgpu_bo_destroy(dev.fd, scratch);
	return ret;
}

/*
 * Each frame's checksum against the host's FNV of that frame's data
 * (@want); the median time of the frames' DMA buffers on the device.
 */
static void stream_check(struct stream_result *r, const uint32_t *want,
			 double *ms)
{
	const uint64_t *ts;
	uint32_t *out;
	int f;

	if (qgpu_bo_map(dev.fd, r->res, r->res_size, (void **)&out)) {
		r->wrong = stream_frames;
		return;
	}
	ts = (const uint64_t *)((char *)out + stream_ts_off(0));
	for (f = 0; f < stream_frames; f++) {
		r->wrong += out[f] != want[f];
		ms[f] = (int64_t)(ts[2 * f + 1] - ts[2 * f]) / 1e6;
	}
	r->gpu_ms = median(ms, stream_frames);
	qgpu_bo_unmap(dev.fd, r->res, out, r->res_size);
}

static double stream_fps(const struct stream_result *r)
{
	return r->ns > 0 ? stream_frames / (r->ns / 1e9) : 0;
}

/*
 * The streaming update of "Allocation Usage Tracking": each frame the
 * CPU rewrites a buffer that the GPU still reads. With DISCARD the lock
 * renames (a ring of STREAM_BACKINGS allocations) and the CPU writes the
 * next frame while the GPU works on the last; with a synchronising lock
 * it first waits until the GPU is done with the buffer. The same frames
 * in both modes, one after the other; then every frame's checksum of
 * both is checked.
 */
static int bench_stream(void)
{
	struct stream_result m[2] = {
		{ .mode = "discard", .lock_flags = QGPU_LOCK_DISCARD,
		  .max_backings = STREAM_BACKINGS },
		{ .mode = "sync", .lock_flags = 0, .max_backings = 1 },
	};
	uint32_t *want = calloc(stream_frames, sizeof(*want));
	double *ms = calloc(stream_frames, sizeof(*ms));
	uint32_t *data = malloc(STREAM_SIZE);
	int f, i, fail = 0;

	if (!want || !ms || !data) {
		printf("bench: stream error=\"%s\"\n", strerror(ENOMEM));
		fail = 1;
	}
	/* the scratch allocation must not crowd the resource out of VRAM */
	while (stream_scratch > SZ_64K &&
	       4ull * stream_scratch > qgpu_vram_usable(&dev))
		stream_scratch /= 2;
	if (stream_scratch != STREAM_SCRATCH)
		printf("bench: stream note=\"VRAM (%.1f MiB usable) is small: %u KiB of scratch instead of %u\"\n",
		       qgpu_vram_usable(&dev) / MiB, stream_scratch / 1024,
		       STREAM_SCRATCH / 1024);
	for (i = 0; i < 2 && !fail; i++)
		fail |= stream_run(&m[i]) != 0;
	for (f = 0; f < stream_frames && !fail; f++) {
		qgpu_pattern_fill(data, STREAM_SIZE, STREAM_SEED + f);
		want[f] = qgpu_csum(data, STREAM_SIZE / 4);
	}
	for (i = 0; i < 2 && !fail; i++) {
		struct stream_result *r = &m[i];

		stream_check(r, want, ms);
		printf("bench: stream mode=%s frames=%d frame_kib=%u scratch_kib=%u passes=%d max_backings=%u time_ms=%.1f fps=%.1f lock_waits=%llu lock_ms=%.1f renames=%llu backings=%llu cpu_bytes_written=%llu bytes_paged=%llu bytes_filled=%llu evictions=%llu cpu_ms_per_frame=%.2f gpu_ms_per_frame=%.2f results=%s\n",
		       r->mode, stream_frames, STREAM_SIZE / 1024,
		       stream_scratch / 1024, STREAM_PASSES, r->max_backings, r->ns / 1e6, stream_fps(r),
		       (unsigned long long)r->waits, r->lock_ns / 1e6,
		       (unsigned long long)r->renames,
		       (unsigned long long)r->backings,
		       (unsigned long long)r->cpu_bytes,
		       (unsigned long long)paged_bytes(&r->s0, &r->s1),
		       (unsigned long long)(r->s1.bytes_filled -
					    r->s0.bytes_filled),
		       (unsigned long long)(r->s1.evictions - r->s0.evictions),
		       r->cpu_ns / 1e6 / stream_frames, r->gpu_ms,
		       r->wrong ? "WRONG" : "correct");
		if (r->wrong)
			printf("bench: stream mode=%s error=\"%d of %d frames' checksums differ from the host's\"\n",
			       r->mode, r->wrong, stream_frames);
	}
	fail |= m[0].wrong || m[1].wrong;
	if (!fail)
		printf("bench: stream frames=%d fps_discard=%.1f fps_sync=%.1f fps_ratio=%.2f\n",
		       stream_frames, stream_fps(&m[0]), stream_fps(&m[1]),
		       stream_fps(&m[1]) > 0 ?
		       stream_fps(&m[0]) / stream_fps(&m[1]) : 0);
	for (i = 0; i < 2; i++)
		if (m[i].res)
			qgpu_bo_destroy(dev.fd, m[i].res);
	free(want);
	free(ms);
	free(data);
	return fail;
}

#define SCALE_ALLOCS		1024

/*
 * The DMA buffers of submit-scale, by mode: "one" (no split point),
 * "split4" (a split point every 4 BINDs) and "tail" (the first quarter of
 * the BINDs over the allocations in turn, then one split point, then the
 * rest all the same allocation: every later entry's walk finds that a
 * split there would release the first quarter's allocations, and nothing
 * needs evicting).
 */
enum scale_mode { SCALE_ONE, SCALE_SPLIT4, SCALE_TAIL, SCALE_MODES };
static const char *const scale_mode_names[SCALE_MODES] = {
	"one", "split4", "tail",
};

static void submit_scale_build(struct qgpu_cb *cb, const uint32_t *h,
			       uint32_t n, enum scale_mode mode)
{
	uint32_t i, slot, which;

	for (i = 0; i < n; i++) {
		if ((mode == SCALE_SPLIT4 && i && i % 4 == 0) ||
		    (mode == SCALE_TAIL && i == n / 4))
			qgpu_cb_split_point(cb);
		slot = i % dev.info.max_slots;
		which = i % SCALE_ALLOCS;
		if (mode == SCALE_TAIL && i >= n / 4)
			slot = which = 0;
		qgpu_cb_bind(cb, slot, h[which], 0, 4096);
	}
}

static int submit_scale_one(uint32_t ctx, const uint32_t *h, uint32_t n,
			    enum scale_mode mode, double *ioctl_ns,
			    double *total_ns)
{
	double io[PAGING_MAX_RUNS], tot[PAGING_MAX_RUNS];
	struct drm_qgpu_sync_entry out = { 0 };
	struct qgpu_cb cb;
	int r, ret;

	ret = qgpu_cb_init(&cb, dev.info.max_slots);
	if (!ret)
		ret = qgpu_syncobj_create(dev.fd, &out.handle);
	if (!ret)
		submit_scale_build(&cb, h, n, mode);
	qgpu_cb_fence(&cb, 0, 0, n);
	if (!ret)
		ret = cb.error;
	for (r = 0; r < paging_runs + 1 && !ret; r++) {
		int64_t t0 = qgpu_now_ns(), t1;

		ret = qgpu_submit(dev.fd, ctx, &cb, NULL, 0, &out, 1, NULL);
		t1 = qgpu_now_ns();
		if (!ret)
			ret = qgpu_syncobj_wait(dev.fd, out.handle, 0,
						60000000000ll);
		/* the first run is a warm-up (pages pinned, tables built) */
		if (r) {
			io[r - 1] = t1 - t0;
			tot[r - 1] = qgpu_now_ns() - t0;
		}
	}
	if (out.handle)
		qgpu_syncobj_destroy(dev.fd, out.handle);
	qgpu_cb_fini(&cb);
	if (ret)
		return ret;
	*ioctl_ns = median(io, paging_runs);
	*total_ns = median(tot, paging_runs);
	return 0;
}

static int bench_submit_scale(void)
{
	static const uint32_t sizes[] = { 1024, 4096, 16384 };
	double io[3], tot[3];
	uint32_t *h, ctx = 0, i, made = 0;
	enum scale_mode m;
	int ret;

	h = calloc(SCALE_ALLOCS, sizeof(*h));
	if (!h)
		return 1;
	ret = qgpu_ctx_create(dev.fd, &ctx);
	for (i = 0; i < SCALE_ALLOCS && !ret; i++) {
		ret = qgpu_bo_create(dev.fd, 4096,
				     QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
				     QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0,
				     &h[i]);
		if (!ret)
			made++;
	}
	for (m = 0; m < SCALE_MODES && !ret; m++) {
		const char *mode = scale_mode_names[m];

		for (i = 0; i < 3 && !ret; i++) {
			ret = submit_scale_one(ctx, h, sizes[i], m,
					       &io[i], &tot[i]);
			if (!ret)
				printf("bench: submit-scale mode=%s entries=%u allocations=%u ioctl_us=%.1f ioctl_ns_per_entry=%.0f signal_us=%.1f signal_ns_per_entry=%.0f runs=%d\n",
				       mode, sizes[i],
				       sizes[i] < SCALE_ALLOCS ? sizes[i] :
				       SCALE_ALLOCS, io[i] / 1e3,
				       io[i] / sizes[i], tot[i] / 1e3,
				       tot[i] / sizes[i], paging_runs);
		}
		if (!ret)
			printf("bench: submit-scale mode=%s scale_ratio=%.3f signal_scale_ratio=%.3f\n",
			       mode, (io[2] / sizes[2]) / (io[0] / sizes[0]),
			       (tot[2] / sizes[2]) / (tot[0] / sizes[0]));
	}
	if (ret)
		printf("bench: submit-scale error=\"%s\"\n", strerror(-ret));
	for (i = 0; i < made; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	if (ctx)
		qgpu_ctx_destroy(dev.fd, ctx);
	free(h);
	return ret ? 1 : 0;
}

#define VRAM_MEMORY_CHUNK	(64ull << 20)

static int bench_vram_memory(void)
{
	uint64_t n = (paging_size + VRAM_MEMORY_CHUNK - 1) / VRAM_MEMORY_CHUNK;
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			QGPU_SEGBIT(QGPU_SEG_LOCAL);
	struct drm_qgpu_stats s0, s1, s2;
	struct qgpu_cb cb;
	uint32_t *h, ctx = 0;
	uint64_t i, made = 0;
	int64_t t0;
	int ret;

	h = calloc(n, sizeof(*h));
	if (!h || qgpu_cb_init(&cb, dev.info.max_slots))
		return 1;
	ret = qgpu_ctx_create(dev.fd, &ctx);
	if (!ret)
		ret = qgpu_query_stats(dev.fd, &s0, NULL, 0, NULL);
	for (i = 0; i < n && !ret; i++) {
		ret = qgpu_bo_create(dev.fd, VRAM_MEMORY_CHUNK, mask, 0, 0,
				     &h[i]);
		if (ret)
			break;
		made++;
		ret = qgpu_bo_reside(dev.fd, h[i], QGPU_RESIDE_MAKE_RESIDENT,
				     0, NULL);
		if (ret)
			break;
		qgpu_cb_reset(&cb);
		qgpu_cb_bind(&cb, 0, h[i], 0, VRAM_MEMORY_CHUNK);
		qgpu_cb_fill(&cb, 0, 0, VRAM_MEMORY_CHUNK, 0x5eed0000 + i);
		ret = cb.error ? cb.error :
		      qgpu_submit_wait(dev.fd, ctx, &cb, 60000000000ll, NULL);
	}
	if (!ret)
		ret = qgpu_query_stats(dev.fd, &s1, NULL, 0, NULL);
	if (ret) {
		printf("bench: vram-memory error=\"allocation %llu of %llu: %s\"\n",
		       (unsigned long long)i, (unsigned long long)n,
		       strerror(-ret));
	} else {
		printf("bench: vram-memory phase=held size_mib=%.0f committed_mib=%.1f\n",
		       n * VRAM_MEMORY_CHUNK / MiB, s1.vram_committed / MiB);
		fflush(stdout);
		sleep(3);
	}
	for (i = 0; i < made; i++)
		qgpu_bo_destroy(dev.fd, h[i]);
	qgpu_cb_fini(&cb);
	if (ctx)
		qgpu_ctx_destroy(dev.fd, ctx);
	free(h);
	if (ret)
		return 1;
	/* destruction is deferred: wait for the discards */
	t0 = qgpu_now_ns();
	do {
		usleep(20000);
		if (qgpu_query_stats(dev.fd, &s2, NULL, 0, NULL))
			return 1;
	} while (s2.vram_discards - s0.vram_discards < made &&
		 qgpu_now_ns() - t0 < 30000000000ll);
	/* counted when queued: wait until the device's figure stops falling */
	do {
		uint64_t last = s2.vram_committed;

		usleep(100000);
		if (qgpu_query_stats(dev.fd, &s2, NULL, 0, NULL))
			return 1;
		if (s2.vram_committed >= last)
			break;
	} while (qgpu_now_ns() - t0 < 30000000000ll);
	printf("bench: vram-memory size_mib=%.0f allocations=%llu committed_before_mib=%.1f committed_held_mib=%.1f committed_after_mib=%.1f discards=%llu discarded_mib=%.0f wait_ms=%.0f\n",
	       n * VRAM_MEMORY_CHUNK / MiB, (unsigned long long)made,
	       s0.vram_committed / MiB, s1.vram_committed / MiB,
	       s2.vram_committed / MiB,
	       (unsigned long long)(s2.vram_discards - s0.vram_discards),
	       (s2.vram_discarded_bytes - s0.vram_discarded_bytes) / MiB,
	       (qgpu_now_ns() - t0) / 1e6);
	return s2.vram_discards - s0.vram_discards < made;
}

int main(int argc, char **argv)
{
	const char *node = NULL;
	bool lat = false, pag = false, cpu = false, spl = false;
	bool vres = false, vpt = false, vspl = false, str = false;
	bool vmem = false, sscale = false;
	bool prog = false;
	int c, i, ret, fail = 0;
	int64_t v;

	while ((c = getopt(argc, argv, "d:f:H:n:r:s:w:h")) != -1) {
		switch (c) {
		case 'H':
			host_memcpy = atof(optarg);
			break;
		case 'r':
			paging_runs = atoi(optarg);
			if (paging_runs < 1)
				paging_runs = 1;
			if (paging_runs > PAGING_MAX_RUNS)
				paging_runs = PAGING_MAX_RUNS;
			break;
		case 'd':
			node = optarg;
			break;
		case 'f':
			stream_frames = atoi(optarg);
			if (stream_frames < 1)
				stream_frames = 1;
			break;
		case 'n':
			runs = atoi(optarg);
			if (runs < 1)
				runs = 1;
			break;
		case 's':
			v = qgpu_parse_size(optarg);
			if (v > 0) {
				paging_size = v < 4096 ? (uint64_t)v << 20 : (uint64_t)v;
				paging_size_set = true;
			}
			break;
		case 'w':
			v = qgpu_parse_size(optarg);
			if (v > 0)
				working_set = v < 4096 ? (uint64_t)v << 20 : (uint64_t)v;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d NODE] [-f FRAMES] [-H HOST_MEMCPY_MIB_S] [-n RUNS] [-r PAGING_RUNS] [-s PAGING_SIZE] [-w WORKING_SET] [latency|paging|cpu|split|vm|vm-resident|vm-pagetables|split-virtual|stream|vram-memory|submit-scale|progress|all]...\n",
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
		else if (!strcmp(argv[i], "vm"))
			vres = vpt = vspl = true;
		else if (!strcmp(argv[i], "vm-resident"))
			vres = true;
		else if (!strcmp(argv[i], "vm-pagetables"))
			vpt = true;
		else if (!strcmp(argv[i], "split-virtual"))
			vspl = true;
		else if (!strcmp(argv[i], "stream"))
			str = true;
		else if (!strcmp(argv[i], "vram-memory"))
			vmem = true;
		else if (!strcmp(argv[i], "submit-scale"))
			sscale = true;
		else if (!strcmp(argv[i], "progress"))
			prog = true;
		else if (!strcmp(argv[i], "all"))
			lat = pag = cpu = spl = vres = vpt = vspl = str = true;
		else {
			fprintf(stderr, "qgpu-bench: unknown benchmark %s\n",
				argv[i]);
			return 2;
		}
	}
	if (!lat && !pag && !cpu && !spl && !vres && !vpt && !vspl && !str &&
	    !vmem && !prog && !sscale)
		lat = pag = cpu = spl = vres = vpt = vspl = str = true;
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
	if (vres || vpt || vspl)
		fail |= bench_vm(vres, vpt, vspl);
	if (str)
		fail |= bench_stream();
	if (vmem)
		fail |= bench_vram_memory();
	if (sscale)
		fail |= bench_submit_scale();
	if (prog)
		fail |= bench_progress();
	qgpu_close(&dev);
	return fail;
}
