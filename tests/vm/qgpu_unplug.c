// SPDX-License-Identifier: MIT
/*
 * qgpu_unplug: the device goes away under open files and mappings.
 *
 * Unbind the driver through sysfs (and PCI remove/rescan) while a file is
 * open, allocations are mapped in every kind of memory (visible VRAM via
 * BAR2, non-visible VRAM via the host aperture, the GART aperture, system
 * pages) and work may be in flight, and a primary-node file holds a
 * mapped dumb buffer, a mapping whose handle is closed and a dma-buf.
 * Afterwards the old files' ioctls (qgpu's and DRM core's) fail with
 * ENODEV, touching an old mapping raises SIGBUS (the driver zaps every
 * CPU mapping on removal and its fault handler refuses a gone device),
 * closing works, and the device bound again works. And ioctls already
 * inside the driver when the unbind comes (waiting for the memory
 * manager's lock) must not reach what the removal tore down.
 *
 * Runs as root in the VM; best in a group of its own.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/sync_file.h>

#include "qgpu_test.h"
#include "qgpu_rebind.h"

static char addr[256];	/* PCI address of the device, found at start */
/* One allocation per kind of CPU path, mapped and patterned. */
struct victim {
	uint32_t h;
	uint32_t *p;
	uint64_t size;
	const char *what;
};

static int make_victims(struct qgpu_dev *dev, struct victim *v)
{
	uint32_t all = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
		       QGPU_SEGBIT(QGPU_SEG_APERTURE);
	struct {
		const char *what;
		uint32_t seg;
	} kinds[] = {
		{ "visible VRAM (BAR2)", QGPU_SEG_VISIBLE },
		{ "non-visible VRAM (host aperture)", QGPU_SEG_LOCAL },
		{ "GART aperture", QGPU_SEG_APERTURE },
		{ "system memory", QGPU_SEG_SYSTEM },
	};
	int n = 0, i;

	if (qgpu_dev_segment(dev, QGPU_SEG_LOCAL))
		all |= QGPU_SEGBIT(QGPU_SEG_LOCAL);
	for (i = 0; i < (int)ARRAY_SIZE(kinds); i++) {
		if (kinds[i].seg == QGPU_SEG_LOCAL &&
		    (!qgpu_dev_segment(dev, QGPU_SEG_LOCAL) ||
		     !dev->info.host_aperture_size))
			continue;
		v[n].size = 64 * 1024;
		v[n].what = kinds[i].what;
		v[n].h = qt_bo(dev->fd, v[n].size, all, QGPU_GEM_CPU_ACCESS, 0);
		if (kinds[i].seg != QGPU_SEG_SYSTEM)
			qt_reside(dev->fd, v[n].h, QGPU_RESIDE_MAKE_RESIDENT,
				  kinds[i].seg);
		v[n].p = qt_map(dev->fd, v[n].h, v[n].size);
		qgpu_pattern_fill(v[n].p, v[n].size, 40 + i);
		igt_assert_eq(qt_info(dev->fd, v[n].h).segment, kinds[i].seg);
		/* managed here: they must outlive other subtests' clean-up */
		qt_untrack(dev->fd, v[n].h, v[n].p);
		qt_untrack(dev->fd, v[n].h, NULL);
		n++;
	}
	return n;
}

/* DRM core's ioctls on a gone device's file: ENODEV too. */
static void check_old_fd_core(int fd, uint32_t h)
{
	struct drm_prime_handle ph = { .handle = h, .flags = DRM_CLOEXEC };
	struct drm_syncobj_create sc = { 0 };
	struct drm_gem_close gc = { .handle = h };
	struct drm_get_cap cap = { .capability = DRM_CAP_PRIME };
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	do_ioctl_err(fd, DRM_IOCTL_VERSION, &v, ENODEV);
	do_ioctl_err(fd, DRM_IOCTL_GET_CAP, &cap, ENODEV);
	do_ioctl_err(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph, ENODEV);
	do_ioctl_err(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc, ENODEV);
	do_ioctl_err(fd, DRM_IOCTL_GEM_CLOSE, &gc, ENODEV);
}

