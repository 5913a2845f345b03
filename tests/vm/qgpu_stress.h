/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the destruction/liveness tests (qgpu_race, qgpu_liveness)
 * and the ioctl fuzzer (qgpu_fuzz). Header-only, like qgpu_test.h.
 *
 * Nothing here decides pass/fail by elapsed time: bounds (qs_call_wait(),
 * qs_wait_baseline(), ...) only turn "never completes" into a failure, and
 * are generous.
 */
#ifndef QGPU_STRESS_H
#define QGPU_STRESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <linux/sync_file.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "qgpu_test.h"

/* ------------------------------------------------------------------------ */
/* Small utilities                                                           */

static inline pid_t qs_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Scheduler state letter of a thread of this process ('R', 'S', 'D', ...). */
static inline char qs_task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');	/* comm may contain spaces */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The kernel function a thread sleeps in (may be "0" when hidden). */
static inline void qs_task_wchan(pid_t tid, char *out, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(out, len, "?");
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	n = read(fd, out, len - 1);
	close(fd);
	out[n > 0 ? n : 0] = 0;
}

/* A progress line with the time since the subtest started (information
 * only: nothing depends on it). */
#define qs_note(...) do { \
	printf("[+%.3fs] ", igt__elapsed()); \
	printf(__VA_ARGS__); \
	fflush(stdout); \
} while (0)

/* xorshift64*: the tests' own deterministic random numbers */
static inline uint64_t qs_rand(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* ------------------------------------------------------------------------ */
/* Threads with a bound                                                      */

/*
 * Run @fn(@arg) in a thread; qs_call_wait() waits up to @secs for it. A call
 * that does not return within the bound is the failure signal of a test
 * ("it completes instead of deadlocking"), never a timing measurement.
 */
struct qs_call {
	pthread_t th;
	void *(*fn)(void *);
	void *arg;
	volatile int done;
	volatile pid_t tid;
	bool started, joined;
};

static inline void *qs_call_trampoline(void *p)
{
	struct qs_call *c = p;

	c->tid = qs_gettid();
	c->fn(c->arg);
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static inline void qs_call_start(struct qs_call *c, void *(*fn)(void *),
				 void *arg)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->arg = arg;
	igt_assert_eq(pthread_create(&c->th, NULL, qs_call_trampoline, c), 0);
	c->started = true;
}

/* Wait up to @secs for the call to return; true when it did (and joined). */
static inline bool qs_call_wait(struct qs_call *c, int secs)
{
	struct timespec ts;

	if (!c->started)
		return true;
	if (c->joined)
		return true;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	if (pthread_timedjoin_np(c->th, NULL, &ts) != 0)
		return false;
	c->joined = true;
	return true;
}

/*
 * Wait until the thread of @c either returned or went to sleep in the
 * kernel (state S or D). Returns the state seen ('=' when it returned).
 */
static inline char qs_call_wait_blocked(struct qs_call *c, int max_checks)
{
	int i;
	char st;

	for (i = 0; i < max_checks; i++) {
		if (__atomic_load_n(&c->done, __ATOMIC_SEQ_CST))
			return '=';
		if (c->tid) {
			st = qs_task_state(c->tid);
			if (st == 'S' || st == 'D')
				return st;
		}
		usleep(1000);
	}
	return __atomic_load_n(&c->done, __ATOMIC_SEQ_CST) ? '=' : '?';
}

/* ------------------------------------------------------------------------ */
/* Kernel log                                                                */

/*
 * Lines the harness does not flag but that mean a broken driver or
 * scheduler: drm "*ERROR*" lines (e.g. a job pushed to a killed entity),
 * list/refcount corruption. Kept here so the failing subtest is named.
 */
static const char *const qs_kmsg_bad[] = {
	"*ERROR*", "corruption", "refcount_t", "use-after-free",
	"Trying to push", "BUG", "WARNING", "Oops", "general protection",
	"Call Trace", "blocked for more than",
};

struct qs_kmsg {
	int fd;
};

static inline void qs_kmsg_begin(struct qs_kmsg *k)
{
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0)
		lseek(k->fd, 0, SEEK_END);
}

