// SPDX-License-Identifier: MIT
/*
 * qgpu_drmcore: the DRM core contracts a DRM driver inherits, as Linux
 * 6.12 defines them (drivers/gpu/drm/drm_auth.c, drm_ioctl.c, drm_file.c,
 * drm_dumb_buffers.c, drm_gem.c, drm_prime.c), checked on qgpu's nodes:
 *
 * - master: the first opener of the primary node becomes master whatever
 *   its privileges; SET_MASTER needs CAP_SYS_ADMIN or a file that was
 *   master in the same process, and fails with EBUSY while another file
 *   is master; DROP_MASTER of a file that is not master is EINVAL.
 * - authentication: root's files are authenticated at open, others are
 *   not until the master passes their magic to AUTH_MAGIC (once: a magic
 *   is consumed); a magic belongs to the master the file was opened
 *   under. DRM_AUTH ioctls (every qgpu ioctl, FLINK, GEM_OPEN) refuse
 *   unauthenticated primary clients; render nodes need no authentication.
 * - GET_CLIENT, GET_STATS, GET_VERSION (lengths, truncation), GET_CAP and
 *   SET_CLIENT_CAP of a render-only (non-KMS) driver.
 * - read() and poll() of a DRM file with no events pending.
 * - dumb buffers: argument checks, mmap offsets, a mapping outlives its
 *   handle, fresh buffers are zeroed.
 * - PRIME within one file and across files (the same handle for the same
 *   object in one file), dma-buf llseek, bad fds; FLINK/GEM_OPEN.
 *
 * Run as root; it opens the primary node, so nothing else may hold it
 * (no display server in the guest).
 */
#include <linux/capability.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "qgpu_test.h"

static struct qgpu_dev dev;	/* render node */
static char card[64];		/* primary node path */

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static int open_card(void)
{
	int fd = open(card, O_RDWR | O_CLOEXEC);

	igt_assert_f(fd >= 0, "open %s: %s\n", card, strerror(errno));
	return fd;
}

/* AUTH_MAGIC of magic 0: EACCES if not master, EINVAL if master (the
 * kernel never hands out magic 0). */
static bool is_master(int fd)
{
	struct drm_auth a = { .magic = 0 };

	return igt_ioctl(fd, DRM_IOCTL_AUTH_MAGIC, &a) != -EACCES;
}

static int set_master(int fd)
{
	return igt_ioctl(fd, DRM_IOCTL_SET_MASTER, NULL);
}

static int drop_master(int fd)
{
	return igt_ioctl(fd, DRM_IOCTL_DROP_MASTER, NULL);
}

static int get_magic(int fd, uint32_t *magic)
{
	struct drm_auth a = { .magic = 0 };
	int ret = igt_ioctl(fd, DRM_IOCTL_GET_MAGIC, &a);

	*magic = a.magic;
	return ret;
}

static int auth_magic(int fd, uint32_t magic)
{
	struct drm_auth a = { .magic = magic };

	return igt_ioctl(fd, DRM_IOCTL_AUTH_MAGIC, &a);
}

/* GET_CLIENT idx 0: the caller's own authentication state (-errno if it
 * fails). */
static int client_auth(int fd)
{
	struct drm_client c = { .idx = 0 };
	int ret = igt_ioctl(fd, DRM_IOCTL_GET_CLIENT, &c);

	return ret ? ret : c.auth;
}

static int get_cap(int fd, uint64_t cap, uint64_t *value)
{
	struct drm_get_cap c = { .capability = cap, .value = 0xdeadbeef };
	int ret = igt_ioctl(fd, DRM_IOCTL_GET_CAP, &c);

	*value = c.value;
	return ret;
}

/* Whether the device is a KMS (modesetting) device: asked on the primary
 * node (GETRESOURCES is not a render-node ioctl). */
static bool has_kms(void)
{
	struct drm_mode_card_res res;
	int fd = open(card, O_RDWR | O_CLOEXEC), ret;

	igt_assert(fd >= 0);
	memset(&res, 0, sizeof(res));
	ret = igt_ioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res);
	close(fd);
	return ret != -EOPNOTSUPP;
}

/*
 * Children that run without CAP_SYS_ADMIN report the line of their first
 * failed check as exit status (line % 250 + 1; the line is printed).
 */
#define CHILD_NO_SETUP 255
#define CHECK(cond) do { \
		if (!(cond)) { \
			printf("child: line %d: %s failed (errno %d)\n", \
			       __LINE__, #cond, errno); \
			return __LINE__ % 250 + 1; \
		} \
	} while (0)

static void run_unprivileged(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		if (qt_drop_sys_admin())
			_exit(CHILD_NO_SETUP);
		_exit(fn(arg));
	}
	st = qt_wait_child(pid);
	igt_require_f(st != CHILD_NO_SETUP, "cannot drop CAP_SYS_ADMIN\n");
	igt_assert_f(st == 0, "unprivileged child failed (status %d)\n", st);
}