/*
 * A primary-node client: a mapped dumb buffer, a second one mapped with
 * its handle already closed, and a dma-buf of the first.
 */
struct card_client {
	int fd, dmabuf;
	uint32_t h;
	uint32_t *p, *orphan;
	uint64_t size;
};

static void card_client_open(struct card_client *c)
{
	char path[64];
	uint64_t off;
	uint32_t h2;

	igt_assert_eq(qgpu_find_node(QGPU_NODE_PRIMARY, 0, path,
				     sizeof(path)), 0);
	c->fd = open(path, O_RDWR | O_CLOEXEC);
	igt_assert(c->fd >= 0);
	igt_assert_eq(qgpu_dumb_create(c->fd, 256, 64, 32, &c->h, NULL,
				       &c->size), 0);
	igt_assert_eq(qgpu_dumb_map_offset(c->fd, c->h, &off), 0);
	c->p = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		    off);
	igt_assert(c->p != MAP_FAILED);
	qgpu_pattern_fill(c->p, c->size, 77);
	igt_assert_eq(qgpu_dumb_create(c->fd, 256, 64, 32, &h2, NULL, NULL),
		      0);
	igt_assert_eq(qgpu_dumb_map_offset(c->fd, h2, &off), 0);
	c->orphan = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 c->fd, off);
	igt_assert(c->orphan != MAP_FAILED);
	qgpu_pattern_fill(c->orphan, c->size, 78);
	igt_assert_eq(qgpu_dumb_destroy(c->fd, h2), 0);
	qt_check_pattern(c->orphan, c->size, 78, "mapping without a handle");
	igt_assert_eq(drmPrimeHandleToFD(c->fd, c->h, DRM_CLOEXEC,
					 &c->dmabuf), 0);
}

/* After the unplug: ENODEV, SIGBUS on both mappings, close works. */
static void card_client_check(struct card_client *c)
{
	uint32_t h;
	int sig;

	check_old_fd_core(c->fd, c->h);
	igt_assert_eq(qgpu_dumb_create(c->fd, 16, 16, 32, &h, NULL, NULL),
		      -ENODEV);
	sig = poke(c->p);
	igt_assert_f(sig == SIGBUS, "old dumb mapping: %s\n",
		     sig ? strsignal(sig) : "still accessible");
	sig = poke(c->orphan);
	igt_assert_f(sig == SIGBUS, "old mapping without a handle: %s\n",
		     sig ? strsignal(sig) : "still accessible");
	/* the dma-buf still tells its size */
	igt_assert_eq(lseek(c->dmabuf, 0, SEEK_END), (off_t)c->size);
	igt_assert_eq(munmap(c->p, c->size), 0);
	igt_assert_eq(munmap(c->orphan, c->size), 0);
	igt_assert_eq(close(c->dmabuf), 0);
	igt_assert_eq(close(c->fd), 0);
}

/* The gone device's file: every ioctl says ENODEV. */
static void check_old_fd(int fd, uint32_t h, uint32_t ctx)
{
	struct drm_qgpu_device_info info;
	struct drm_qgpu_gem_info gi;
	struct qgpu_cb cb;
	uint32_t nh;
	uint64_t off;
	void *p;

	igt_assert_eq(qgpu_query_device(fd, &info), -ENODEV);
	igt_assert_eq(qgpu_bo_create(fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				     0, 0, &nh), -ENODEV);
	igt_assert_eq(qgpu_bo_info(fd, h, &gi), -ENODEV);
	igt_assert_eq(qgpu_bo_lock(fd, h, &off), -ENODEV);
	igt_assert_eq(qgpu_bo_reside(fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0,
				     NULL), -ENODEV);
	igt_assert_eq(qgpu_ctx_create(fd, &nh), -ENODEV);
	/* the PING doorbell of a gone device: no wait for an answer */
	igt_assert_eq(qgpu_ping(fd, &off), -ENODEV);
	igt_assert_eq(qgpu_cb_init(&cb, 8), 0);
	qgpu_cb_bind(&cb, 0, h, 0, 4096);
	qgpu_cb_fence(&cb, 0, 0, 1);
	igt_assert_eq(qgpu_submit(fd, ctx, &cb, NULL, 0, NULL, 0, NULL),
		      -ENODEV);
	qgpu_cb_fini(&cb);
	/* no new mappings either */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0x100000000ull);
	igt_assert(p == MAP_FAILED);
	check_old_fd_core(fd, h);
}

