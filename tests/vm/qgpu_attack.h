/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the in-VM tests that probe the driver's rules from user space
 * (tests/vm/qgpu_isolation.c, tests/vm/qgpu_lockrules.c): counters that must
 * not move when a submit is refused, out-syncobjs that must stay without a
 * fence, a barrier that lets everything queued on a context finish, GPU
 * checksums, and "victim" processes that own an allocation with a secret
 * and report whether it changed.
 *
 * Header-only, on top of qgpu_test.h.
 */
#ifndef QGPU_ATTACK_H
#define QGPU_ATTACK_H

#include "qgpu_test.h"

#define QA_VIS		QGPU_SEGBIT(QGPU_SEG_VISIBLE)
#define QA_LOC		QGPU_SEGBIT(QGPU_SEG_LOCAL)
#define QA_APT		QGPU_SEGBIT(QGPU_SEG_APERTURE)

/* ------------------------------------------------------------------------ */
/* Checks that do not stop the subtest                                       */

/*
 * qa_check() records a broken expectation and goes on, so that one run
 * reports every rule it saw broken; qa_check_done() fails the subtest if
 * any check failed since qa_begin().
 */
static int qa_fails;

#define qa_check(cond, ...) \
	do { if (!(cond)) { \
		igt_info("CHECK FAILED (%s:%d): ", __FILE__, __LINE__); \
		igt_info(__VA_ARGS__); \
		qa_fails++; \
	} } while (0)

