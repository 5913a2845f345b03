/* SPDX-License-Identifier: MIT */
/*
 * igt.h - a tiny header-only test helper in the style of IGT GPU Tools.
 *
 * Used by the in-VM test programs (tests/vm/NAME.c) and the host unit tests
 * (tests/unit/NAME.c). It prints IGT's result lines, which the runner counts:
 *
 *	Starting subtest: NAME
 *	Subtest NAME: SUCCESS|FAIL|SKIP|CRASH (0.012s)
 *
 * and exits 0 (all passed), 77 (all skipped) or 98 (something failed).
 *
 *	#include "igt.h"
 *
 *	igt_main
 *	{
 *		int fd = -1;
 *
 *		igt_fixture {
 *			fd = open("/dev/dri/renderD128", O_RDWR);
 *			igt_require_f(fd >= 0, "no qgpu render node\n");
 *		}
 *		igt_subtest("basic") {
 *			igt_assert_eq(do_something(fd), 0);
 *		}
 *		igt_subtest_f("size-%d", 4096) {
 *			igt_expect_dmesg("qgpu .*: rejected submit");
 *			igt_assert(bad_submit(fd) == -EINVAL);
 *		}
 *		igt_fixture
 *			close(fd);
 *	}
 *
 * Rules (as in IGT):
 * - A failed igt_assert*() ends the current subtest as FAIL; igt_require*()
 *   and igt_skip() end it as SKIP. Outside a subtest, a skip skips every
 *   later subtest and a failure ends the program (exit 98).
 * - Do not `return` or `break` out of an igt_subtest/igt_fixture block; use
 *   igt_success() to end a subtest early. Locals changed inside a subtest and
 *   read after a failure in it must be volatile (setjmp rules).
 * - Command line: --list-subtests, --run-subtest NAME (glob, comma-separated
 *   list allowed). `make test T=prog:NAME` passes --run-subtest NAME.
 * - igt_expect_dmesg(REGEX) declares a kernel log line the program provokes
 *   on purpose: the VM runner will not fail the run for a line matching it.
 *   (Python regular expression, searched in the message text without the
 *   timestamp. It applies to the whole program run.)
 * - igt_simple_main is for a program without subtests.
 */
#ifndef QGPU_IGT_H
#define QGPU_IGT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define IGT_EXIT_SUCCESS 0
#define IGT_EXIT_SKIP 77
#define IGT_EXIT_INVALID 79
#define IGT_EXIT_FAILURE 98

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

enum igt__state { IGT__PASS, IGT__FAIL, IGT__SKIP };

static struct {
	jmp_buf jmp;
	const char *prog;
	const char *filter;	/* --run-subtest */
	bool list_only;
	bool in_subtest;
	bool in_fixture;
	bool skip_all;		/* a skip outside a subtest */
	enum igt__state result;
	char name[256];
	struct timespec start;
	int passed, failed, skipped, matched;
} igt__;

static inline double igt__elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - igt__.start.tv_sec) +
	       (now.tv_nsec - igt__.start.tv_nsec) / 1e9;
}

static inline void igt__crash_handler(int sig)
{
	char buf[400];
	int n;

	if (igt__.in_subtest) {
		n = snprintf(buf, sizeof(buf), "Received signal %s.\nSubtest %s: CRASH (%.3fs)\n",
			     strsignal(sig), igt__.name, igt__elapsed());
		if (n > 0 && write(STDOUT_FILENO, buf, (size_t)n) < 0)
			n = 0;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void igt__init(int argc, char **argv)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	int i;

	igt__.prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list-subtests")) {
			igt__.list_only = true;
		} else if (!strcmp(argv[i], "--run-subtest") && i + 1 < argc) {
			igt__.filter = argv[++i];
		} else if (!strncmp(argv[i], "--run-subtest=", 14)) {
			igt__.filter = argv[i] + 14;
		} else if (!strcmp(argv[i], "--help")) {
			printf("usage: %s [--list-subtests] [--run-subtest NAME[,NAME...]]\n",
			       igt__.prog);
			exit(IGT_EXIT_SUCCESS);
		}
	}
	for (i = 0; i < (int)ARRAY_SIZE(sigs); i++)
		signal(sigs[i], igt__crash_handler);
}

static inline bool igt__filter_match(const char *name)
{
	char buf[512], *tok, *save = NULL;

	if (!igt__.filter)
		return true;
	snprintf(buf, sizeof(buf), "%s", igt__.filter);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!fnmatch(tok, name, 0))
			return true;
	return false;
}

