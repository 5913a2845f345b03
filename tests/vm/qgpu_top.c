// SPDX-License-Identifier: MIT
/*
 * qgpu_top: qgpu-top's batch mode shows what is really happening. A child
 * process holds 4 MiB in VRAM and 1 MiB in the GART aperture and submits
 * DMA buffers in a loop; qgpu-top -b, run meanwhile, must show that
 * process (its pid, its VRAM and GART bytes, a render busy share), the
 * submissions per second, every segment with its size and the policy in
 * use. After the child is gone, it is no longer listed.
 */
#include <signal.h>
#include <sys/wait.h>

#include "qgpu_test.h"

static struct qgpu_dev dev;

static void child_work(int ready)
{
	uint32_t v, g, ctx;
	struct qgpu_cb cb;
	char c = 1;
	int fd = qt_reopen(&dev);

	if (qgpu_bo_create(fd, 4 * MiB, qt_vram_mask(&dev), 0, 0, &v) ||
	    qgpu_bo_reside(fd, v, QGPU_RESIDE_MAKE_RESIDENT, 0, NULL) ||
	    qgpu_bo_create(fd, MiB, QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0,
			   &g) ||
	    qgpu_bo_reside(fd, g, QGPU_RESIDE_MAKE_RESIDENT,
			   QGPU_SEG_APERTURE, NULL) ||
	    qgpu_ctx_create(fd, &ctx) || qgpu_cb_init(&cb, dev.info.max_slots))
		_exit(1);
	qgpu_cb_bind(&cb, 0, v, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(&cb, 0, 0, 4 * MiB, 0x5a5a5a5a);
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (;;)
		if (qgpu_submit_wait(fd, ctx, &cb, 10 * SEC_NS, NULL))
			_exit(2);
}

/* The value of " key=" in @line as a number, or -1 */
static double field(const char *line, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(line, k);
	return p ? atof(p + strlen(k)) : -1;
}

static void run_top(pid_t child, bool want_child)
{
	char line[512], pidkey[32];
	bool seen_child = false, seen_vis = false;
	double subs = 0;
	int policy = 0;
	FILE *f;

	f = popen("qgpu-top -b -n 3 -i 300", "r");
	igt_assert(f);
	snprintf(pidkey, sizeof(pidkey), "pid=%d ", (int)child);
	while (fgets(line, sizeof(line), f)) {
		igt_assert_f(!strncmp(line, "top: ", 5), "not a top line: %s",
			     line);
		if (strstr(line, " policy=")) {
			const char *p = strstr(line, " policy=") + 8;

			policy += strncmp(p, "? ", 2) != 0;
			if (field(line, "submissions_s") > subs)
				subs = field(line, "submissions_s");
		}
		if (strstr(line, "segment=vram-visible") &&
		    field(line, "size") == (double)dev.info.visible_vram_size)
			seen_vis = true;
		if (!strncmp(line + 5, pidkey, strlen(pidkey))) {
			seen_child = true;
			igt_assert_f(field(line, "vram") >= 4 * MiB,
				     "its VRAM: %s", line);
			igt_assert_f(field(line, "gart") >= MiB,
				     "its GART: %s", line);
			igt_assert_f(field(line, "busy_pct") > 0,
				     "its render time: %s", line);
		}
	}
	igt_assert_eq(pclose(f), 0);
	igt_assert_f(seen_vis, "no visible-VRAM segment line\n");
	igt_assert_f(policy == 3, "the policy was not shown\n");
	igt_assert_eq(seen_child, want_child);
	if (want_child)
		igt_assert_f(subs > 0, "no submissions per second shown\n");
}

igt_main
{
	igt_fixture
		qt_open(&dev, QGPU_NODE_RENDER);

	igt_subtest("batch-shows-process-and-counters") {
		int p[2];
		pid_t child;
		char c;

		igt_assert_eq(pipe(p), 0);
		child = fork();
		igt_assert(child >= 0);
		if (!child) {
			close(p[0]);
			child_work(p[1]);
		}
		close(p[1]);
		igt_assert_eq(read(p[0], &c, 1), 1);
		close(p[0]);
		run_top(child, true);
		kill(child, SIGKILL);
		igt_assert_eq(waitpid(child, NULL, 0), child);
		run_top(child, false);
	}
}