static void poke_victims(struct victim *v, int n)
{
	int i, sig;

	for (i = 0; i < n; i++) {
		sig = poke(v[i].p);
		igt_info("old mapping of %s: %s\n", v[i].what,
			 sig ? strsignal(sig) : "still readable");
		/*
		 * qgpu_remove() zaps every CPU mapping and the fault handler
		 * answers SIGBUS once the device is gone (drm_dev_enter()
		 * fails): never still accessible, never SIGSEGV.
		 */
		igt_assert_f(sig == SIGBUS, "old mapping of %s: %s\n",
			     v[i].what, sig ? strsignal(sig) : "still accessible");
	}
}

/* The device as found after it came back: it works. */
static void check_new_device(void)
{
	struct qgpu_dev dev;
	struct victim v[4];
	struct qgpu_cb *cb;
	uint32_t ctx;
	int n, i;

	wait_device(&dev);
	ctx = qt_ctx(dev.fd);
	n = make_victims(&dev, v);
	cb = qt_cb(&dev);
	for (i = 0; i < n; i++) {
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 0, v[i].h, 0, QGPU_CB_WHOLE);
		qgpu_cb_fence(cb, 0, 8, 0x600d);
		qt_run(dev.fd, ctx, cb, 10);
		igt_assert_eq(v[i].p[2], 0x600d);
		igt_assert_eq(v[i].p[3], 0);
		igt_assert_eq(qgpu_bo_unmap(dev.fd, v[i].h, v[i].p, v[i].size),
			      0);
		igt_assert_eq(qgpu_bo_destroy(dev.fd, v[i].h), 0);
	}
	qt_cb_free(cb);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_assert_no_allocations(dev.fd);
	qgpu_close(&dev);
}

/* If an earlier subtest failed half-way, bring the device back. */
static void ensure_bound(void)
{
	char path[64];

	if (!qgpu_find_node(QGPU_NODE_RENDER, 0, path, sizeof(path)))
		return;
	sysfs_write("/sys/bus/pci/rescan", "1");
	sysfs_write("/sys/bus/pci/drivers/qgpu/bind", addr);
	usleep(500000);
}

/*
 * Close the gone device's file (releasing its allocations). Nothing is
 * left to wait for, so this must not block: a release that waits for
 * fences of the dead device would hang every process that exits.
 */
static void close_old(struct qgpu_dev *dev, struct victim *v, int n)
{
	int64_t t0;
	int i;

	for (i = 0; i < n; i++)
		munmap(v[i].p, v[i].size);
	t0 = qgpu_now_ns();
	qgpu_close(dev);
	t0 = qgpu_now_ns() - t0;
	igt_info("closing the old file took %.3f s\n", t0 / 1e9);
	igt_assert_f(t0 < 5 * SEC_NS,
		     "closing the unplugged device's file blocked for %.1f s\n",
		     t0 / 1e9);
}

