// SPDX-License-Identifier: MIT
/*
 * qgpu_prime: buffers shared with another DRM driver (vgem) through
 * dma-bufs, and implicit synchronisation through their reservation objects.
 *
 * - A qgpu allocation exported and imported by vgem is read and written
 *   through the CPU mapping of the dma-buf vgem holds; while vgem is
 *   attached, it stays out of VRAM (vgem was given its system pages).
 * - A vgem buffer imported by qgpu is read and written by qgpu's DMA
 *   buffers; it is only ever mapped into the aperture segment, never
 *   copied into VRAM.
 * - poll() on the dma-buf and DMA_BUF_IOCTL_EXPORT_SYNC_FILE see qgpu's GPU
 *   work (write usage for QGPU_ALLOC_WRITE entries, read usage otherwise);
 *   a fence attached by vgem or imported as a sync_file into the dma-buf
 *   holds back a qgpu submission that uses the buffer, but never the
 *   paging engine that every process shares.
 *
 * Needs the vgem module (in the guest image, loaded here on demand).
 */
#include <poll.h>
#include <sys/stat.h>
#include <linux/dma-buf.h>

#include "qgpu_test.h"

/* vgem's UAPI (the kernel's include/uapi/drm/vgem_drm.h; not in libdrm-dev) */
struct qt_vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct qt_vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define QT_VGEM_FENCE_WRITE	0x1
#define QT_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct qt_vgem_fence_attach)
#define QT_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct qt_vgem_fence_signal)

#define SZ	(64 * 1024)
#define VIS	QGPU_SEGBIT(QGPU_SEG_VISIBLE)
#define APT	QGPU_SEGBIT(QGPU_SEG_APERTURE)

static struct qgpu_dev dev;
static int vgem = -1;

/* The first DRM primary node whose driver is vgem, loading it if needed. */
static int open_vgem(void)
{
	char path[64];
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (!qgpu_find_driver_node("vgem", QGPU_NODE_PRIMARY, 0, path,
					   sizeof(path)))
			return open(path, O_RDWR | O_CLOEXEC);
		if (system("modprobe vgem") != 0)
			break;
	}
	return -1;
}

/* A vgem buffer of @size bytes, mapped. */
static uint32_t vgem_bo(uint64_t size, void **map)
{
	struct drm_mode_create_dumb c = {
		.width = size / 4, .height = 1, .bpp = 32,
	};
	struct drm_mode_map_dumb m = { 0 };

	igt_assert_eq(drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &c), 0);
	igt_assert_lte(size, c.size);
	if (map) {
		m.handle = c.handle;
		igt_assert_eq(drmIoctl(vgem, DRM_IOCTL_MODE_MAP_DUMB, &m), 0);
		*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    vgem, m.offset);
		igt_assert(*map != MAP_FAILED);
	}
	return c.handle;
}

/*
 * A CPU mapping of a dma-buf vgem imported. DRM refuses map offsets for
 * imported objects, so an importer's CPU access goes through the dma-buf
 * itself; re-exporting gives back that same dma-buf.
 */
static void *vgem_map(uint32_t h, int dmabuf, uint64_t size)
{
	struct stat a, b;
	void *p;
	int fd;

	igt_assert_eq(drmPrimeHandleToFD(vgem, h, DRM_CLOEXEC | DRM_RDWR, &fd),
		      0);
	igt_assert_eq(fstat(fd, &a), 0);
	igt_assert_eq(fstat(dmabuf, &b), 0);
	igt_assert(a.st_ino == b.st_ino);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	igt_assert(p != MAP_FAILED);
	close(fd);
	return p;
}

static uint32_t vgem_fence(uint32_t h, bool write)
{
	struct qt_vgem_fence_attach a = {
		.handle = h, .flags = write ? QT_VGEM_FENCE_WRITE : 0,
	};

	igt_assert_eq(drmIoctl(vgem, QT_VGEM_FENCE_ATTACH, &a), 0);
	return a.out_fence;
}