/* Number of bad lines logged since qs_kmsg_begin(); prints them. */
static inline int qs_kmsg_count_bad(struct qs_kmsg *k)
{
	char buf[8192];
	int bad = 0;
	unsigned int i;
	ssize_t n;

	if (k->fd < 0)
		return 0;
	for (;;) {
		n = read(k->fd, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		buf[n] = 0;
		for (i = 0; i < ARRAY_SIZE(qs_kmsg_bad); i++)
			if (strstr(buf, qs_kmsg_bad[i])) {
				char *msg = strchr(buf, ';');

				igt_warn("kernel: %s", msg ? msg + 1 : buf);
				bad++;
				break;
			}
	}
	return bad;
}

static inline void qs_kmsg_end(struct qs_kmsg *k)
{
	int bad = qs_kmsg_count_bad(k);

	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	igt_assert_f(bad == 0, "%d bad kernel log line(s) (above)\n", bad);
}

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */

struct qs_base {
	struct drm_qgpu_stats st;
	struct drm_qgpu_segment_stats seg[8];
	unsigned int nseg;
	int contexts;		/* contexts a fresh file can create */
};

/*
 * How many contexts a new file can create now (context ids are global:
 * one that is never freed is lost to everybody). -errno on other errors.
 */
static inline int qs_ctx_capacity(void)
{
	static uint32_t ids[4096];
	struct qgpu_dev d;
	int n = 0, i, ret;

	ret = qgpu_open(&d, QGPU_NODE_RENDER);
	if (ret)
		return ret;
	while (n < 4096) {
		ret = qgpu_ctx_create(d.fd, &ids[n]);
		if (ret)
			break;
		n++;
	}
	for (i = 0; i < n; i++)
		qgpu_ctx_destroy(d.fd, ids[i]);
	qgpu_close(&d);
	return ret == -ENOSPC || ret == 0 ? n : ret;
}

static inline int qs_base_read(int fd, struct qs_base *b)
{
	memset(b, 0, sizeof(*b));
	b->contexts = qs_ctx_capacity();
	return qgpu_query_stats(fd, &b->st, b->seg, 8, &b->nseg);
}

/*
 * CTX_CREATE that waits (bounded) for context ids still held by contexts
 * being torn down: destruction may finish after CTX_DESTROY returned, so
 * ENOSPC right after contexts were destroyed can be transient. A permanent
 * ENOSPC (ids leaked) still fails after the bound.
 */
static inline int qs_ctx_create(int fd, uint32_t *ctx)
{
	int i, ret = -ENOSPC;

	for (i = 0; i < 1000 && ret == -ENOSPC; i++) {
		ret = qgpu_ctx_create(fd, ctx);
		if (ret == -ENOSPC)
			usleep(10000);
	}
	return ret;
}

static inline uint32_t qs_ctx(int fd)
{
	uint32_t ctx = 0;
	int ret = qs_ctx_create(fd, &ctx);

	igt_assert_f(ret == 0, "CTX_CREATE: %s\n", strerror(-ret));
	return ctx;
}

/*
 * The baseline: counters now, and the number of contexts a new file can
 * create once the teardown of earlier contexts finished (all of them when
 * nobody else holds one; else the most seen within a bound).
 */
static inline void qs_baseline(int fd, struct qs_base *b)
{
	struct drm_qgpu_device_info info;
	int i, best = -1;

	igt_assert_eq(qgpu_query_device(fd, &info), 0);
	for (i = 0; i < 200; i++) {
		igt_assert_eq(qs_base_read(fd, b), 0);
		if (b->contexts > best)
			best = b->contexts;
		if (b->contexts == (int)info.max_contexts - 1)
			break;
		usleep(50000);
	}
	b->contexts = best;
	igt_assert_f(b->contexts > 0, "no context can be created: %s\n",
		     strerror(-b->contexts));
}

static inline bool qs_base_equal(const struct qs_base *a,
				 const struct qs_base *b, char *why,
				 size_t len)
{
	unsigned int i;

	if (a->st.allocations != b->st.allocations ||
	    a->st.allocated_bytes != b->st.allocated_bytes) {
		snprintf(why, len, "allocations %llu (baseline %llu), allocated_bytes %llu (baseline %llu)",
			 (unsigned long long)a->st.allocations,
			 (unsigned long long)b->st.allocations,
			 (unsigned long long)a->st.allocated_bytes,
			 (unsigned long long)b->st.allocated_bytes);
		return false;
	}
	if (a->contexts != b->contexts) {
		snprintf(why, len, "a new file can create %d contexts (baseline %d): context ids leaked",
			 a->contexts, b->contexts);
		return false;
	}
	if (a->nseg != b->nseg) {
		snprintf(why, len, "%u segments (baseline %u)", a->nseg,
			 b->nseg);
		return false;
	}
	for (i = 0; i < a->nseg && i < 8; i++)
		if (a->seg[i].allocations != b->seg[i].allocations ||
		    a->seg[i].used != b->seg[i].used) {
			snprintf(why, len, "segment %u: %u allocations, %llu bytes used (baseline %u, %llu)",
				 a->seg[i].id, a->seg[i].allocations,
				 (unsigned long long)a->seg[i].used,
				 b->seg[i].allocations,
				 (unsigned long long)b->seg[i].used);
			return false;
		}
	return true;
}

/*
 * Everything was closed: the counters (and the number of contexts a new
 * file can create) must come back to @b. Memory of destroyed allocations
 * may be released when their GPU work completes, so poll (bounded; the
 * bound is the failure signal).
 */
static inline void qs_wait_baseline(const struct qs_base *b, int secs)
{
	struct qgpu_dev d;
	struct qs_base now;
	char why[256] = "";
	int i, ret;

	ret = qgpu_open(&d, QGPU_NODE_RENDER);
	igt_assert_f(ret == 0, "open: %s\n", strerror(-ret));
	qs_note("waiting for the counters to return to the baseline\n");
	for (i = 0; i < secs * 20; i++) {
		igt_assert_eq(qs_base_read(d.fd, &now), 0);
		if (qs_base_equal(&now, b, why, sizeof(why)))
			break;
		usleep(50000);
	}
	qgpu_close(&d);
	qs_note("counters %s after %d polls\n",
		qs_base_equal(&now, b, why, sizeof(why)) ? "back" : "NOT back",
		i);
	igt_assert_f(qs_base_equal(&now, b, why, sizeof(why)),
		     "counters not back to the baseline %d s after everything was closed: %s\n",
		     secs, why);
}

/* ------------------------------------------------------------------------ */
/* Fences                                                                    */

/*
 * Status of a binary syncobj's fence: 1 signalled, 0 pending, < 0 the
 * fence's error (signalled with an error); -1000 - errno when the fence
 * cannot be exported (no fence).
 */
static inline int qs_sync_status(int fd, uint32_t handle)
{
	struct sync_file_info info;
	int sfd = -1, ret;

	ret = drmSyncobjExportSyncFile(fd, handle, &sfd);
	if (ret)
		return -1000 - (errno ? errno : EINVAL);
	memset(&info, 0, sizeof(info));
	ret = ioctl(sfd, SYNC_IOC_FILE_INFO, &info);
	close(sfd);
	if (ret)
		return -1000 - errno;
	return info.status;
}

static inline const char *qs_status_name(int st)
{
	static char buf[64];

	if (st == 1)
		return "signalled";
	if (st == 0)
		return "pending";
	if (st <= -1000)
		snprintf(buf, sizeof(buf), "no fence (%s)", strerror(-1000 - st));
	else
		snprintf(buf, sizeof(buf), "signalled with error %s",
			 strerror(-st));
	return buf;
}

/* Wait (bounded) for a syncobj that has a fence; 0 or -ETIME/-errno. */
static inline int qs_wait_sync(int fd, uint32_t handle, int secs)
{
	return qgpu_syncobj_wait(fd, handle, 0, (int64_t)secs * SEC_NS);
}

/* ------------------------------------------------------------------------ */
/* The device still works                                                    */

/*
 * A fresh file can create a context, submit a FILL and read the right
 * result back; then everything of it is closed again.
 */
static inline void qs_device_works(void)
{
	struct drm_qgpu_context_status cs;
	struct qgpu_dev d;
	struct qgpu_cb cb;
	uint32_t ctx = 0, h = 0, *p = NULL;
	uint32_t seg = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
		       QGPU_SEGBIT(QGPU_SEG_APERTURE);
	int ret, i;

	ret = qgpu_open(&d, QGPU_NODE_RENDER);
	igt_assert_f(ret == 0, "open: %s\n", strerror(-ret));
	ret = qs_ctx_create(d.fd, &ctx);
	igt_assert_f(ret == 0, "a fresh file cannot create a context: %s\n",
		     strerror(-ret));
	ret = qgpu_bo_create(d.fd, 65536, seg, QGPU_GEM_CPU_ACCESS, 0, &h);
	igt_assert_f(ret == 0, "GEM_CREATE: %s\n", strerror(-ret));
	igt_assert_eq(qgpu_cb_init(&cb, d.info.max_slots), 0);
	qgpu_cb_bind(&cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(&cb, 0, 0, 65536, 0xc0ffee11);
	qgpu_cb_fence(&cb, 0, 8, 0x600d600d600dull);
	ret = qgpu_submit_wait(d.fd, ctx, &cb, 20 * SEC_NS, NULL);
	qgpu_cb_fini(&cb);
	igt_assert_f(ret == 0, "FILL on a fresh file: %s\n", strerror(-ret));
	igt_assert_eq(qgpu_query_context(d.fd, ctx, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_OK, "fresh context lost: %s\n",
		     qgpu_ctx_state_name(cs.state));
	ret = qgpu_bo_map(d.fd, h, 65536, (void **)&p);
	igt_assert_f(ret == 0, "map: %s\n", strerror(-ret));
	igt_assert_eq_u64(p[2], 0x600d600du);
	igt_assert_eq_u64(p[3], 0x600du);
	for (i = 4; i < 65536 / 4; i += 97)
		igt_assert_f(p[i] == 0xc0ffee11, "word %d is %#x after FILL\n",
			     i, p[i]);
	igt_assert_eq(qgpu_bo_unmap(d.fd, h, p, 65536), 0);
	igt_assert_eq(qgpu_bo_destroy(d.fd, h), 0);
	igt_assert_eq(qgpu_ctx_destroy(d.fd, ctx), 0);
	qgpu_close(&d);
}

/* ------------------------------------------------------------------------ */
/* userfaultfd                                                               */

/*
 * Two pages: the first ordinary, the second registered for missing-page
 * faults, so that a kernel copy_from_user() of an array that starts at the
 * end of the first page and runs into the second stops inside the copy
 * until qs_uffd_release() supplies the second page.
 */
struct qs_uffd {
	int uffd;
	char *area;		/* 2 pages */
	char *page2;
	char src[4096] __attribute__((aligned(4096)));
	uint64_t fault_addr;
};

/* 0, or a reason why userfaultfd cannot be used here (skip). */
static inline const char *qs_uffd_setup(struct qs_uffd *u)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	memset(u->src, 0, sizeof(u->src));
	u->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u->uffd < 0)
		return errno == ENOSYS ? "no userfaultfd syscall in this kernel" :
		       errno == EPERM ? "userfaultfd not permitted (vm.unprivileged_userfaultfd=0 and not root)" :
		       "userfaultfd() failed";
	if (ioctl(u->uffd, UFFDIO_API, &api)) {
		close(u->uffd);
		return "UFFDIO_API failed";
	}
	u->area = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->area == MAP_FAILED) {
		close(u->uffd);
		return "mmap failed";
	}
	memset(u->area, 0, 4096);	/* first page present */
	u->page2 = u->area + 4096;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)u->page2;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg)) {
		munmap(u->area, 8192);
		close(u->uffd);
		return "UFFDIO_REGISTER failed";
	}
	return NULL;
}