/* Returns 1 when the subtest body should run. */
static inline int igt__begin_subtest(const char *name)
{
	if (igt__.in_subtest) {
		fprintf(stderr, "%s: igt_subtest(\"%s\") nested in \"%s\"\n",
			igt__.prog, name, igt__.name);
		exit(IGT_EXIT_INVALID);
	}
	if (igt__.list_only) {
		printf("%s\n", name);
		return 0;
	}
	if (!igt__filter_match(name))
		return 0;
	igt__.matched++;
	snprintf(igt__.name, sizeof(igt__.name), "%s", name);
	if (igt__.skip_all) {
		printf("Subtest %s: SKIP (0.000s)\n", name);
		igt__.skipped++;
		return 0;
	}
	printf("Starting subtest: %s\n", name);
	fflush(stdout);
	igt__.in_subtest = true;
	igt__.result = IGT__PASS;
	clock_gettime(CLOCK_MONOTONIC, &igt__.start);
	return 1;
}

static inline int igt__begin_subtest_f(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline int igt__begin_subtest_f(const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return igt__begin_subtest(name);
}

/* Prints the result line; returns 0 to end the for-loop of igt_subtest. */
static inline int igt__end_subtest(void)
{
	static const char *const txt[] = { "SUCCESS", "FAIL", "SKIP" };

	fflush(stderr);
	printf("Subtest %s: %s (%.3fs)\n", igt__.name, txt[igt__.result],
	       igt__elapsed());
	fflush(stdout);
	if (igt__.result == IGT__PASS)
		igt__.passed++;
	else if (igt__.result == IGT__FAIL)
		igt__.failed++;
	else
		igt__.skipped++;
	igt__.in_subtest = false;
	return 0;
}

static inline int igt__begin_fixture(void)
{
	if (igt__.list_only || igt__.skip_all)
		return 0;
	igt__.in_fixture = true;
	return 1;
}

static inline int igt__end_fixture(void)
{
	igt__.in_fixture = false;
	return 0;
}

static inline void igt__leave(enum igt__state st)
	__attribute__((noreturn));
static inline void igt__leave(enum igt__state st)
{
	if (igt__.in_subtest) {
		igt__.result = st;
		longjmp(igt__.jmp, 1);
	}
	if (st == IGT__SKIP) {
		igt__.skip_all = true;
		if (igt__.in_fixture)
			longjmp(igt__.jmp, 1);
		/* igt_simple_main or main body: nothing else will run */
		printf("%s: SKIP\n", igt__.prog);
		exit(IGT_EXIT_SKIP);
	}
	if (st == IGT__FAIL) {
		printf("%s: FAIL (outside a subtest)\n", igt__.prog);
		exit(IGT_EXIT_FAILURE);
	}
	exit(IGT_EXIT_SUCCESS);
}

static inline void igt_fail(void) __attribute__((noreturn));
static inline void igt_fail(void)
{
	igt__leave(IGT__FAIL);
}

static inline void igt_success(void) __attribute__((noreturn));
static inline void igt_success(void)
{
	igt__leave(IGT__PASS);
}

static inline void igt_skip(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static inline void igt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	igt__leave(IGT__SKIP);
}

static inline int igt__exit(void)
{
	if (igt__.list_only)
		return IGT_EXIT_SUCCESS;
	if (igt__.filter && !igt__.matched) {
		fprintf(stderr, "%s: no subtest matches \"%s\"\n", igt__.prog,
			igt__.filter);
		return IGT_EXIT_INVALID;
	}
	if (igt__.failed)
		return IGT_EXIT_FAILURE;
	if (!igt__.passed && (igt__.skipped || igt__.skip_all))
		return IGT_EXIT_SKIP;
	return IGT_EXIT_SUCCESS;
}

#define igt_main \
	static void igt__main_body(void); \
	int main(int argc, char **argv) \
	{ \
		igt__init(argc, argv); \
		igt__main_body(); \
		return igt__exit(); \
	} \
	static void igt__main_body(void)

#define igt_simple_main \
	static void igt__simple_body(void); \
	int main(int argc, char **argv) \
	{ \
		igt__init(argc, argv); \
		igt__simple_body(); \
		return IGT_EXIT_SUCCESS; \
	} \
	static void igt__simple_body(void)

#define igt_subtest(name) \
	for (int igt__st = igt__begin_subtest(name); igt__st; \
	     igt__st = igt__end_subtest()) \
		if (setjmp(igt__.jmp) != 0) { } else

#define igt_subtest_f(...) \
	for (int igt__st = igt__begin_subtest_f(__VA_ARGS__); igt__st; \
	     igt__st = igt__end_subtest()) \
		if (setjmp(igt__.jmp) != 0) { } else

#define igt_fixture \
	for (int igt__fx = igt__begin_fixture(); igt__fx; \
	     igt__fx = igt__end_fixture()) \
		if (setjmp(igt__.jmp) != 0) { } else

/* Messages */
#define igt_info(...) printf(__VA_ARGS__)
#define igt_warn(...) fprintf(stderr, "WARNING: " __VA_ARGS__)
#define igt_debug(...) \
	do { if (getenv("IGT_DEBUG")) fprintf(stderr, __VA_ARGS__); } while (0)

/* Declare a kernel log line this program provokes on purpose (regex). */
#define igt_expect_dmesg(regex) \
	do { printf("IGT-Expect-Dmesg: %s\n", (regex)); fflush(stdout); } while (0)

#define igt__where() \
	fprintf(stderr, "(%s:%d) %s:%d: %s:\n", igt__.prog, (int)getpid(), \
		__FILE__, __LINE__, __func__)

/* Assertions: fail the current subtest */
#define igt_assert(expr) \
	do { if (!(expr)) { \
		igt__where(); \
		fprintf(stderr, "Failed assertion: %s\n", #expr); \
		if (errno) fprintf(stderr, "Last errno: %d, %s\n", errno, strerror(errno)); \
		igt_fail(); \
	} } while (0)

#define igt_assert_f(expr, ...) \
	do { if (!(expr)) { \
		igt__where(); \
		fprintf(stderr, "Failed assertion: %s\n", #expr); \
		fprintf(stderr, __VA_ARGS__); \
		igt_fail(); \
	} } while (0)

#define igt__assert_cmp(T, fmt, a, op, b) \
	do { T igt__a = (a), igt__b = (b); \
	if (!(igt__a op igt__b)) { \
		igt__where(); \
		fprintf(stderr, "Failed assertion: %s %s %s\n", #a, #op, #b); \
		fprintf(stderr, "error: " fmt " " #op " " fmt " is false\n", igt__a, igt__b); \
		if (errno) fprintf(stderr, "Last errno: %d, %s\n", errno, strerror(errno)); \
		igt_fail(); \
	} } while (0)

#define igt_assert_eq(a, b) igt__assert_cmp(long long, "%lld", a, ==, b)
#define igt_assert_neq(a, b) igt__assert_cmp(long long, "%lld", a, !=, b)
#define igt_assert_lt(a, b) igt__assert_cmp(long long, "%lld", a, <, b)
#define igt_assert_lte(a, b) igt__assert_cmp(long long, "%lld", a, <=, b)
#define igt_assert_gt(a, b) igt__assert_cmp(long long, "%lld", a, >, b)
#define igt_assert_gte(a, b) igt__assert_cmp(long long, "%lld", a, >=, b)
#define igt_assert_eq_u64(a, b) igt__assert_cmp(unsigned long long, "%#llx", a, ==, b)
#define igt_assert_neq_u64(a, b) igt__assert_cmp(unsigned long long, "%#llx", a, !=, b)
#define igt_assert_lte_u64(a, b) igt__assert_cmp(unsigned long long, "%llu", a, <=, b)
#define igt_assert_eq_double(a, b) igt__assert_cmp(double, "%g", a, ==, b)
#define igt_fail_on(expr) igt_assert(!(expr))
#define igt_fail_on_f(expr, ...) igt_assert_f(!(expr), __VA_ARGS__)

/* Run an ioctl, retrying on EINTR/EAGAIN; returns 0 or -errno. */
static inline int igt_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

/* do_ioctl(fd, REQ, &arg): the ioctl must succeed. */
#define do_ioctl(fd, req, arg) igt_assert_eq(igt_ioctl((fd), (req), (arg)), 0)
/* do_ioctl_err(fd, REQ, &arg, EINVAL): the ioctl must fail with that errno. */
#define do_ioctl_err(fd, req, arg, err) \
	igt_assert_eq(igt_ioctl((fd), (req), (arg)), -(err))

/* Requirements: skip the current subtest (or all later ones) */
#define igt_require(expr) \
	do { if (!(expr)) igt_skip("Test requirement not met: %s\n", #expr); } while (0)
#define igt_require_f(expr, ...) \
	do { if (!(expr)) { \
		printf("Test requirement not met: %s\n", #expr); \
		igt_skip(__VA_ARGS__); \
	} } while (0)
#define igt_skip_on(expr) igt_require(!(expr))
#define igt_skip_on_f(expr, ...) igt_require_f(!(expr), __VA_ARGS__)

#endif /* QGPU_IGT_H */