static void vgem_signal(uint32_t fence)
{
	struct qt_vgem_fence_signal s = { .fence = fence };

	igt_assert_eq(drmIoctl(vgem, QT_VGEM_FENCE_SIGNAL, &s), 0);
}

/* poll() @fd for @events without waiting: the events that are ready. */
static short poll_now(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	igt_assert_lte(0, poll(&p, 1, 0));
	return p.revents & events;
}

static bool poll_wait(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	return poll(&p, 1, ms) == 1 && (p.revents & events) == events;
}

static int export_sync_file(int dmabuf, uint32_t flags)
{
	struct dma_buf_export_sync_file e = { .flags = flags, .fd = -1 };

	igt_assert_eq(ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e), 0);
	igt_assert_lte(0, e.fd);
	return e.fd;
}

static void check_words(const volatile uint32_t *p, uint64_t size,
			uint32_t want, const char *what)
{
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		igt_assert_f(p[i] == want, "%s: word %llu is %#x, not %#x\n",
			     what, (unsigned long long)i, p[i], want);
}

/* Submit: fill @h (slot 0) with @value, as written or read-only. */
static void fill(uint32_t ctx, uint32_t h, uint32_t value, uint32_t syncobj)
{
	struct drm_qgpu_sync_entry out = { .handle = syncobj };
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind(cb, 0, h, 0, SZ);
	qgpu_cb_fill(cb, 0, 0, SZ, value);
	igt_assert_eq(cb->error, 0);
	igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &out,
				  syncobj ? 1 : 0, NULL), 0);
	qt_cb_free(cb);
}

/* Submit: copy @src to @dst (both whole, SZ bytes) and wait. */
static void copy_wait(uint32_t ctx, uint32_t dst, uint32_t src)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind_flags(cb, 0, src, 0, SZ, 0);
	qgpu_cb_bind(cb, 1, dst, 0, SZ);
	qgpu_cb_copy(cb, 1, 0, 0, 0, SZ);
	qt_run(dev.fd, ctx, cb, 20);
	qt_cb_free(cb);
}

/*
 * A DMA buffer that waits for the CPU to write 1 into @gate, then uses
 * @h (written: fill with @value; read-only: checksum it into @gate + 64).
 */
static void gated(uint32_t ctx, uint32_t gate, uint32_t h, bool write,
		  uint32_t value, uint32_t syncobj)
{
	struct drm_qgpu_sync_entry out = { .handle = syncobj };
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind(cb, 0, gate, 0, 4096);
	qgpu_cb_bind_flags(cb, 1, h, 0, SZ, write ? QGPU_ALLOC_WRITE : 0);
	qgpu_cb_wait(cb, 0, 0, 1);
	if (write)
		qgpu_cb_fill(cb, 1, 0, SZ, value);
	else
		qgpu_cb_checksum(cb, 1, 0, SZ, 0, 64);
	igt_assert_eq(cb->error, 0);
	igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &out,
				  syncobj ? 1 : 0, NULL), 0);
	qt_cb_free(cb);
}

/*
 * Commit @h to visible VRAM and wait for the move (a CPU access waits for
 * moves), so that the DMA buffers below add no move of their own.
 */
static void settle(uint32_t h)
{
	volatile uint32_t *p;

	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	p = qt_map(dev.fd, h, SZ);
	(void)p[0];
	qt_unmap(dev.fd, h, (void *)p, SZ);
}

static bool signalled(uint32_t syncobj)
{
	return qgpu_syncobj_wait(dev.fd, syncobj, 0, 0) == 0;
}

static void assert_no_vram(uint32_t h, const char *what)
{
	uint32_t seg = qt_info(dev.fd, h).segment;

	igt_assert_f(seg == QGPU_SEG_APERTURE || seg == QGPU_SEG_SYSTEM,
		     "%s: in segment %u\n", what, seg);
}