/* Every primary-node test starts with no master anywhere. */
static void require_no_master(void)
{
	int fd;

	igt_require(geteuid() == 0);
	fd = open_card();
	igt_assert_f(is_master(fd),
		     "the first open of %s did not become master: another file holds it\n",
		     card);
	close(fd);
}

/* ------------------------------------------------------------------------ */
/* Master and authentication                                                 */

/* Without CAP_SYS_ADMIN: only the first opener, and only itself. */
static int unpriv_master_child(void *arg)
{
	int a, b, st;
	pid_t pid;

	(void)arg;
	a = open(card, O_RDWR);
	CHECK(a >= 0);
	/* the first opener becomes master without any privilege */
	CHECK(is_master(a));
	CHECK(client_auth(a) == 1);
	b = open(card, O_RDWR);
	CHECK(b >= 0);
	CHECK(!is_master(b));
	CHECK(client_auth(b) == 0);
	/* never master, not CAP_SYS_ADMIN: no SET/DROP_MASTER */
	CHECK(set_master(b) == -EACCES);
	CHECK(drop_master(b) == -EACCES);
	/* the master drops and takes it back (was master, same process) */
	CHECK(drop_master(a) == 0);
	CHECK(!is_master(a));
	CHECK(drop_master(a) == -EINVAL);
	/* no master now, still no right for b */
	CHECK(set_master(b) == -EACCES);
	/* another process with the was-master file: not the same process */
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(set_master(a) == -EACCES ? 0 : 1);
	st = qt_wait_child(pid);
	CHECK(st == 0);
	CHECK(!is_master(a));
	CHECK(set_master(a) == 0);
	CHECK(is_master(a));
	/* already master: SET_MASTER again is fine */
	CHECK(set_master(a) == 0);
	close(b);
	close(a);
	return 0;
}

/* An unauthenticated client of the primary node and the master's fd. */
static int unpriv_auth_child(void *arg)
{
	struct drm_qgpu_device_info info;
	struct drm_qgpu_gem_create gc = {
		.size = 4096, .segment_mask = QGPU_SEGBIT(QGPU_SEG_APERTURE),
	};
	struct drm_qgpu_ctx_create cc = { 0 };
	struct drm_gem_flink fl = { .handle = 1 };
	struct drm_gem_open go = { .name = 1 };
	struct drm_syncobj_create sc = { 0 };
	struct drm_client cl = { .idx = 0 };
	struct drm_version v;
	uint32_t m1, m2, h, pitch;
	uint64_t size, val;
	int master = *(int *)arg, c, r;

	c = open(card, O_RDWR);
	CHECK(c >= 0);
	CHECK(!is_master(c));
	CHECK(igt_ioctl(c, DRM_IOCTL_GET_CLIENT, &cl) == 0);
	CHECK(cl.auth == 0);
	CHECK(cl.pid == (unsigned long)getpid());
	cl.idx = 1;
	CHECK(igt_ioctl(c, DRM_IOCTL_GET_CLIENT, &cl) == -EINVAL);
	/* DRM_AUTH ioctls: refused */
	CHECK(qgpu_query_device(c, &info) == -EACCES);
	CHECK(igt_ioctl(c, DRM_IOCTL_QGPU_GEM_CREATE, &gc) == -EACCES);
	CHECK(igt_ioctl(c, DRM_IOCTL_QGPU_CTX_CREATE, &cc) == -EACCES);
	CHECK(igt_ioctl(c, DRM_IOCTL_GEM_FLINK, &fl) == -EACCES);
	CHECK(igt_ioctl(c, DRM_IOCTL_GEM_OPEN, &go) == -EACCES);
	/* not DRM_AUTH in 6.12: version, caps, syncobjs, dumb buffers */
	memset(&v, 0, sizeof(v));
	CHECK(igt_ioctl(c, DRM_IOCTL_VERSION, &v) == 0);
	CHECK(get_cap(c, DRM_CAP_SYNCOBJ, &val) == 0 && val == 1);
	CHECK(igt_ioctl(c, DRM_IOCTL_SYNCOBJ_CREATE, &sc) == 0);
	CHECK(qgpu_dumb_create(c, 16, 16, 32, &h, &pitch, &size) == 0);
	CHECK(qgpu_dumb_destroy(c, h) == 0);
	/* a magic: non-zero, the same when asked twice */
	CHECK(get_magic(c, &m1) == 0);
	CHECK(m1 != 0);
	CHECK(get_magic(c, &m2) == 0);
	CHECK(m2 == m1);
	/* only the master authenticates */
	CHECK(auth_magic(c, m1) == -EACCES);
	CHECK(client_auth(c) == 0);
	/* a magic nobody was given */
	CHECK(auth_magic(master, m1 + 1000) == -EINVAL);
	CHECK(auth_magic(master, 0) == -EINVAL);
	CHECK(client_auth(c) == 0);
	/* the master's fd, used from this process: still the master */
	CHECK(auth_magic(master, m1) == 0);
	CHECK(client_auth(c) == 1);
	/* a magic is consumed */
	CHECK(auth_magic(master, m1) == -EINVAL);
	CHECK(qgpu_query_device(c, &info) == 0);
	CHECK(info.device_id == QGPU_PCI_DEVICE_ID);
	/* the render node needs no authentication */
	r = open(dev.path, O_RDWR);
	CHECK(r >= 0);
	CHECK(client_auth(r) == -EACCES);	/* not a render ioctl */
	CHECK(qgpu_query_device(r, &info) == 0);
	close(r);
	close(c);
	return 0;
}