static void unplug_test(bool remove, bool close_first, bool in_flight)
{
	char path[512];
	struct drm_qgpu_sync_entry out = { 0 };
	struct card_client cc;
	struct qgpu_dev dev;
	struct victim v[4];
	struct qgpu_cb *cb = NULL;
	struct pollfd pfd;
	int sync_fd = -1;
	uint32_t ctx;
	int n;

	igt_require(geteuid() == 0 && addr[0]);
	ensure_bound();
	qt_open(&dev, QGPU_NODE_RENDER);
	igt_require(access("/sys/bus/pci/drivers/qgpu/unbind", W_OK) == 0);
	ctx = qt_ctx(dev.fd);
	n = make_victims(&dev, v);
	card_client_open(&cc);
	if (in_flight) {
		/* work that can never finish by itself */
		cb = qt_cb(&dev);
		v[0].p[0] = v[0].p[1] = 0;
		qgpu_cb_bind(cb, 0, v[0].h, 0, 4096);
		qgpu_cb_wait(cb, 0, 0, ~0ull);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &out.handle), 0);
		igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &out, 1,
					  NULL), 0);
		/* a sync file outlives the device's ioctls */
		igt_assert_eq(drmSyncobjExportSyncFile(dev.fd, out.handle,
						       &sync_fd), 0);
		usleep(100000);
		pfd.fd = sync_fd;
		pfd.events = POLLIN;
		igt_assert_eq(poll(&pfd, 1, 0), 0);
	}

	if (remove) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove",
			 addr);
		igt_assert(sysfs_write(path, "1"));
	} else {
		igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/unbind",
				       addr));
	}
	if (in_flight) {
		/* the fence of work that can no longer run signals */
		pfd.fd = sync_fd;
		pfd.events = POLLIN;
		igt_assert_f(poll(&pfd, 1, 10000) == 1,
			     "the in-flight job's fence did not signal after the unbind\n");
		close(sync_fd);
	}
	check_old_fd(dev.fd, v[0].h, ctx);
	poke_victims(v, n);
	if (close_first) {
		close_old(&dev, v, n);
		card_client_check(&cc);
	}

	if (remove)
		igt_assert(sysfs_write("/sys/bus/pci/rescan", "1"));
	else
		igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/bind", addr));
	check_new_device();

	if (!close_first) {
		/* the old file and mappings outlive the old device */
		poke_victims(v, n);
		check_old_fd(dev.fd, v[0].h, ctx);
		close_old(&dev, v, n);
		card_client_check(&cc);
	}
	if (cb)
		qt_cb_free(cb);
	/* and once more, with everything closed */
	check_new_device();
}

/*
 * Ioctls already inside the driver when the device goes. One thread's
 * MakeResident pins the system pages of a large new allocation, under the
 * memory manager's lock, for a good part of a second; meanwhile other
 * threads' GEM_RESIDE, MakeResident and virtual CTX_CREATE, past DRM
 * core's unplug check, wait for that lock, and the driver is unbound.
 * Each of them then queues paging (or a scheduler entity) on a device
 * whose schedulers are gone unless the removal waited for them. Whatever
 * they return, the old file must close at once (work queued on a gone
 * scheduler never ends: its allocations' release would wait for ever),
 * and the device must bind again and work.
 */
struct busy {
	int fd;
	uint32_t h;
	int op;
	volatile bool *stop;
	int ret;
	int64_t end_ns;
	unsigned long calls;
};

enum { BUSY_PIN, BUSY_RESIDE, BUSY_MAKE_RESIDENT, BUSY_CTX };

static void *busy_thread(void *arg)
{
	struct busy *b = arg;
	uint32_t ctx;
	int ret = 0;

	do {
		switch (b->op) {
		case BUSY_PIN:
			ret = qgpu_make_resident(b->fd, &b->h, 1, NULL);
			break;
		case BUSY_RESIDE:
			ret = qgpu_bo_reside(b->fd, b->h, b->calls & 1 ?
					     QGPU_RESIDE_EVICT_SYSTEM :
					     QGPU_RESIDE_MAKE_RESIDENT, 0,
					     NULL);
			break;
		case BUSY_MAKE_RESIDENT:
			ret = b->calls & 1 ?
			      qgpu_evict(b->fd, &b->h, 1, NULL) :
			      qgpu_make_resident(b->fd, &b->h, 1, NULL);
			break;
		case BUSY_CTX:
			ret = qgpu_ctx_create_virtual(b->fd, &ctx);
			if (!ret)
				qgpu_ctx_destroy(b->fd, ctx);
			break;
		}
		b->calls++;
	} while (b->op != BUSY_PIN && ret != -ENODEV && !*b->stop);
	b->ret = ret;
	b->end_ns = qgpu_now_ns();
	return NULL;
}

