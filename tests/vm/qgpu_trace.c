// SPDX-License-Identifier: MIT
/*
 * qgpu_trace: the driver's tracepoints (TRACE_SYSTEM qgpu) through the
 * guest's tracefs. A small workload (create, make resident, submit, evict,
 * destroy, a faulting DMA buffer) must leave each event it causes in the
 * trace, with the fields that say what happened.
 */
#include "qgpu_tracefs.h"

#define SZ	(256 * 1024)

static struct qgpu_dev dev;

/* Does some line of @trace hold the event @event and every one of @fields? */
static bool has(const char *trace, const char *event, const char *f1,
		const char *f2)
{
	const char *p = trace;
	char ev[64];

	snprintf(ev, sizeof(ev), " %s: ", event);
	while ((p = strstr(p, ev))) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(n < 511 ? n : 511), p);
		if ((!f1 || strstr(line, f1)) && (!f2 || strstr(line, f2)))
			return true;
		p += n;
	}
	return false;
}

igt_main
{
	igt_fixture {
		char path[128];
		struct stat st;

		qt_open(&dev, QGPU_NODE_RENDER);
		qt_find_tracefs();
		igt_require_f(qt_tdir[0], "no tracefs\n");
		snprintf(path, sizeof(path), "%s/events/qgpu", qt_tdir);
		igt_assert_f(!stat(path, &st), "no qgpu events in %s\n", qt_tdir);
	}

	igt_subtest("events-of-a-workload") {
		char want[64], ctxs[32], *t;
		uint32_t h, ctx = qt_ctx(dev.fd), bad = qt_ctx(dev.fd);
		struct qgpu_cb *cb = qt_cb(&dev);
		struct drm_qgpu_submit args;

		qt_twrite("tracing_on", "0");
		qt_twrite("trace", "");
		qt_twrite("buffer_size_kb", "4096");
		qt_twrite("events/qgpu/enable", "1");
		qt_twrite("tracing_on", "1");

		h = qt_bo(dev.fd, SZ, QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			  QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
		qgpu_cb_bind(cb, 0, h, 0, SZ);
		qgpu_cb_fill(cb, 0, 0, SZ, 0x1234);
		qt_run(dev.fd, ctx, cb, 20);
		qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
		/* a DMA buffer the kernel rejects (no patch entry) ... */
		qgpu_cb_to_submit(cb, ctx, &args);
		args.num_patches = 0;
		igt_assert_eq(qgpu_submit_raw(dev.fd, &args), -EINVAL);
		/* ... and one the device faults on (slot 5 never bound) */
		qgpu_cb_reset(cb);
		qgpu_cb_fill(cb, 5, 0, 4, 0xbad);
		igt_expect_dmesg("device fault");
		igt_assert_eq(qgpu_submit_wait(dev.fd, bad, cb, 20 * SEC_NS,
					       NULL), 0);
		qt_close(dev.fd, h);
		qt_twrite("tracing_on", "0");
		qt_twrite("events/qgpu/enable", "0");

		t = qt_tread();
		snprintf(want, sizeof(want), "size=%u", SZ);
		igt_assert_f(has(t, "qgpu_bo_create", want, NULL),
			     "no qgpu_bo_create %s\n", want);
		igt_assert(has(t, "qgpu_make_resident", "want=1 segment=1",
			       "ret=0"));
		snprintf(want, sizeof(want), "to=1 bytes=%u", SZ);
		igt_assert_f(has(t, "qgpu_move", want, NULL), "no move %s\n",
			     want);
		snprintf(want, sizeof(want), "to=0 bytes=%u", SZ);
		igt_assert_f(has(t, "qgpu_move", want, NULL), "no move %s\n",
			     want);
		igt_assert(has(t, "qgpu_evict", "from=1 to_system=1", NULL));
		igt_assert(has(t, "qgpu_paging_submit", "dwords=", NULL));
		snprintf(ctxs, sizeof(ctxs), "ctx=%u ", ctx);
		igt_assert(has(t, "qgpu_submit", ctxs, "portions=1 ret=0"));
		igt_assert(has(t, "qgpu_submit", ctxs, "portions=0 ret=-22"));
		igt_assert(has(t, "qgpu_split_portion", ctxs, "portion=0 start=0"));
		snprintf(ctxs, sizeof(ctxs), "engine=1 ctx=%u ", ctx);
		igt_assert(has(t, "qgpu_job_run", ctxs, NULL));
		igt_assert(has(t, "qgpu_job_done", ctxs, NULL));
		igt_assert(has(t, "qgpu_job_run", "engine=0 ctx=0", NULL));
		snprintf(ctxs, sizeof(ctxs), "engine=1 ctx=%u ", bad);
		snprintf(want, sizeof(want), "reason=%u ", QGPU_FAULT_BAD_SLOT);
		igt_assert_f(has(t, "qgpu_fault", want, ctxs),
			     "no fault event %s%s\n", want, ctxs);
		igt_assert(has(t, "qgpu_bo_destroy", NULL, NULL));
		free(t);
		qt_cb_free(cb);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, ctx), 0);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, bad), 0);
	}

	igt_subtest("events-off-by-default") {
		char *t;

		qt_twrite("trace", "");
		qt_twrite("tracing_on", "1");
		qt_close(dev.fd, qt_bo(dev.fd, 4096,
				       QGPU_SEGBIT(QGPU_SEG_APERTURE), 0, 0));
		qt_twrite("tracing_on", "0");
		t = qt_tread();
		igt_assert(!has(t, "qgpu_bo_create", NULL, NULL));
		free(t);
	}
}