static void check_version(int fd)
{
	char name[32], date[32], desc[64];
	struct drm_version v;

	/* lengths only (NULL buffers) */
	memset(&v, 0, sizeof(v));
	do_ioctl(fd, DRM_IOCTL_VERSION, &v);
	igt_assert_eq(v.version_major, 1);
	igt_assert_eq(v.version_minor, 0);
	igt_assert_eq(v.name_len, strlen("qgpu"));
	igt_assert_eq(v.date_len, 1);		/* "0" since 6.12 */
	igt_assert_eq(v.desc_len, strlen("qgpu virtual GPU"));
	/* the full strings; not NUL-terminated by the kernel */
	memset(name, 'x', sizeof(name));
	memset(date, 'x', sizeof(date));
	memset(desc, 'x', sizeof(desc));
	v.name = name;
	v.name_len = sizeof(name);
	v.date = date;
	v.date_len = sizeof(date);
	v.desc = desc;
	v.desc_len = sizeof(desc);
	do_ioctl(fd, DRM_IOCTL_VERSION, &v);
	igt_assert_eq(v.name_len, 4);
	igt_assert(!memcmp(name, "qgpux", 5));
	igt_assert_eq(v.date_len, 1);
	igt_assert(!memcmp(date, "0x", 2));
	igt_assert_eq(v.desc_len, 16);
	igt_assert(!memcmp(desc, "qgpu virtual GPUx", 17));
	/* truncated: copies what fits, reports the full length */
	memset(name, 'x', sizeof(name));
	memset(desc, 'x', sizeof(desc));
	v.name_len = 2;
	v.date_len = 0;
	v.desc_len = 5;
	do_ioctl(fd, DRM_IOCTL_VERSION, &v);
	igt_assert_eq(v.name_len, 4);
	igt_assert(!memcmp(name, "qgxx", 4));
	igt_assert_eq(v.date_len, 1);
	igt_assert_eq(date[1], 'x');
	igt_assert_eq(v.desc_len, 16);
	igt_assert(!memcmp(desc, "qgpu xx", 7));
	/* a bad pointer with room: EFAULT */
	v.name = (char *)16;
	v.name_len = 8;
	do_ioctl_err(fd, DRM_IOCTL_VERSION, &v, EFAULT);
}

static void check_caps(int fd)
{
	uint64_t val;
	int ret;

	igt_assert_eq(get_cap(fd, DRM_CAP_PRIME, &val), 0);
	igt_assert_eq(val, DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT);
	igt_assert_eq(get_cap(fd, DRM_CAP_SYNCOBJ, &val), 0);
	igt_assert_eq(val, 1);
	igt_assert_eq(get_cap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &val), 0);
	igt_assert_eq(val, 1);
	igt_assert_eq(get_cap(fd, DRM_CAP_TIMESTAMP_MONOTONIC, &val), 0);
	igt_assert_eq(val, 1);
	/*
	 * DUMB_BUFFER is answered by KMS drivers only: a render-only driver
	 * gets EOPNOTSUPP even though its dumb ioctls work (so tools that
	 * probe the cap, IGT's dumb_buffer among them, find none).
	 */
	ret = get_cap(fd, DRM_CAP_DUMB_BUFFER, &val);
	if (has_kms()) {
		igt_assert_eq(ret, 0);
		igt_assert_eq(val, 1);
	} else {
		igt_assert_eq(ret, -EOPNOTSUPP);
		igt_assert_eq(val, 0);
		/* as is every other KMS cap, known or not */
		igt_assert_eq(get_cap(fd, DRM_CAP_CURSOR_WIDTH, &val),
			      -EOPNOTSUPP);
		igt_assert_eq(get_cap(fd, 0xffff, &val), -EOPNOTSUPP);
	}
}

/* ------------------------------------------------------------------------ */
/* Dumb buffers and PRIME                                                    */

static int dumb_raw(int fd, uint32_t w, uint32_t h, uint32_t bpp)
{
	struct drm_mode_create_dumb c = {
		.width = w, .height = h, .bpp = bpp,
	};
	int ret = igt_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c);

	if (!ret)
		qgpu_dumb_destroy(fd, c.handle);
	return ret;
}

static void *dumb_map(int fd, uint32_t h, uint64_t size, uint64_t *off)
{
	void *p;

	igt_assert_eq(qgpu_dumb_map_offset(fd, h, off), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, *off);
	igt_assert_f(p != MAP_FAILED, "mmap dumb: %s\n", strerror(errno));
	return p;
}

static int mmap_err(int fd, uint64_t off, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);

	if (p != MAP_FAILED) {
		munmap(p, size);
		return 0;
	}
	return -errno;
}