static volatile bool closed;

static void *close_thread(void *arg)
{
	qgpu_close(arg);
	closed = true;
	return NULL;
}

/* Pin a new allocation of @size by MakeResident; how long the call took */
static int64_t pin_time(struct qgpu_dev *dev, uint64_t size)
{
	uint32_t h;
	int64_t t;

	igt_assert_eq(qgpu_bo_create(dev->fd, size, qt_vram_mask(dev) |
				     QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0,
				     &h), 0);
	t = qgpu_now_ns();
	igt_assert_eq(qgpu_make_resident(dev->fd, &h, 1, NULL), 0);
	t = qgpu_now_ns() - t;
	igt_assert_eq(qgpu_bo_destroy(dev->fd, h), 0);
	return t;
}

/* One try; returns whether the unbind came while the pin held the lock. */
static bool unbind_under_ioctls_once(void)
{
	const uint64_t big = 192 * MiB;
	volatile bool stop = false;
	struct busy b[7];
	pthread_t th[7], closer;
	struct qgpu_dev dev;
	int64_t pin_ns, unbind_ns;
	uint32_t h[3];
	int i, n = 0;

	igt_require(geteuid() == 0 && addr[0]);
	ensure_bound();
	qt_open(&dev, QGPU_NODE_RENDER);
	igt_require(access("/sys/bus/pci/drivers/qgpu/unbind", W_OK) == 0);
	igt_require(dev.info.caps & QGPU_INFO_CAP_MMU);
	pin_ns = pin_time(&dev, big);
	igt_info("pinning %llu MiB took %.3f s\n",
		 (unsigned long long)(big / MiB), pin_ns / 1e9);
	igt_require_f(pin_ns > 200000000ll,
		      "pinning is too fast to hold the lock through an unbind\n");

	for (i = 0; i < 3; i++) {
		igt_assert_eq(qgpu_bo_create(dev.fd, i ? 64 * 1024 : big,
					     qt_vram_mask(&dev) |
					     QGPU_SEGBIT(QGPU_SEG_APERTURE),
					     0, 0, &h[i]), 0);
	}
	/* the address space and its tables exist before */
	igt_assert_eq(qgpu_make_resident(dev.fd, &h[1], 1, NULL), 0);
	igt_assert_eq(qgpu_make_resident(dev.fd, &h[2], 1, NULL), 0);

	b[n++] = (struct busy){ .fd = dev.fd, .h = h[0], .op = BUSY_PIN,
				.stop = &stop };
	for (i = 0; i < 2; i++)
		b[n++] = (struct busy){ .fd = dev.fd, .h = h[1],
					.op = BUSY_RESIDE, .stop = &stop };
	for (i = 0; i < 2; i++)
		b[n++] = (struct busy){ .fd = dev.fd, .h = h[2],
					.op = BUSY_MAKE_RESIDENT,
					.stop = &stop };
	for (i = 0; i < 2; i++)
		b[n++] = (struct busy){ .fd = dev.fd, .op = BUSY_CTX,
					.stop = &stop };
	igt_assert_eq(pthread_create(&th[0], NULL, busy_thread, &b[0]), 0);
	usleep(pin_ns / 10000);
	for (i = 1; i < n; i++)
		igt_assert_eq(pthread_create(&th[i], NULL, busy_thread, &b[i]),
			      0);
	usleep(pin_ns / 10000);
	unbind_ns = qgpu_now_ns();
	igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/unbind", addr));
	igt_info("unbind took %.3f s\n", (qgpu_now_ns() - unbind_ns) / 1e9);
	stop = true;
	for (i = 0; i < n; i++) {
		igt_assert_eq(pthread_join(th[i], NULL), 0);
		igt_info("thread %d (op %d): %lu calls, last %s\n", i,
			 b[i].op, b[i].calls, strerror(-b[i].ret));
	}
	closed = false;
	igt_assert_eq(pthread_create(&closer, NULL, close_thread, &dev), 0);
	for (i = 0; i < 100 && !closed; i++)
		usleep(100000);
	igt_assert_f(closed,
		     "closing the unplugged device's file blocked for 10 s\n");
	igt_assert_eq(pthread_join(closer, NULL), 0);
	igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/bind", addr));
	check_new_device();
	/* the window was there: the pin still held the lock at the unbind */
	return b[0].end_ns > unbind_ns;
}