static struct drm_qgpu_stats s0;
static uint32_t ctx;

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		vgem = open_vgem();
		igt_require_f(vgem >= 0, "no vgem device\n");
		ctx = qt_ctx(dev.fd);
		qt_stats(dev.fd, &s0);
	}

	igt_subtest("export-to-vgem") {
		uint32_t h, vh, sync;
		volatile uint32_t *vp;
		int fd;

		/* in VRAM, written by the GPU */
		h = qt_bo(dev.fd, SZ, VIS | APT, QGPU_GEM_CPU_ACCESS,
			  QGPU_SEG_VISIBLE);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
		fill(ctx, h, 0x5a5a0001, sync);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC | DRM_RDWR,
						 &fd), 0);
		/* vgem attaches: the content comes out of VRAM with it */
		igt_assert_eq(drmPrimeFDToHandle(vgem, fd, &vh), 0);
		assert_no_vram(h, "attached export");
		vp = vgem_map(vh, fd, SZ);
		igt_assert(poll_wait(fd, POLLIN, 20000));
		check_words(vp, SZ, 0x5a5a0001, "vgem reads qgpu's fill");
		/* vgem's CPU writes reach qgpu's DMA buffers */
		memset((void *)vp, 0x11, SZ);
		{
			uint32_t *rp, r = qt_result_buf(dev.fd, SZ, &rp);

			copy_wait(ctx, r, h);
			check_words(rp, SZ, 0x11111111, "qgpu reads vgem's write");
			qt_unmap(dev.fd, r, rp, SZ);
			qt_close(dev.fd, r);
		}
		/* and while vgem holds it, it stays out of VRAM */
		igt_assert_eq(qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -EBUSY);
		fill(ctx, h, 0x5a5a0002, sync);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sync, 0, 20 * SEC_NS), 0);
		assert_no_vram(h, "attached export after a submit");
		check_words(vp, SZ, 0x5a5a0002, "vgem sees the next fill");
		munmap((void *)vp, SZ);
		/* vgem lets go: VRAM is allowed again */
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_VISIBLE);
		close(fd);
		qgpu_syncobj_destroy(dev.fd, sync);
		qt_close(dev.fd, h);
	}

	igt_subtest("export-needs-the-aperture") {
		uint32_t h, vh;
		int fd;

		/* VRAM only: no segment holds the pages another device gets */
		h = qt_bo(dev.fd, SZ, VIS, QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(vgem, fd, &vh), -1);
		igt_assert_eq(errno, EINVAL);
		close(fd);
		qt_close(dev.fd, h);
	}

	igt_subtest("import-from-vgem") {
		uint32_t vh, h, h2, r, *rp;
		volatile uint32_t *vp;
		void *map;
		int fd;

		vh = vgem_bo(SZ, &map);
		vp = map;
		memset(map, 0x33, SZ);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h), 0);
		igt_assert_eq(qt_info(dev.fd, h).size, SZ);
		/* the same dma-buf again: the same object */
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h2), 0);
		igt_assert_eq(h2, h);
		/* qgpu reads it */
		r = qt_result_buf(dev.fd, SZ, &rp);
		copy_wait(ctx, r, h);
		check_words(rp, SZ, 0x33333333, "qgpu reads vgem's buffer");
		assert_no_vram(h, "import");
		/* and writes it */
		memset(rp, 0x44, SZ);
		copy_wait(ctx, h, r);
		check_words(vp, SZ, 0x44444444, "vgem reads qgpu's copy");
		/* never into VRAM: the exporter owns the memory */
		igt_assert_eq(qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_VISIBLE, NULL), -EINVAL);
		/* exporting it again gives back the exporter's dma-buf */
		{
			struct stat a, b;
			int fd2 = -1;

			igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC,
							 &fd2), 0);
			igt_assert_eq(fstat(fd, &a), 0);
			igt_assert_eq(fstat(fd2, &b), 0);
			igt_assert(a.st_ino == b.st_ino);
			close(fd2);
		}
		/* vgem lets go first; qgpu's object keeps the pages */
		munmap(map, SZ);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		close(fd);
		memset(rp, 0, SZ);
		copy_wait(ctx, r, h);
		check_words(rp, SZ, 0x44444444, "import outlives the exporter's handle");
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h), 0);
		qt_unmap(dev.fd, r, rp, SZ);
		qt_close(dev.fd, r);
	}

	igt_subtest("import-mapped-through-qgpu") {
		uint32_t vh, h, *qp;
		volatile uint32_t *vp;
		void *map;
		int fd;

		/* qgpu's CPU mapping of an import is the exporter's mapping */
		vh = vgem_bo(SZ, &map);
		vp = map;
		memset(map, 0x21, SZ);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC | DRM_RDWR,
						 &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h), 0);
		qp = qt_map(dev.fd, h, SZ);
		check_words(qp, SZ, 0x21212121, "qgpu's mapping of the import");
		qp[7] = 0xfeed;
		igt_assert_eq(vp[7], 0xfeed);
		assert_no_vram(h, "mapped import");
		qt_unmap(dev.fd, h, qp, SZ);
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h), 0);
		munmap(map, SZ);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		close(fd);
	}

	igt_subtest("import-under-vram-pressure") {
		uint64_t vram = qt_seg_usable(&dev, QGPU_SEG_VISIBLE);
		uint32_t vh, h, r, *rp, big[8], i, n = 0;
		void *map;
		int fd;

		vh = vgem_bo(SZ, &map);
		memset(map, 0x55, SZ);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h), 0);
		r = qt_result_buf(dev.fd, SZ, &rp);
		/* fill VRAM so that everything else is evicted in turn */
		for (i = 0; i < 8 && (i + 1) * (vram / 4) <= 2 * vram; i++, n++) {
			big[i] = qt_bo(dev.fd, vram / 4, VIS | APT, 0,
				       QGPU_SEG_VISIBLE);
			qt_reside(dev.fd, big[i], QGPU_RESIDE_MAKE_RESIDENT,
				  QGPU_SEG_VISIBLE);
			copy_wait(ctx, r, h);
			assert_no_vram(h, "import under pressure");
		}
		check_words(rp, SZ, 0x55555555, "import under pressure");
		for (i = 0; i < n; i++)
			qt_close(dev.fd, big[i]);
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h), 0);
		munmap(map, SZ);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		close(fd);
		qt_unmap(dev.fd, r, rp, SZ);
		qt_close(dev.fd, r);
	}

	igt_subtest("poll-and-sync-file-see-gpu-writes") {
		uint32_t gate, h, sync, *gp;
		int fd, sf;

		gate = qt_result_buf(dev.fd, 4096, &gp);
		h = qt_bo(dev.fd, SZ, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		settle(h);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		/* idle: readable and writable */
		igt_assert_eq(poll_now(fd, POLLIN | POLLOUT), POLLIN | POLLOUT);
		gated(ctx, gate, h, true, 0x77, sync);
		/* a write in flight: neither */
		igt_assert_eq(poll_now(fd, POLLIN | POLLOUT), 0);
		sf = export_sync_file(fd, DMA_BUF_SYNC_READ);
		igt_assert_eq(poll_now(sf, POLLIN), 0);
		usleep(100 * 1000);
		igt_assert_eq(poll_now(fd, POLLIN), 0);
		__atomic_store_n(&gp[0], 1, __ATOMIC_SEQ_CST);
		igt_assert(poll_wait(fd, POLLIN, 20000));
		igt_assert(poll_wait(sf, POLLIN, 20000));
		igt_assert(signalled(sync));
		close(sf);
		qgpu_syncobj_destroy(dev.fd, sync);
		close(fd);
		qt_close(dev.fd, h);
		qt_unmap(dev.fd, gate, gp, 4096);
		qt_close(dev.fd, gate);
	}

	igt_subtest("poll-sees-gpu-reads-as-reads") {
		uint32_t gate, h, sync, *gp;
		int fd, sf;

		gate = qt_result_buf(dev.fd, 4096, &gp);
		h = qt_bo(dev.fd, SZ, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		settle(h);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		gated(ctx, gate, h, false, 0, sync);
		/* a read in flight: readers need not wait, writers must */
		igt_assert_eq(poll_now(fd, POLLIN | POLLOUT), POLLIN);
		sf = export_sync_file(fd, DMA_BUF_SYNC_WRITE);
		igt_assert_eq(poll_now(sf, POLLIN), 0);
		__atomic_store_n(&gp[0], 1, __ATOMIC_SEQ_CST);
		igt_assert(poll_wait(fd, POLLOUT, 20000));
		igt_assert(poll_wait(sf, POLLIN, 20000));
		igt_assert(signalled(sync));
		close(sf);
		qgpu_syncobj_destroy(dev.fd, sync);
		close(fd);
		qt_close(dev.fd, h);
		qt_unmap(dev.fd, gate, gp, 4096);
		qt_close(dev.fd, gate);
	}

	igt_subtest("vgem-fence-holds-back-submit") {
		uint32_t vh, h, f, sync;
		volatile uint32_t *vp;
		void *map;
		int fd;

		vh = vgem_bo(SZ, &map);
		vp = map;
		memset(map, 0, SZ);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
		/* vgem "writes" it; qgpu's write must wait for that */
		f = vgem_fence(vh, true);
		fill(ctx, h, 0x99, sync);
		usleep(300 * 1000);
		igt_assert(!signalled(sync));
		igt_assert_eq(vp[0], 0);
		vgem_signal(f);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sync, 0, 20 * SEC_NS), 0);
		check_words(vp, SZ, 0x99, "after the vgem fence");
		/* a vgem read does not hold back a qgpu read */
		{
			uint32_t r, *rp;

			f = vgem_fence(vh, false);
			r = qt_result_buf(dev.fd, SZ, &rp);
			copy_wait(ctx, r, h);
			check_words(rp, SZ, 0x99, "read beside a vgem read");
			vgem_signal(f);
			qt_unmap(dev.fd, r, rp, SZ);
			qt_close(dev.fd, r);
		}
		qgpu_syncobj_destroy(dev.fd, sync);
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h), 0);
		munmap(map, SZ);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		close(fd);
	}

	igt_subtest("imported-sync-file-holds-back-submit") {
		struct dma_buf_import_sync_file imp = { 0 };
		uint32_t vh, f, h, sync, *p;
		int vfd, fd;

		/* a pending fence from vgem, as a sync_file */
		vh = vgem_bo(4096, NULL);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &vfd), 0);
		f = vgem_fence(vh, true);
		imp.fd = export_sync_file(vfd, DMA_BUF_SYNC_READ);
		/* ... imported into a qgpu allocation's dma-buf as a write */
		h = qt_bo(dev.fd, SZ, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		p = qt_map(dev.fd, h, SZ);
		memset(p, 0, SZ);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		imp.flags = DMA_BUF_SYNC_WRITE;
		igt_assert_eq(ioctl(fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp), 0);
		close(imp.fd);
		/* holds back a qgpu DMA buffer that reads the allocation */
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
		{
			struct drm_qgpu_sync_entry out = { .handle = sync };
			struct qgpu_cb *cb = qt_cb(&dev);

			qgpu_cb_bind_flags(cb, 0, h, 0, SZ, 0);
			qgpu_cb_fence(cb, 0, 0, 0x1234);
			igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0,
						  &out, 1, NULL), 0);
			qt_cb_free(cb);
		}
		usleep(300 * 1000);
		igt_assert(!signalled(sync));
		igt_assert_eq(p[0], 0);
		vgem_signal(f);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sync, 0, 20 * SEC_NS), 0);
		igt_assert_eq(p[0], 0x1234);
		qgpu_syncobj_destroy(dev.fd, sync);
		close(fd);
		qt_unmap(dev.fd, h, p, SZ);
		qt_close(dev.fd, h);
		close(vfd);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
	}

	igt_subtest("foreign-fence-never-stalls-paging") {
		struct dma_buf_import_sync_file imp = { 0 };
		uint32_t vh, f, h, o, octx, *op;
		int vfd, fd, other;

		/* a fence vgem signals only when told (or after 10 s) ... */
		vh = vgem_bo(4096, NULL);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &vfd), 0);
		f = vgem_fence(vh, true);
		imp.fd = export_sync_file(vfd, DMA_BUF_SYNC_READ);
		/* ... put into a qgpu allocation's dma-buf, which then moves */
		h = qt_bo(dev.fd, SZ, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		imp.flags = DMA_BUF_SYNC_WRITE;
		igt_assert_eq(ioctl(fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp), 0);
		close(imp.fd);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		/*
		 * Another process's paging and DMA buffers run meanwhile: the
		 * shared paging engine never waits for a fence it does not own.
		 */
		other = qt_reopen(&dev);
		octx = 0;
		igt_assert_eq(qgpu_ctx_create(other, &octx), 0);
		o = qt_bo(other, SZ, VIS, QGPU_GEM_CPU_ACCESS, 0);
		{
			struct qgpu_cb *cb = qt_cb(&dev);

			qgpu_cb_bind(cb, 0, o, 0, SZ);
			qgpu_cb_fill(cb, 0, 0, SZ, 0x2468);
			qt_run(other, octx, cb, 8);
			qt_cb_free(cb);
		}
		op = qt_map(other, o, SZ);
		check_words(op, SZ, 0x2468, "the other process's fill");
		/* the fence is still pending: it had not timed out meanwhile */
		vgem_signal(f);
		qt_unmap(other, o, op, SZ);
		qt_close(other, o);
		igt_assert_eq(qgpu_ctx_destroy(other, octx), 0);
		close(other);
		close(fd);
		qt_close(dev.fd, h);
		close(vfd);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
	}

	igt_subtest("close-everything-with-work-in-flight") {
		uint32_t gate, *gp, vh, h, q, sync;
		void *map;
		int fd, qfd;

		/* a qgpu export held by vgem, and a vgem import in qgpu */
		gate = qt_result_buf(dev.fd, 4096, &gp);
		vh = vgem_bo(SZ, &map);
		igt_assert_eq(drmPrimeHandleToFD(vgem, vh, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(dev.fd, fd, &h), 0);
		q = qt_bo(dev.fd, SZ, VIS | APT, 0, 0);
		igt_assert_eq(drmPrimeHandleToFD(dev.fd, q, DRM_CLOEXEC, &qfd), 0);
		{
			uint32_t qv;

			igt_assert_eq(drmPrimeFDToHandle(vgem, qfd, &qv), 0);
			igt_assert_eq(qgpu_syncobj_create(dev.fd, &sync), 0);
			gated(ctx, gate, h, true, 0xabc, 0);
			gated(ctx, gate, q, true, 0xdef, sync);
			/* every handle and fd goes while the GPU waits */
			igt_assert_eq(drmCloseBufferHandle(vgem, qv), 0);
		}
		igt_assert_eq(drmCloseBufferHandle(dev.fd, h), 0);
		qt_close(dev.fd, q);
		close(qfd);
		close(fd);
		__atomic_store_n(&gp[0], 1, __ATOMIC_SEQ_CST);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sync, 0, 20 * SEC_NS), 0);
		/* the vgem buffer got the write, after qgpu let go */
		check_words(map, SZ, 0xabc, "write to a closed import");
		munmap(map, SZ);
		igt_assert_eq(drmCloseBufferHandle(vgem, vh), 0);
		qgpu_syncobj_destroy(dev.fd, sync);
		qt_unmap(dev.fd, gate, gp, 4096);
		qt_close(dev.fd, gate);
	}

	igt_subtest("no-leaks") {
		struct drm_qgpu_stats s1;
		int i;

		/* deferred destruction: give the reaper a moment */
		for (i = 0; i < 100; i++) {
			qt_stats(dev.fd, &s1);
			if (s1.allocations == s0.allocations)
				break;
			usleep(50 * 1000);
		}
		igt_assert_eq_u64(s1.allocations, s0.allocations);
		igt_assert_eq_u64(s1.allocated_bytes, s0.allocated_bytes);
	}

	igt_fixture {
		if (ctx)
			qgpu_ctx_destroy(dev.fd, ctx);
		if (vgem >= 0)
			close(vgem);
	}
}