static int prime_export(int fd, uint32_t h, uint32_t flags, int *out)
{
	struct drm_prime_handle a = { .handle = h, .flags = flags, .fd = -1 };
	int ret = igt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &a);

	*out = a.fd;
	return ret;
}

static int prime_import(int fd, int dmabuf, uint32_t *h)
{
	struct drm_prime_handle a = { .fd = dmabuf };
	int ret = igt_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &a);

	*h = a.handle;
	return ret;
}

static ino_t inode_of(int fd)
{
	struct stat st;

	igt_assert_eq(fstat(fd, &st), 0);
	return st.st_ino;
}

static void sigalrm_noop(int sig)
{
	(void)sig;
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		igt_require_f(qgpu_find_node(QGPU_NODE_PRIMARY, 0, card,
					     sizeof(card)) == 0,
			      "no qgpu primary node\n");
	}

	igt_subtest("master-first-opener") {
		int a, b, c;

		require_no_master();
		a = open_card();
		b = open_card();
		igt_assert(is_master(a));
		igt_assert(!is_master(b));
		/* root's files are authenticated from the start */
		igt_assert_eq(client_auth(a), 1);
		igt_assert_eq(client_auth(b), 1);
		/* closing the master leaves no master; b does not inherit */
		close(a);
		igt_assert(!is_master(b));
		/* the next opener becomes master again */
		c = open_card();
		igt_assert(is_master(c));
		igt_assert(!is_master(b));
		close(c);
		close(b);
	}

	igt_subtest("setmaster-root") {
		int a, b, c;

		require_no_master();
		a = open_card();
		b = open_card();
		/* another file is master: EBUSY, even for root */
		igt_assert_eq(set_master(b), -EBUSY);
		/* not master: nothing to drop */
		igt_assert_eq(drop_master(b), -EINVAL);
		igt_assert_eq(set_master(a), 0);	/* already master */
		igt_assert_eq(drop_master(a), 0);
		igt_assert(!is_master(a));
		igt_assert_eq(drop_master(a), -EINVAL);
		/* nobody is master: root may take it with any file */
		igt_assert_eq(set_master(b), 0);
		igt_assert(is_master(b));
		igt_assert_eq(set_master(a), -EBUSY);
		/* an open while b is master does not take it */
		c = open_card();
		igt_assert(!is_master(c));
		close(b);
		igt_assert(!is_master(c));
		igt_assert_eq(set_master(c), 0);
		igt_assert_eq(set_master(a), -EBUSY);
		close(c);
		igt_assert_eq(set_master(a), 0);
		close(a);
	}

	igt_subtest("setmaster-unprivileged") {
		require_no_master();
		run_unprivileged(unpriv_master_child, NULL);
	}

	igt_subtest("master-render-node") {
		int r = qt_reopen(&dev);

		/* render clients are never master and cannot become it */
		igt_assert(!is_master(r));
		igt_assert_eq(set_master(r), -EACCES);
		igt_assert_eq(drop_master(r), -EACCES);
		close(r);
	}

	igt_subtest("auth-magic") {
		int m;

		require_no_master();
		m = open_card();
		igt_assert(is_master(m));
		run_unprivileged(unpriv_auth_child, &m);
		close(m);
	}

	igt_subtest("auth-magic-belongs-to-its-master") {
		uint32_t magic;
		int m1, m2, c;

		require_no_master();
		m1 = open_card();
		m2 = open_card();
		c = open_card();	/* opened under m1's master */
		igt_assert_eq(get_magic(c, &magic), 0);
		/* m2 becomes master with a master of its own */
		igt_assert_eq(drop_master(m1), 0);
		igt_assert_eq(set_master(m2), 0);
		igt_assert_eq(auth_magic(m2, magic), -EINVAL);
		/* m1 back: its master, with c's magic, is the current one */
		igt_assert_eq(drop_master(m2), 0);
		igt_assert_eq(set_master(m1), 0);
		igt_assert_eq(auth_magic(m1, magic), 0);
		igt_assert_eq(auth_magic(m1, magic), -EINVAL);
		/* a non-master cannot authenticate at all */
		igt_assert_eq(auth_magic(m2, magic), -EACCES);
		close(c);
		close(m2);
		close(m1);
	}

	igt_subtest("auth-on-render-node") {
		uint32_t magic;
		int r = qt_reopen(&dev);

		/* GET_MAGIC/AUTH_MAGIC/GET_CLIENT/GET_STATS are not render
		 * ioctls */
		igt_assert_eq(get_magic(r, &magic), -EACCES);
		igt_assert_eq(auth_magic(r, 1), -EACCES);
		igt_assert_eq(client_auth(r), -EACCES);
		{
			struct drm_stats st;

			do_ioctl_err(r, DRM_IOCTL_GET_STATS, &st, EACCES);
		}
		close(r);
	}

	igt_subtest("getclient") {
		struct drm_client c;
		int fd = open_card();

		memset(&c, 0x5a, sizeof(c));
		c.idx = 0;
		do_ioctl(fd, DRM_IOCTL_GET_CLIENT, &c);
		igt_assert_eq(c.auth, 1);
		igt_assert_eq(c.pid, getpid());
		igt_assert_eq(c.uid, 65534);	/* overflowuid: hollowed out */
		igt_assert_eq(c.magic, 0);
		igt_assert_eq(c.iocs, 0);
		/* only index 0 exists */
		c.idx = 1;
		do_ioctl_err(fd, DRM_IOCTL_GET_CLIENT, &c, EINVAL);
		c.idx = -1;
		do_ioctl_err(fd, DRM_IOCTL_GET_CLIENT, &c, EINVAL);
		close(fd);
	}

	igt_subtest("getstats") {
		struct drm_stats st;
		unsigned int i;
		int fd = open_card();

		memset(&st, 0xa5, sizeof(st));
		do_ioctl(fd, DRM_IOCTL_GET_STATS, &st);
		/* no statistics: all cleared */
		igt_assert_eq(st.count, 0);
		for (i = 0; i < ARRAY_SIZE(st.data); i++) {
			igt_assert_eq(st.data[i].value, 0);
			igt_assert_eq(st.data[i].type, 0);
		}
		close(fd);
	}

	igt_subtest("getversion") {
		int fd = open_card();

		check_version(fd);
		check_version(dev.fd);
		close(fd);
	}

	igt_subtest("getcap") {
		int fd = open_card();

		check_caps(fd);
		check_caps(dev.fd);
		close(fd);
	}

	igt_subtest("setclientcap") {
		uint64_t caps[] = { DRM_CLIENT_CAP_STEREO_3D,
				    DRM_CLIENT_CAP_UNIVERSAL_PLANES,
				    DRM_CLIENT_CAP_ATOMIC,
				    DRM_CLIENT_CAP_ASPECT_RATIO,
				    DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 0,
				    0xffff };
		struct drm_set_client_cap c;
		unsigned int i;
		int fd = open_card();

		igt_require(!has_kms());
		/* a render-only driver has no client caps to set */
		for (i = 0; i < ARRAY_SIZE(caps); i++) {
			c.capability = caps[i];
			c.value = 1;
			do_ioctl_err(fd, DRM_IOCTL_SET_CLIENT_CAP, &c,
				     EOPNOTSUPP);
		}
		/* and it is not a render-node ioctl */
		c.capability = DRM_CLIENT_CAP_ATOMIC;
		do_ioctl_err(dev.fd, DRM_IOCTL_SET_CLIENT_CAP, &c, EACCES);
		close(fd);
	}

	igt_subtest("drm-read-no-events") {
		const char *paths[2] = { dev.path, card };
		struct sigaction sa, old;
		struct pollfd pfd;
		char buf[4096];
		unsigned int i;
		int fd;

		for (i = 0; i < 2; i++) {
			fd = open(paths[i], O_RDWR | O_NONBLOCK | O_CLOEXEC);
			igt_assert(fd >= 0);
			/* nothing pending: EAGAIN, whatever the size */
			igt_assert_eq(read(fd, buf, sizeof(buf)), -1);
			igt_assert_eq(errno, EAGAIN);
			igt_assert_eq(read(fd, buf, 1), -1);
			igt_assert_eq(errno, EAGAIN);
			igt_assert_eq(read(fd, buf, 0), -1);
			igt_assert_eq(errno, EAGAIN);
			/* poll: not readable, no error */
			pfd.fd = fd;
			pfd.events = POLLIN | POLLOUT;
			pfd.revents = 0;
			igt_assert_eq(poll(&pfd, 1, 50), 0);
			igt_assert_eq(pfd.revents, 0);
			/* blocking: waits until a signal interrupts it */
			igt_assert_eq(fcntl(fd, F_SETFL, 0), 0);
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = sigalrm_noop;	/* no SA_RESTART */
			sigaction(SIGALRM, &sa, &old);
			alarm(1);
			errno = 0;
			igt_assert_eq(read(fd, buf, sizeof(buf)), -1);
			igt_assert_eq(errno, EINTR);
			alarm(0);
			sigaction(SIGALRM, &old, NULL);
			close(fd);
		}
		/* exclusive opens are refused */
		fd = open(dev.path, O_RDWR | O_EXCL);
		igt_assert_eq(fd, -1);
		igt_assert_eq(errno, EBUSY);
	}

	igt_subtest("dumb-create-bad") {
		int fd = open_card();

		igt_assert_eq(dumb_raw(fd, 0, 16, 32), -EINVAL);
		igt_assert_eq(dumb_raw(fd, 16, 0, 32), -EINVAL);
		igt_assert_eq(dumb_raw(fd, 16, 16, 0), -EINVAL);
		/* bpp near 2^32: the core's overflow check */
		igt_assert_eq(dumb_raw(fd, 16, 16, 0xfffffff8u), -EINVAL);
		igt_assert_eq(dumb_raw(fd, 16, 16, 0xffffffffu), -EINVAL);
		/* width * cpp and height * pitch overflowing 32 bits */
		igt_assert_eq(dumb_raw(fd, 0x40000001u, 1, 32), -EINVAL);
		igt_assert_eq(dumb_raw(fd, 0x10000, 0x10000, 8), -EINVAL);
		igt_assert_eq(dumb_raw(fd, 1024, 0x100001, 32), -EINVAL);
		/* the size page-aligned wraps to 0 */
		igt_assert_eq(dumb_raw(fd, 0xfffff001u, 1, 8), -EINVAL);
		/* valid odd sizes and bpps */
		igt_assert_eq(dumb_raw(fd, 1, 1, 1), 0);
		igt_assert_eq(dumb_raw(fd, 17, 3, 24), 0);
		igt_assert_eq(dumb_raw(fd, 4096, 1, 8), 0);
		close(fd);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("dumb-map") {
		uint32_t h, pitch, *p;
		uint64_t size, off, off2;
		int fd = open_card(), other = open_card();

		igt_assert_eq(qgpu_dumb_create(fd, 100, 50, 32, &h, &pitch,
					       &size), 0);
		igt_assert_lte(400, pitch);
		igt_assert_lte_u64((uint64_t)pitch * 50, size);
		igt_assert_eq(size % 4096, 0);
		p = dumb_map(fd, h, size, &off);
		/* the fake offset is page-aligned and stable */
		igt_assert_eq(off % 4096, 0);
		igt_assert_eq(qgpu_dumb_map_offset(fd, h, &off2), 0);
		igt_assert_eq_u64(off2, off);
		/* a new buffer is zeroed */
		for (uint64_t i = 0; i < size / 4; i++)
			igt_assert_f(p[i] == 0, "dumb word %llu is %#x\n",
				     (unsigned long long)i, p[i]);
		qgpu_pattern_fill(p, size, 7);
		/* mmap must match the object: not bigger, not off its start */
		igt_assert_eq(mmap_err(fd, off, size + 4096), -EINVAL);
		igt_assert_eq(mmap_err(fd, off + 4096, size - 4096), -EINVAL);
		igt_assert_eq(mmap_err(fd, off, 4096), 0);
		/* another file has no access to our object's offset */
		igt_assert_eq(mmap_err(other, off, size), -EACCES);
		/* an unknown handle */
		igt_assert_eq(qgpu_dumb_map_offset(fd, 0x7ffffff0, &off2),
			      -ENOENT);
		/* the handle goes; the mapping stays valid */
		igt_assert_eq(qgpu_dumb_destroy(fd, h), 0);
		qt_check_pattern(p, size, 7, "dumb buffer after its handle closed");
		qgpu_pattern_fill(p, size, 8);
		qt_check_pattern(p, size, 8, "dumb buffer written after close");
		/* no new mapping: the file lost access to the object */
		igt_assert_eq(mmap_err(fd, off, size), -EACCES);
		igt_assert_eq(qgpu_dumb_map_offset(fd, h, &off2), -ENOENT);
		igt_assert_eq(munmap(p, size), 0);
		/* the object is gone with its last mapping */
		igt_assert_eq(mmap_err(fd, off, size), -EINVAL);
		/* a recycled buffer is zeroed again */
		igt_assert_eq(qgpu_dumb_create(fd, 100, 50, 32, &h, &pitch,
					       &size), 0);
		p = dumb_map(fd, h, size, &off);
		for (uint64_t i = 0; i < size / 4; i++)
			igt_assert_f(p[i] == 0, "reused dumb word %llu is %#x\n",
				     (unsigned long long)i, p[i]);
		munmap(p, size);
		igt_assert_eq(qgpu_dumb_destroy(fd, h), 0);
		close(other);
		close(fd);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("dumb-create-clear") {
		uint32_t heights[] = { 1, 16, 256, 1024, 4096 }, h, pitch, *p;
		uint64_t size, off, i;
		unsigned int round, k;
		int fd = open_card();

		/*
		 * Every new dumb buffer reads as zero, whatever the buffers
		 * freed before it held (sizes from one page to 4 MiB, each
		 * round reusing what the previous one dirtied).
		 */
		for (round = 0; round < 3; round++) {
			for (k = 0; k < ARRAY_SIZE(heights); k++) {
				igt_assert_eq(qgpu_dumb_create(fd, 256,
							       heights[k], 32,
							       &h, &pitch,
							       &size), 0);
				p = dumb_map(fd, h, size, &off);
				for (i = 0; i < size / 4; i++)
					igt_assert_f(p[i] == 0,
						     "round %u, %llu-byte buffer: word %llu is %#x\n",
						     round,
						     (unsigned long long)size,
						     (unsigned long long)i, p[i]);
				memset(p, 0xff, size);
				munmap(p, size);
				igt_assert_eq(qgpu_dumb_destroy(fd, h), 0);
			}
		}
		close(fd);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("prime-self-import") {
		uint32_t h, h2, hb, hb2;
		int fd1, fd2, fdb, other;
		struct drm_qgpu_gem_info gi;

		h = qt_bo(dev.fd, 65536, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		qt_untrack(dev.fd, h, NULL);
		igt_assert_eq(prime_export(dev.fd, h, DRM_CLOEXEC, &fd1), 0);
		/* exporting again: the same dma-buf */
		igt_assert_eq(prime_export(dev.fd, h, DRM_CLOEXEC | DRM_RDWR,
					   &fd2), 0);
		igt_assert_neq(fd1, fd2);
		igt_assert_eq(inode_of(fd1), inode_of(fd2));
		/* back into the same file: the same handle, every time */
		igt_assert_eq(prime_import(dev.fd, fd1, &h2), 0);
		igt_assert_eq(h2, h);
		igt_assert_eq(prime_import(dev.fd, fd2, &h2), 0);
		igt_assert_eq(h2, h);
		/* into another file: one handle there, stable too */
		other = qt_reopen(&dev);
		igt_assert_eq(prime_import(other, fd1, &hb), 0);
		igt_assert_eq(prime_import(other, fd2, &hb2), 0);
		igt_assert_eq(hb2, hb);
		igt_assert_eq(qgpu_bo_info(other, hb, &gi), 0);
		igt_assert_eq(gi.size, 65536);
		/* exporting from there: still the same dma-buf */
		igt_assert_eq(prime_export(other, hb, DRM_CLOEXEC, &fdb), 0);
		igt_assert_eq(inode_of(fdb), inode_of(fd1));
		/* llseek: only the size (SEEK_END) and 0 */
		igt_assert_eq(lseek(fd1, 0, SEEK_END), 65536);
		igt_assert_eq(lseek(fd1, 0, SEEK_SET), 0);
		igt_assert_eq(lseek(fd1, 1, SEEK_SET), -1);
		igt_assert_eq(errno, EINVAL);
		igt_assert_eq(lseek(fd1, 0, SEEK_CUR), -1);
		igt_assert_eq(errno, EINVAL);
		igt_assert_eq(lseek(fd1, 1, SEEK_END), -1);
		igt_assert_eq(errno, EINVAL);
		/* close in a mixed order: fds, the original handle, ... */
		close(fd1);
		igt_assert_eq(qgpu_bo_destroy(dev.fd, h), 0);
		igt_assert_eq(qgpu_bo_info(dev.fd, h, &gi), -ENOENT);
		/* ... a remaining dma-buf brings it back as a new handle */
		igt_assert_eq(prime_import(dev.fd, fd2, &h2), 0);
		igt_assert_eq(qgpu_bo_info(dev.fd, h2, &gi), 0);
		igt_assert_eq(gi.size, 65536);
		close(fd2);
		igt_assert_eq(qgpu_bo_destroy(other, hb), 0);
		igt_assert_eq(prime_import(other, fdb, &hb), 0);
		close(fdb);
		close(other);	/* drops hb */
		igt_assert_eq(qgpu_bo_destroy(dev.fd, h2), 0);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("prime-dup-fd") {
		uint32_t h, h2;
		int fd, dupfd;

		h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		igt_assert_eq(prime_export(dev.fd, h, DRM_CLOEXEC, &fd), 0);
		dupfd = dup(fd);
		igt_assert(dupfd >= 0);
		close(fd);
		qt_close(dev.fd, h);
		/* the dup keeps the object; imported it is a new handle */
		igt_assert_eq(prime_import(dev.fd, dupfd, &h2), 0);
		igt_assert_eq(qt_info(dev.fd, h2).size, 4096);
		igt_assert_eq(prime_import(dev.fd, dupfd, &h), 0);
		igt_assert_eq(h, h2);
		close(dupfd);
		igt_assert_eq(qgpu_bo_destroy(dev.fd, h2), 0);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("prime-bad") {
		int efd, dead, sfd, fd;
		uint32_t h, sobj;

		h = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		/* export: unknown handle, bad flags */
		igt_assert_eq(prime_export(dev.fd, 0, DRM_CLOEXEC, &fd),
			      -ENOENT);
		igt_assert_eq(prime_export(dev.fd, 0x7ffffff0, DRM_CLOEXEC,
					   &fd), -ENOENT);
		igt_assert_eq(prime_export(dev.fd, h, 0x1, &fd), -EINVAL);
		igt_assert_eq(prime_export(dev.fd, h, DRM_CLOEXEC | 0x10,
					   &fd), -EINVAL);
		/* import: not a dma-buf, not an fd */
		efd = eventfd(0, EFD_CLOEXEC);
		igt_assert(efd >= 0);
		igt_assert_eq(prime_import(dev.fd, efd, &h), -EINVAL);
		igt_assert_eq(prime_import(dev.fd, dev.fd, &h), -EINVAL);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sobj), 0);
		igt_assert_eq(drmSyncobjHandleToFD(dev.fd, sobj, &sfd), 0);
		igt_assert_eq(prime_import(dev.fd, sfd, &h), -EINVAL);
		igt_assert_eq(prime_import(dev.fd, -1, &h), -EBADF);
		dead = dup(efd);
		close(dead);
		igt_assert_eq(prime_import(dev.fd, dead, &h), -EBADF);
		close(sfd);
		close(efd);
		qgpu_syncobj_destroy(dev.fd, sobj);
		qt_cleanup();
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("flink") {
		struct drm_gem_flink fl;
		struct drm_gem_open go;
		uint32_t h, pitch, *p, *q;
		uint64_t size, off;
		int a = open_card(), b = open_card();

		/* the render node has no global names */
		memset(&fl, 0, sizeof(fl));
		fl.handle = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				  0, 0);
		do_ioctl_err(dev.fd, DRM_IOCTL_GEM_FLINK, &fl, EACCES);
		memset(&go, 0, sizeof(go));
		go.name = 1;
		do_ioctl_err(dev.fd, DRM_IOCTL_GEM_OPEN, &go, EACCES);
		qt_cleanup();
		/* on the primary node (root: authenticated) it is DRM core's */
		igt_assert_eq(qgpu_dumb_create(a, 64, 64, 32, &h, &pitch,
					       &size), 0);
		p = dumb_map(a, h, size, &off);
		qgpu_pattern_fill(p, size, 3);
		fl.handle = h;
		fl.name = 0;
		do_ioctl(a, DRM_IOCTL_GEM_FLINK, &fl);
		igt_assert_neq(fl.name, 0);
		/* the name is stable */
		{
			struct drm_gem_flink again = { .handle = h };

			do_ioctl(a, DRM_IOCTL_GEM_FLINK, &again);
			igt_assert_eq(again.name, fl.name);
		}
		go.name = fl.name;
		go.handle = 0;
		do_ioctl(b, DRM_IOCTL_GEM_OPEN, &go);
		igt_assert_eq_u64(go.size, size);
		q = dumb_map(b, go.handle, size, &off);
		qt_check_pattern(q, size, 3, "flink-opened object");
		munmap(q, size);
		igt_assert_eq(drmCloseBufferHandle(b, go.handle), 0);
		/* bad handle, bad name */
		{
			struct drm_gem_flink bad = { .handle = 0x7ffffff0 };

			do_ioctl_err(a, DRM_IOCTL_GEM_FLINK, &bad, ENOENT);
		}
		go.name = 0x7ffffff0;
		do_ioctl_err(b, DRM_IOCTL_GEM_OPEN, &go, ENOENT);
		/* the name dies with the object's last handle */
		munmap(p, size);
		igt_assert_eq(qgpu_dumb_destroy(a, h), 0);
		go.name = fl.name;
		do_ioctl_err(b, DRM_IOCTL_GEM_OPEN, &go, ENOENT);
		close(b);
		close(a);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("flink-second-handle-close-keeps-locks") {
		/*
		 * Two handles of one allocation in one file (GEM_OPEN of its
		 * flink name): the file's Lock2s end with its last handle of
		 * it, not with the first one closed. Closing the file ends
		 * them, and the allocation goes with it.
		 */
		const uint32_t vis = QGPU_SEGBIT(QGPU_SEG_VISIBLE);
		struct drm_gem_flink fl = { 0 };
		struct drm_gem_open go = { 0 };
		uint64_t off;
		uint32_t h;
		int a = open_card();

		igt_assert_eq(qgpu_bo_create(a, 4096, vis, QGPU_GEM_CPU_ACCESS,
					     0, &h), 0);
		fl.handle = h;
		do_ioctl(a, DRM_IOCTL_GEM_FLINK, &fl);
		go.name = fl.name;
		do_ioctl(a, DRM_IOCTL_GEM_OPEN, &go);
		igt_assert_neq(go.handle, h);
		igt_assert_eq(qgpu_bo_lock(a, h, &off), 0);
		igt_assert_eq(qt_info(a, h).lock_count, 1);
		igt_assert_eq(drmCloseBufferHandle(a, go.handle), 0);
		igt_assert_f(qt_info(a, h).lock_count == 1,
			     "closing a second handle of a locked allocation ended the file's lock (lock count %u)\n",
			     qt_info(a, h).lock_count);
		igt_assert_eq(qgpu_bo_unlock(a, h), 0);
		igt_assert_eq(qt_info(a, h).lock_count, 0);
		/* locked through both handles, then the file closes */
		do_ioctl(a, DRM_IOCTL_GEM_OPEN, &go);
		igt_assert_eq(qgpu_bo_lock(a, h, &off), 0);
		igt_assert_eq(qgpu_bo_lock(a, go.handle, &off), 0);
		igt_assert_eq(qt_info(a, h).lock_count, 2);
		close(a);
		qt_assert_no_allocations(dev.fd);
	}

	igt_subtest("gem-close-bad") {
		struct drm_gem_close c = { .handle = 0 };

		do_ioctl_err(dev.fd, DRM_IOCTL_GEM_CLOSE, &c, EINVAL);
		c.handle = 0x7ffffff0;
		do_ioctl_err(dev.fd, DRM_IOCTL_GEM_CLOSE, &c, EINVAL);
		c.handle = qt_bo(dev.fd, 4096, QGPU_SEGBIT(QGPU_SEG_APERTURE),
				 0, 0);
		qt_untrack(dev.fd, c.handle, NULL);
		do_ioctl(dev.fd, DRM_IOCTL_GEM_CLOSE, &c);
		do_ioctl_err(dev.fd, DRM_IOCTL_GEM_CLOSE, &c, EINVAL);
	}

	igt_fixture
		qgpu_close(&dev);
}