/*
 * The unbind must come while the pin holds the lock; on a busy host the
 * pin may end first (scheduling, not the driver): try again, three times.
 */
static void unbind_under_ioctls(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (unbind_under_ioctls_once())
			return;
		igt_info("the pinning MakeResident returned before the unbind: again\n");
	}
	igt_assert_f(0, "three times the pinning MakeResident returned before the unbind\n");
}

/* Load qgpu.ko again as the guest's init did (/etc/qgpu/modules). */
static void reload_qgpu(void)
{
	char line[512], path[768];
	struct utsname u;
	bool done = false;
	FILE *f;
	int fd;

	igt_assert(!uname(&u));
	f = fopen("/etc/qgpu/modules", "r");
	igt_assert(f);
	while (!done && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strstr(line, "qgpu.ko"))
			continue;
		snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release,
			 line);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		igt_assert_f(fd >= 0, "%s: %s\n", path, strerror(errno));
		igt_assert_f(!syscall(SYS_finit_module, fd, "", 0),
			     "loading %s: %s\n", path, strerror(errno));
		close(fd);
		done = true;
	}
	fclose(f);
	igt_assert_f(done, "no qgpu.ko in /etc/qgpu/modules\n");
}

/* The driver name of the one fence of a sync file */
/* The driver (@timeline 0) or timeline name of sync file @fd's fence */
static void sync_file_name(int fd, bool timeline, char *name, size_t len)
{
	struct sync_fence_info fi;
	struct sync_file_info info = { .num_fences = 1 };

	memset(&fi, 0, sizeof(fi));
	info.sync_fence_info = (uintptr_t)&fi;
	igt_assert_eq(ioctl(fd, SYNC_IOC_FILE_INFO, &info), 0);
	snprintf(name, len, "%s", timeline ? fi.obj_name : fi.driver_name);
}

struct unloader {
	pthread_t th;
	volatile bool done;
	int ret;
};

static void *unload_thread(void *arg)
{
	struct unloader *u = arg;

	u->ret = syscall(SYS_delete_module, "qgpu", O_NONBLOCK) ? errno : 0;
	u->done = true;
	return NULL;
}

/* Wait up to @ms for the unloader; true when it returned */
static bool unloader_wait(struct unloader *u, int ms)
{
	for (; ms > 0 && !u->done; ms -= 50)
		usleep(50000);
	return u->done;
}

/* The unload completes within 20 s; then qgpu is loaded again and works */
static void unloaded_reload(struct unloader *u, const char *when)
{
	igt_assert_f(unloader_wait(u, 20000),
		     "unloading qgpu %s did not complete in 20 s\n", when);
	pthread_join(u->th, NULL);
	igt_assert_f(!u->ret, "delete_module: %s\n", strerror(u->ret));
	reload_qgpu();
	check_new_device();
}

/*
 * A qgpu fence outlives the device's files and the device itself (a sync
 * file, another driver's reservation object), and its callbacks are the
 * module's code: while one is held, the module's unload waits, and the
 * fence still answers. Two kinds here: a monitored fence's (exported into
 * a syncobj, MFENCE_EXPORT) and a job's (its scheduler fence holds the
 * engine's hardware fence). Once both are closed the unload completes,
 * and the module loads again.
 */
