// SPDX-License-Identifier: MIT
/*
 * qgpu_ping: DRM_IOCTL_QGPU_PING, the round trip through the device's PING
 * doorbell (docs/hw-spec.md section 18) that the latency benchmark takes
 * as the device's floor. Correctness only, never time: a ping returns with
 * its own, increasing sequence number; every bad flag bit and a non-zero
 * pad are EINVAL; many pings from several processes and threads at once
 * all return (one interrupt may answer several callers); a signal may end
 * a ping's wait (EINTR) and the next ping still works; pings beside
 * submissions disturb neither.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "qgpu_test.h"

#define PROCS		4
#define THREADS		3
#define PINGS		2000

static struct qgpu_dev dev;

/* @n pings on @fd, each answered with a larger seqno than the last */
static int ping_many(int fd, int n)
{
	uint64_t last = 0, seq;
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = qgpu_ping(fd, &seq);
		if (ret)
			return ret;
		if (i && (int32_t)(seq - last) <= 0)
			return -ERANGE;
		last = seq;
	}
	return 0;
}

static void *ping_thread(void *arg)
{
	intptr_t ret = ping_many(*(int *)arg, PINGS);

	return (void *)ret;
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		igt_require_f(dev.info.caps & QGPU_INFO_CAP_PING,
			      "the device has no PING (version %#x)\n",
			      dev.info.version);
	}

	igt_subtest("ping-answered") {
		struct drm_qgpu_ping p = { .seqno = ~0ull };
		uint64_t first;

		do_ioctl(dev.fd, DRM_IOCTL_QGPU_PING, &p);
		first = p.seqno;
		igt_assert_eq(p.flags, 0);
		igt_assert_eq(p.pad, 0);
		p.seqno = 12345;	/* an input value is ignored */
		do_ioctl(dev.fd, DRM_IOCTL_QGPU_PING, &p);
		igt_assert_eq_u64(p.seqno, (uint32_t)(first + 1));
		igt_assert_eq(ping_many(dev.fd, 100), 0);
		/* another file shares the device's sequence */
		{
			int fd = qt_reopen(&dev);
			uint64_t s;

			igt_assert_eq(qgpu_ping(fd, &s), 0);
			igt_assert((int32_t)(s - first) > 100);
			close(fd);
		}
	}

	igt_subtest("ping-bad-flags-pad") {
		struct drm_qgpu_ping p;
		unsigned int bit;

		for (bit = 0; bit < 32; bit++) {
			memset(&p, 0, sizeof(p));
			p.flags = 1u << bit;
			do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_PING, &p, EINVAL);
			igt_assert_eq_u64(p.seqno, 0);
			memset(&p, 0, sizeof(p));
			p.pad = 1u << bit;
			do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_PING, &p, EINVAL);
		}
		memset(&p, 0xff, sizeof(p));
		do_ioctl_err(dev.fd, DRM_IOCTL_QGPU_PING, &p, EINVAL);
		igt_assert_eq(qgpu_ping(dev.fd, NULL), 0);
	}

	igt_subtest("ping-many-processes-threads") {
		pid_t pids[PROCS];
		int i, status;

		for (i = 0; i < PROCS; i++) {
			pids[i] = fork();
			igt_assert(pids[i] >= 0);
			if (!pids[i]) {
				pthread_t t[THREADS];
				int fd = qt_reopen(&dev), j, bad = 0;

				for (j = 0; j < THREADS; j++)
					if (pthread_create(&t[j], NULL,
							   ping_thread, &fd))
						_exit(3);
				bad |= ping_many(fd, PINGS) != 0;
				for (j = 0; j < THREADS; j++) {
					void *r;

					pthread_join(t[j], &r);
					bad |= r != NULL;
				}
				_exit(bad);
			}
		}
		igt_assert_eq(ping_many(dev.fd, PINGS), 0);
		for (i = 0; i < PROCS; i++) {
			igt_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
			igt_assert_f(WIFEXITED(status) && !WEXITSTATUS(status),
				     "process %d: status %#x\n", i, status);
		}
	}

	igt_subtest("ping-interrupted-by-signal") {
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = {
			.it_interval = { .tv_usec = 200 },
			.it_value = { .tv_usec = 200 },
		};
		struct drm_qgpu_ping p;
		int i, ok = 0, intr = 0;

		/* no SA_RESTART: a signal during the wait ends it with EINTR */
		igt_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
		igt_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
		for (i = 0; i < 20000 && alarms < 200; i++) {
			memset(&p, 0, sizeof(p));
			if (!ioctl(dev.fd, DRM_IOCTL_QGPU_PING, &p))
				ok++;
			else if (errno == EINTR)
				intr++;
			else
				igt_assert_f(0, "ping: %s\n", strerror(errno));
		}
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		signal(SIGALRM, SIG_DFL);
		igt_info("%d pings answered, %d interrupted, %d signals\n",
			 ok, intr, (int)alarms);
		igt_assert(ok > 0);
		igt_assert_eq(ping_many(dev.fd, 100), 0);
	}

	igt_subtest("ping-beside-submissions") {
		struct qgpu_cb *cb = qt_cb(&dev);
		uint32_t ctx = qt_ctx(dev.fd);
		int i;

		igt_assert_eq(qgpu_cb_nop(cb, 1), 0);
		for (i = 0; i < 200; i++) {
			igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, NULL, 0,
						  NULL, 0, NULL), 0);
			igt_assert_eq(qgpu_ping(dev.fd, NULL), 0);
		}
		igt_assert_eq(qgpu_submit_wait(dev.fd, ctx, cb, 10 * SEC_NS,
					       NULL), 0);
		igt_assert_eq(ping_many(dev.fd, 100), 0);
		qgpu_ctx_destroy(dev.fd, ctx);
		qt_cb_free(cb);
	}
}
