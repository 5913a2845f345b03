// SPDX-License-Identifier: MIT
/*
 * qgpu_lost: an engine that stops answering.
 *
 * The device stalls an engine on demand (CTRL.STALL, docs/hw-spec.md
 * section 4.3, through debugfs qgpu_stall). A render engine's hang costs
 * the guilty context only: the engine is reset after the job timeout, the
 * innocent context's job runs again and completes. A paging engine's hang
 * loses the device ("qgpu device lost" in the UAPI header): a move that
 * never happened must not be taken for done, so every context is lost, no
 * job reaches the device, CPU mappings of allocations fault, new contexts
 * are refused; monitored-fence pages stay readable, closing works, and
 * binding the device again starts afresh.
 *
 * Runs as root in the VM, in a group of its own (it unbinds the device).
 */
#include <glob.h>

#include "qgpu_test.h"
#include "qgpu_rebind.h"

static char addr[256];	/* PCI address of the device, found at start */

/* Write @what to the device's debugfs qgpu_stall: 0 or -errno */
static int stall_write(const char *what)
{
	glob_t g;
	ssize_t n;
	int fd;

	/* one device: its minors' directories name the same files */
	igt_require(!glob("/sys/kernel/debug/dri/*/qgpu_stall", 0, NULL, &g));
	fd = open(g.gl_pathv[0], O_WRONLY);
	globfree(&g);
	igt_assert(fd >= 0);
	n = write(fd, what, strlen(what));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static void stall(const char *what)
{
	igt_assert_eq(stall_write(what), 0);
}

static struct drm_qgpu_stats stats(int fd)
{
	struct drm_qgpu_stats st;

	igt_assert_eq(qgpu_query_stats(fd, &st, NULL, 0, NULL), 0);
	return st;
}

static uint32_t ctx_state(int fd, uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	return cs.state;
}

/* Submit a DMA buffer writing @value at word 0 of @h; out-sync returned */
static uint32_t write_word(struct qgpu_dev *dev, uint32_t ctx, uint32_t h,
			   uint64_t value)
{
	struct drm_qgpu_sync_entry out = { 0 };
	struct qgpu_cb *cb = qt_cb(dev);

	igt_assert_eq(qgpu_syncobj_create(dev->fd, &out.handle), 0);
	qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fence(cb, 0, 0, value);
	igt_assert_eq(qgpu_submit(dev->fd, ctx, cb, NULL, 0, &out, 1, NULL), 0);
	qt_cb_free(cb);
	return out.handle;
}

/* Names it does not know, nothing, too long: EINVAL, nothing stalled */
static void stall_bad_input(void)
{
	struct qgpu_dev dev;
	uint32_t ctx, h, s;

	igt_assert_eq(stall_write("bogus"), -EINVAL);
	igt_assert_eq(stall_write(""), -EINVAL);
	igt_assert_eq(stall_write("render-and-more-than-16"), -EINVAL);
	igt_assert_eq(stall_write("Render"), -EINVAL);
	/* the engines still answer */
	qt_open(&dev, QGPU_NODE_RENDER);
	ctx = qt_ctx(dev.fd);
	h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
		  QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
	s = write_word(&dev, ctx, h, 1);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, s, 0, 5 * SEC_NS), 0);
	igt_assert_eq(ctx_state(dev.fd, ctx), QGPU_CTX_OK);
	qgpu_close(&dev);
}

/* Unmap and destroy @h (whatever state the device is in) */
static void forget(struct qgpu_dev *dev, uint32_t h, void *p, uint64_t size)
{
	qt_untrack(dev->fd, h, p);
	qt_untrack(dev->fd, h, NULL);
	munmap(p, size);
	qgpu_bo_destroy(dev->fd, h);
}