static void fences_hold_module(void)
{
	struct drm_qgpu_sync_entry out = { 0 };
	struct drm_qgpu_mfence_export x = { 0 };
	struct unloader u = { 0 };
	struct qgpu_mfence mf;
	struct qgpu_dev dev;
	struct qgpu_cb *cb;
	int mf_fd = -1, job_fd = -1;
	uint32_t ctx, h, syncobj;
	char name[64];

	igt_require(geteuid() == 0 && addr[0]);
	ensure_bound();
	qt_open(&dev, QGPU_NODE_RENDER);
	igt_assert_eq(qgpu_mfence_create(dev.fd, 0, &mf), 0);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &syncobj), 0);
	x.handle = mf.handle;
	x.syncobj = syncobj;
	igt_assert_eq(ioctl(dev.fd, DRM_IOCTL_QGPU_MFENCE_EXPORT, &x), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(dev.fd, syncobj, &mf_fd), 0);
	/* a job's fence */
	ctx = qt_ctx(dev.fd);
	h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, h, 0, 4096);
	qgpu_cb_fence(cb, 0, 0, 1);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &out.handle), 0);
	igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0, &out, 1, NULL), 0);
	igt_assert_eq(drmSyncobjExportSyncFile(dev.fd, out.handle, &job_fd),
		      0);
	qt_cb_free(cb);
	igt_assert_eq(drmSyncobjWait(dev.fd, &out.handle, 1, INT64_MAX, 0,
				     NULL), 0);
	qgpu_mfence_destroy(&mf);
	qgpu_close(&dev);

	igt_assert(sysfs_write("/sys/bus/pci/drivers/qgpu/unbind", addr));
	/* files and device gone; two sync files still hold qgpu fences */
	igt_assert_eq(pthread_create(&u.th, NULL, unload_thread, &u), 0);
	if (unloader_wait(&u, 2000)) {
		pthread_join(u.th, NULL);
		if (!u.ret) {
			/* its code is gone: leave the fences, load it back */
			reload_qgpu();
			igt_assert_f(0, "qgpu unloaded while two of its fences were held\n");
		}
		igt_assert_f(0, "delete_module: %s\n", strerror(u.ret));
	}
	sync_file_name(mf_fd, false, name, sizeof(name));
	igt_assert_f(!strcmp(name, "qgpu"), "monitored fence's driver: %s\n",
		     name);
	/*
	 * The job's fence is its scheduler's: drm_sched names its timeline
	 * through the scheduler, which must outlive the device (KASAN on the
	 * debug kernel finds the read otherwise).
	 */
	sync_file_name(job_fd, true, name, sizeof(name));
	igt_assert_f(!strcmp(name, "render"), "job fence's timeline: %s\n",
		     name);
	close(mf_fd);
	igt_assert_f(!unloader_wait(&u, 1000),
		     "qgpu unloaded while a job's fence was held\n");
	close(job_fd);
	unloaded_reload(&u, "after its last fence");
}

/*
 * The other way round: a device bound and idle after work keeps fences of
 * its own (its last paging job's): they must not hold the unload off.
 */
static void unload_bound_device(void)
{
	struct unloader u = { 0 };
	struct qgpu_dev dev;

	igt_require(geteuid() == 0 && addr[0]);
	ensure_bound();
	wait_device(&dev);
	qgpu_close(&dev);
	check_new_device();
	igt_assert_eq(pthread_create(&u.th, NULL, unload_thread, &u), 0);
	unloaded_reload(&u, "with a bound, idle device");
}

igt_main
{
	igt_fixture
		device_addr(addr, sizeof(addr));

	igt_subtest("unbind-rebind")
		unplug_test(false, false, false);

	igt_subtest("unbind-close-rebind")
		unplug_test(false, true, false);

	igt_subtest("unbind-with-work-in-flight")
		unplug_test(false, false, true);

	igt_subtest("remove-rescan")
		unplug_test(true, false, false);

	igt_subtest("remove-close-rescan")
		unplug_test(true, true, false);

	igt_subtest("unbind-under-waiting-ioctls")
		unbind_under_ioctls();

	/* last: these unload the module and load it again */
	igt_subtest("fences-hold-module")
		fences_hold_module();

	igt_subtest("unload-bound-device")
		unload_bound_device();
}