#define qa_check_done() \
	do { int qa__n = qa_fails; qa_fails = 0; \
	     igt_assert_f(qa__n == 0, "%d check(s) failed, see above\n", qa__n); \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Counters                                                                  */

/* The counters a refused submit must leave alone. */
struct qa_counts {
	uint64_t g_submissions, g_portions;	/* global */
	uint64_t f_submissions, f_portions;	/* this file */
	uint64_t c_submissions, c_portions;	/* this context */
};

static inline void qa_counts_read(int fd, uint32_t ctx, struct qa_counts *c)
{
	struct drm_qgpu_context_status cs;
	struct drm_qgpu_stats st;

	qt_stats(fd, &st);
	c->g_submissions = st.submissions;
	c->g_portions = st.split_portions;
	igt_assert_eq(qgpu_query_file_stats(fd, &st), 0);
	c->f_submissions = st.submissions;
	c->f_portions = st.split_portions;
	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	c->c_submissions = cs.submissions;
	c->c_portions = cs.portions;
}

/* Number of counters that differ; each difference is printed. */
static inline int qa_counts_diff(const struct qa_counts *a,
				 const struct qa_counts *b, const char *what)
{
	static const char *const names[] = {
		"global submissions", "global split_portions",
		"file submissions", "file split_portions",
		"context submissions", "context portions",
	};
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
	unsigned int i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (x[i] != y[i]) {
			igt_info("%s: %s changed %llu -> %llu\n", what, names[i],
				 (unsigned long long)x[i],
				 (unsigned long long)y[i]);
			n++;
		}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Syncobjs and submission                                                   */

/*
 * State of a binary syncobj without waiting: 0 signalled, -ETIME a fence
 * is attached but pending, -EINVAL no fence was ever attached.
 */
static inline int qa_syncobj_state(int fd, uint32_t h)
{
	uint32_t first = 0;
	int ret = drmSyncobjWait(fd, &h, 1, 0, 0, &first);

	return ret ? -errno : 0;
}

/*
 * Submit @cb on @ctx with a fresh out-syncobj (returned in *sync, to be
 * destroyed by the caller). Returns the submit's result.
 */
static inline int qa_submit(int fd, uint32_t ctx, const struct qgpu_cb *cb,
			    uint32_t *sync, uint32_t *portions)
{
	struct drm_qgpu_sync_entry out = { 0 };

	igt_assert_eq(cb->error, 0);
	igt_assert_eq(qgpu_syncobj_create(fd, &out.handle), 0);
	*sync = out.handle;
	if (portions)
		*portions = 0;
	return qgpu_submit(fd, ctx, cb, NULL, 0, &out, 1, portions);
}

/*
 * Let everything already queued on @ctx finish: wait for @sync if a fence
 * was attached to it (0: none to wait for), then, if the context still
 * takes work, run a one-NOP buffer behind it and wait for that.
 */
static inline void qa_settle(int fd, uint32_t ctx, uint32_t sync)
{
	struct drm_qgpu_context_status cs;
	struct qgpu_cb cb;
	int ret;

	if (sync && qa_syncobj_state(fd, sync) == -ETIME)
		igt_assert_eq(qgpu_syncobj_wait(fd, sync, 0, 60 * SEC_NS), 0);
	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	if (cs.state != QGPU_CTX_OK)
		return;
	igt_assert_eq(qgpu_cb_init(&cb, 1), 0);
	qgpu_cb_nop(&cb, 1);
	ret = qgpu_submit_wait(fd, ctx, &cb, 60 * SEC_NS, NULL);
	qgpu_cb_fini(&cb);
	igt_assert_f(ret == 0 || ret == -ECANCELED,
		     "barrier submit: %s\n", strerror(-ret));
}

static inline struct drm_qgpu_context_status qa_ctx_status(int fd,
							   uint32_t ctx)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(fd, ctx, &cs), 0);
	return cs;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */

/*
 * GPU checksum of [0, size) of @h (bound read-only, so the submit does not
 * tell the kernel the allocation is written) into word @idx of @res.
 */
static inline uint32_t qa_gpu_csum(int fd, uint32_t ctx, uint32_t h,
				   uint64_t size, uint32_t res,
				   volatile uint32_t *rmap, uint32_t idx)
{
	struct qgpu_cb cb;

	igt_assert_eq(qgpu_cb_init(&cb, 4), 0);
	rmap[idx] = 0;
	qgpu_cb_bind_flags(&cb, 0, h, 0, size, 0);
	qgpu_cb_bind(&cb, 1, res, 0, QGPU_CB_WHOLE);
	qgpu_cb_checksum(&cb, 0, 0, (uint32_t)size, 1, idx * 4);
	qt_run(fd, ctx, &cb, 60);
	qgpu_cb_fini(&cb);
	return rmap[idx];
}

/* Host FNV-1a of the qgpu_pattern() stream @seed over @size bytes. */
static inline uint32_t qa_pattern_csum(uint64_t size, uint32_t seed)
{
	uint32_t h = QGPU_CSUM_INIT;
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		h = (h ^ qgpu_pattern(seed, i)) * QGPU_CSUM_PRIME;
	return h;
}

/* ------------------------------------------------------------------------ */
/* Victim processes                                                          */

/*
 * A secret word: the marker 0x5ec0 in the upper half (nothing the attacking
 * tests write has it), a word-dependent lower half. Finding a marked word
 * where the attacker could read it means the secret leaked.
 */
#define QA_SECRET_MARK		0x5ec0u
static inline uint32_t qa_secret(uint32_t seed, uint64_t i)
{
	return (QA_SECRET_MARK << 16) |
	       (((uint32_t)(i * 2654435761u >> 7) ^ seed * 40503u) & 0xffffu);
}

/* Words of [p, p + size) that carry the secret marker. */
static inline uint64_t qa_count_secret(const volatile uint32_t *p,
				       uint64_t size)
{
	uint64_t i, n = 0;

	for (i = 0; i < size / 4; i++)
		n += p[i] >> 16 == QA_SECRET_MARK;
	return n;
}

struct qa_victim_report {
	int32_t status;		/* 0 or a negative errno / step number */
	uint32_t segment;
	uint64_t gpu_addr;
	uint64_t size;
	uint64_t bad_words;	/* at check time */
};

struct qa_victim {
	pid_t pid;		/* 0: slot free */
	int to_child, from_child;
	struct qa_victim_report rep;
};

/*
 * Victims live in this table, so that those a failed subtest left behind
 * (it longjmp'ed past their check) can be ended by qa_reap().
 */
static struct qa_victim qa_vtab[8];

/* End the victims a failed subtest left behind (only ours, by pid). */
static inline void qa_reap(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(qa_vtab); i++) {
		struct qa_victim *v = &qa_vtab[i];

		if (!v->pid)
			continue;
		if (v->to_child >= 0)
			close(v->to_child);
		if (v->from_child >= 0)
			close(v->from_child);
		kill(v->pid, SIGKILL);
		qt_wait_child(v->pid);
		memset(v, 0, sizeof(*v));
	}
}