/*
 * Place @len bytes of @data so that they start @in_first bytes before the
 * end of the first page (the rest goes into the held second page).
 * Returns the user address of the copy.
 */
static inline void *qs_uffd_place(struct qs_uffd *u, const void *data,
				  size_t len, size_t in_first)
{
	char *at = u->page2 - in_first;

	igt_assert(len > in_first && len - in_first <= 4096);
	memcpy(at, data, in_first);
	memcpy(u->src, (const char *)data + in_first, len - in_first);
	return at;
}

/*
 * Wait (bounded) for the fault on the second page: true when it came.
 * Gives up early once *@done is set (the faulting call returned).
 */
static inline bool qs_uffd_wait_fault_or(struct qs_uffd *u, int secs,
					 volatile int *done)
{
	struct pollfd pfd = { .fd = u->uffd, .events = POLLIN };
	struct uffd_msg msg;
	int i;

	for (i = 0; i < secs * 10; i++) {
		if (done && *done && poll(&pfd, 1, 0) != 1)
			return false;
		if (poll(&pfd, 1, 100) == 1 &&
		    read(u->uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT) {
			u->fault_addr = msg.arg.pagefault.address;
			return true;
		}
	}
	return false;
}

static inline bool qs_uffd_wait_fault(struct qs_uffd *u, int secs)
{
	return qs_uffd_wait_fault_or(u, secs, NULL);
}

/* Supply the second page: the held copy goes on. */
static inline int qs_uffd_release(struct qs_uffd *u)
{
	struct uffdio_copy cp = {
		.dst = (uintptr_t)u->page2,
		.src = (uintptr_t)u->src,
		.len = 4096,
	};

	if (ioctl(u->uffd, UFFDIO_COPY, &cp) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Drop the second page again (the next access faults again). */
static inline void qs_uffd_zap(struct qs_uffd *u)
{
	madvise(u->page2, 4096, MADV_DONTNEED);
}

static inline void qs_uffd_teardown(struct qs_uffd *u)
{
	if (u->uffd >= 0) {
		qs_uffd_release(u);	/* never leave a waiter behind */
		munmap(u->area, 8192);
		close(u->uffd);
		u->uffd = -1;
	}
}

#endif /* QGPU_STRESS_H */