static void render_hang_costs_its_context(void)
{
	const uint64_t size = 64 * 1024;
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			QGPU_SEGBIT(QGPU_SEG_APERTURE);
	struct drm_qgpu_stats before, after;
	struct qgpu_dev dev;
	uint32_t a, b, x, y, sa, sb;
	uint64_t *px, *py;

	qt_open(&dev, QGPU_NODE_RENDER);
	a = qt_ctx(dev.fd);
	b = qt_ctx(dev.fd);
	x = qt_bo(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS, 0);
	y = qt_bo(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS, 0);
	px = qt_map(dev.fd, x, size);
	py = qt_map(dev.fd, y, size);
	before = stats(dev.fd);
	stall("render");
	sa = write_word(&dev, a, x, 0xa);
	sb = write_word(&dev, b, y, 0xb);
	/* the timeout resets the engine (which ends the stall) */
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb, 0, 20 * SEC_NS), 0);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sa, 0, 5 * SEC_NS), 0);
	igt_assert_eq(ctx_state(dev.fd, a), QGPU_CTX_LOST_HANG);
	igt_assert_eq(ctx_state(dev.fd, b), QGPU_CTX_OK);
	igt_assert_eq(py[0], 0xb);
	igt_assert_eq(px[0], 0);
	after = stats(dev.fd);
	igt_assert_lt(before.resets, after.resets);
	igt_assert_eq(after.device_lost, 0);
	/* the device goes on */
	sb = write_word(&dev, b, y, 0xbb);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb, 0, 5 * SEC_NS), 0);
	igt_assert_eq(py[0], 0xbb);
	forget(&dev, x, px, size);
	forget(&dev, y, py, size);
	qgpu_close(&dev);
}

static void paging_hang_loses_the_device(void)
{
	const uint64_t size = 64 * 1024;
	struct drm_qgpu_stats st;
	struct qgpu_mfence mf;
	struct qgpu_dev dev;
	uint32_t b, c, x, sb, ctx;
	uint64_t *px;

	igt_require(geteuid() == 0 && addr[0]);
	qt_open(&dev, QGPU_NODE_RENDER);
	b = qt_ctx(dev.fd);
	c = qt_ctx(dev.fd);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 5, &mf), 0);
	/* in system memory, written by the CPU; its first use moves it */
	x = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
		  QGPU_GEM_CPU_ACCESS, 0);
	px = qt_map(dev.fd, x, size);
	px[0] = 0x1234;
	igt_assert_eq(qt_info(dev.fd, x).segment, QGPU_SEG_SYSTEM);
	igt_expect_dmesg("device lost: a paging job");
	stall("paging");
	sb = write_word(&dev, b, x, 0xb);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb, 0, 20 * SEC_NS), 0);
	st = stats(dev.fd);
	igt_assert_eq(st.device_lost, 1);
	igt_assert_eq(ctx_state(dev.fd, b), QGPU_CTX_LOST_DEVICE);
	igt_assert_eq(ctx_state(dev.fd, c), QGPU_CTX_LOST_DEVICE);
	/* nothing more reaches the device */
	{
		struct qgpu_cb *cb = qt_cb(&dev);

		qgpu_cb_nop(cb, 1);
		igt_assert_eq(qgpu_submit(dev.fd, c, cb, NULL, 0, NULL, 0,
					  NULL), -ECANCELED);
		qt_cb_free(cb);
	}
	igt_assert_eq(qgpu_ctx_create(dev.fd, &ctx), -EIO);
	/* the allocation's mapping faults; the fence page does not */
	igt_assert_eq(poke((volatile uint32_t *)px), SIGBUS);
	igt_assert_eq(qgpu_mfence_read(&mf), 5);
	/* a file opened now sees it lost too */
	{
		struct qgpu_dev dev2;

		qt_open(&dev2, QGPU_NODE_RENDER);
		igt_assert_eq(stats(dev2.fd).device_lost, 1);
		igt_assert_eq(qgpu_ctx_create(dev2.fd, &ctx), -EIO);
		qgpu_close(&dev2);
	}
	/* closing works */
	forget(&dev, x, px, size);
	qgpu_mfence_destroy(&mf);
	qgpu_close(&dev);

	/* bound again: a new device */
	igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/unbind", addr));
	igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/bind", addr));
	wait_device(&dev);
	igt_assert_eq(stats(dev.fd).device_lost, 0);
	b = qt_ctx(dev.fd);
	x = qt_bo(dev.fd, size, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
		  QGPU_GEM_CPU_ACCESS, 0);
	px = qt_map(dev.fd, x, size);
	sb = write_word(&dev, b, x, 0x600d);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb, 0, 10 * SEC_NS), 0);
	igt_assert_eq(ctx_state(dev.fd, b), QGPU_CTX_OK);
	igt_assert_eq(px[0], 0x600d);
	forget(&dev, x, px, size);
	qgpu_close(&dev);
}

igt_main
{
	igt_fixture
		device_addr(addr, sizeof(addr));

	igt_subtest("stall-bad-input")
		stall_bad_input();

	igt_subtest("render-hang-costs-its-context")
		render_hang_costs_its_context();

	/* last: it leaves the device bound again, but a new one */
	igt_subtest("paging-hang-loses-the-device")
		paging_hang_loses_the_device();
}