static inline int qa_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The victim: never uses igt asserts; talks over the pipes; _exit()s. */
static inline void qa_victim_main(const char *path, uint64_t size,
				  uint32_t mask, uint32_t seg, uint32_t seed,
				  int rd, int wr)
{
	struct qa_victim_report rep = { 0 };
	struct drm_qgpu_gem_info info = { 0 };
	volatile uint32_t *p = NULL;
	uint32_t h = 0;
	uint64_t i;
	char cmd;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		rep.status = -1;
	else if (qgpu_bo_create(fd, size, mask, QGPU_GEM_CPU_ACCESS, 0, &h))
		rep.status = -2;
	else if (seg && qgpu_bo_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg,
				       NULL))
		rep.status = -3;
	else if (qgpu_bo_map(fd, h, size, (void **)&p))
		rep.status = -4;
	if (!rep.status) {
		for (i = 0; i < size / 4; i++)
			p[i] = qa_secret(seed, i);
		if (qgpu_bo_info(fd, h, &info))
			rep.status = -5;
		rep.segment = info.segment;
		rep.gpu_addr = info.gpu_addr;
		rep.size = info.size;
	}
	if (write(wr, &rep, sizeof(rep)) != sizeof(rep) || rep.status)
		_exit(2);
	/* keep the allocation, untouched, until asked to check it */
	if (qa_read_full(rd, &cmd, 1))
		_exit(3);
	for (i = 0; i < size / 4; i++)
		rep.bad_words += p[i] != qa_secret(seed, i);
	if (!qgpu_bo_info(fd, h, &info)) {
		rep.segment = info.segment;
		rep.gpu_addr = info.gpu_addr;
	}
	if (write(wr, &rep, sizeof(rep)) != sizeof(rep))
		_exit(4);
	_exit(0);
}

/*
 * Fork a victim process with its own DRM file: an allocation of @size
 * (@mask, CPU-accessible), made resident in @seg (0: left in system
 * memory), mapped and filled with qa_secret(@seed, i). Returns when the
 * victim is ready; ->rep tells where its allocation is.
 */
static inline struct qa_victim *qa_victim_start(const char *path,
						uint64_t size, uint32_t mask,
						uint32_t seg, uint32_t seed)
{
	struct qa_victim *v = NULL;
	int down[2], up[2];
	unsigned int i;
	pid_t pid;

	for (i = 0; i < ARRAY_SIZE(qa_vtab); i++)
		if (!qa_vtab[i].pid) {
			v = &qa_vtab[i];
			break;
		}
	igt_assert(v);
	igt_assert_eq(pipe(down), 0);
	igt_assert_eq(pipe(up), 0);
	fflush(stdout);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		qa_victim_main(path, size, mask, seg, seed, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	v->to_child = down[1];
	v->from_child = up[0];
	igt_assert_eq(qa_read_full(v->from_child, &v->rep, sizeof(v->rep)), 0);
	igt_assert_f(v->rep.status == 0, "victim set-up failed at step %d\n",
		     -v->rep.status);
	return v;
}

/* Ask the victim to check its allocation; returns the number of changed
 * words (the final report in *out if not NULL) and reaps the process. */
static inline uint64_t qa_victim_check(struct qa_victim *v,
				       struct qa_victim_report *out)
{
	struct qa_victim_report rep;
	char cmd = 'c';
	int st;

	igt_assert_eq(write(v->to_child, &cmd, 1), 1);
	igt_assert_eq(qa_read_full(v->from_child, &v->rep, sizeof(v->rep)), 0);
	close(v->to_child);
	close(v->from_child);
	st = qt_wait_child(v->pid);
	rep = v->rep;
	memset(v, 0, sizeof(*v));
	if (out)
		*out = rep;
	igt_assert_eq(st, 0);
	return rep.bad_words;
}

/* Start of a subtest: no leftovers of a failed one, no pending checks. */
static inline void qa_begin(void)
{
	qa_reap();
	qt_cleanup();
	qa_fails = 0;
}

#endif /* QGPU_ATTACK_H */
