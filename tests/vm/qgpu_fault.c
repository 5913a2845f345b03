// SPDX-License-Identifier: MIT
/*
 * qgpu_fault: device faults are never lost, and a faulted context runs no
 * more work (device version 1.1: fault queue, per-context fault state).
 *
 * - Several contexts (of one file, of two processes, or a burst released
 *   at once behind a WAIT) fault at nearly the same time: every one of them
 *   ends up lost with its own fault, and the global faults counter grows by
 *   exactly the number of faults.
 * - A context whose first split portion faults runs none of its later
 *   work: neither the later portions of the same submit nor later submits.
 *
 * Meant for a device whose VRAM is small next to the guest's memory (the
 * split subtest needs two allocations that cannot both be in VRAM), e.g.
 * vram-size=32M.
 */
#include "qgpu_test.h"

#define VIS QGPU_SEGBIT(QGPU_SEG_VISIBLE)
#define APT QGPU_SEGBIT(QGPU_SEG_APERTURE)
#define ROUNDS 10

static struct qgpu_dev dev;

static uint64_t faults_now(int fd)
{
	struct drm_qgpu_stats st;

	qt_stats(fd, &st);
	return st.faults;
}

/*
 * Faulting buffers. Kind 0: a FILL through unbound slot 5 (BAD_SLOT).
 * Kind 1: a FILL past the end of a 4 KiB window on @h (SLOT_BOUNDS), after
 * a FENCE of @value at @off that works. Kind 2: a FILL of 3 bytes
 * (BAD_ALIGN). Kinds 0 and 2 use no allocation, so nothing orders their
 * submits after other work. Returns the byte offset of the faulting
 * command.
 */
static uint32_t fault_cb(struct qgpu_cb *cb, int kind, uint32_t h,
			 uint32_t off, uint64_t value)
{
	uint32_t at;

	qgpu_cb_reset(cb);
	if (kind == 0) {
		qgpu_cb_nop(cb, 1);
		at = qgpu_cb_offset(cb);
		qgpu_cb_fill(cb, 5, 0, 4, 0xbadbad00);
	} else if (kind == 2) {
		qgpu_cb_nop(cb, 2);
		at = qgpu_cb_offset(cb);
		qgpu_cb_fill(cb, 5, 0, 3, 0xbadbad02);
	} else {
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_fence(cb, 0, off, value);
		at = qgpu_cb_offset(cb);
		qgpu_cb_fill(cb, 0, 4092, 8, 0xbadbad01);
	}
	igt_assert_eq(cb->error, 0);
	return at;
}

/* The context is lost because of its own fault. */
static void expect_lost(int fd, uint32_t c, uint32_t reason, uint32_t at)
{
	struct drm_qgpu_context_status cs;

	igt_assert_eq(qgpu_query_context(fd, c, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_LOST_FAULT,
		     "context %u: state %s, expected lost by a fault\n", c,
		     qgpu_ctx_state_name(cs.state));
	igt_assert_f(cs.fault_reason == reason && cs.fault_offset == at,
		     "context %u: fault %s at %u, expected %s at %u\n", c,
		     qgpu_fault_name(cs.fault_reason), cs.fault_offset,
		     qgpu_fault_name(reason), at);
}

/* A forked worker (no igt asserts): fault once, check, exit 0 when right. */
static int worker(int go_fd)
{
	struct drm_qgpu_context_status cs;
	struct qgpu_dev d;
	struct qgpu_cb cb;
	uint32_t c = 0, at;
	char go;
	int ret;

	if (qgpu_open_path(&d, dev.path) || qgpu_ctx_create(d.fd, &c) ||
	    qgpu_cb_init(&cb, d.info.max_slots))
		return 2;
	qgpu_cb_nop(&cb, 1);
	at = qgpu_cb_offset(&cb);
	qgpu_cb_fill(&cb, 5, 0, 4, 0xbadbad08);
	if (read(go_fd, &go, 1) != 1)
		return 3;
	ret = qgpu_submit_wait(d.fd, c, &cb, 20 * SEC_NS, NULL);
	if (ret)
		return 4;
	if (qgpu_query_context(d.fd, c, &cs) || cs.state != QGPU_CTX_LOST_FAULT ||
	    cs.fault_reason != QGPU_FAULT_BAD_SLOT || cs.fault_offset != at)
		return 5;
	if (qgpu_submit(d.fd, c, &cb, NULL, 0, NULL, 0, NULL) != -ECANCELED)
		return 6;
	qgpu_cb_fini(&cb);
	qgpu_close(&d);
	return 0;
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		igt_expect_dmesg("device fault: reason [0-9]+ engine 1");
	}

	igt_subtest("two-contexts-at-once") {
		struct drm_qgpu_sync_entry sa = { 0 }, sb = { 0 };
		struct qgpu_cb *ca = qt_cb(&dev), *cb = qt_cb(&dev);
		uint64_t f0 = faults_now(dev.fd);
		uint32_t h, *m, at_a, at_b, a, b, i;

		h = qt_result_buf(dev.fd, 4096, &m);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sa.handle), 0);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sb.handle), 0);
		for (i = 1; i <= ROUNDS; i++) {
			a = qt_ctx(dev.fd);
			b = qt_ctx(dev.fd);
			at_a = fault_cb(ca, 0, 0, 0, 0);
			at_b = fault_cb(cb, 1, h, 0, i);
			/* both queued before either runs or is waited for */
			igt_assert_eq(qgpu_submit(dev.fd, a, ca, NULL, 0, &sa,
						  1, NULL), 0);
			igt_assert_eq(qgpu_submit(dev.fd, b, cb, NULL, 0, &sb,
						  1, NULL), 0);
			igt_assert_eq(qgpu_syncobj_wait(dev.fd, sa.handle, 0,
							20 * SEC_NS), 0);
			igt_assert_eq(qgpu_syncobj_wait(dev.fd, sb.handle, 0,
							20 * SEC_NS), 0);
			expect_lost(dev.fd, a, QGPU_FAULT_BAD_SLOT, at_a);
			expect_lost(dev.fd, b, QGPU_FAULT_SLOT_BOUNDS, at_b);
			/* work before the fault ran, the faulting FILL did not */
			igt_assert_eq(m[0], i);
			igt_assert_eq(m[1023], 0);
			igt_assert_f(faults_now(dev.fd) - f0 == 2 * i,
				     "round %u: %llu faults counted, expected %u\n",
				     i, (unsigned long long)(faults_now(dev.fd) - f0),
				     2 * i);
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, a), 0);
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, b), 0);
		}
		qgpu_syncobj_destroy(dev.fd, sa.handle);
		qgpu_syncobj_destroy(dev.fd, sb.handle);
		qt_cb_free(ca);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, m, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("two-processes-at-once") {
		uint64_t f0 = faults_now(dev.fd);
		int go[2], st[2], i, j;
		pid_t pid[2];

		for (i = 1; i <= ROUNDS; i++) {
			igt_assert_eq(pipe(go), 0);
			for (j = 0; j < 2; j++) {
				pid[j] = fork();
				igt_assert(pid[j] >= 0);
				if (pid[j] == 0) {
					close(go[1]);
					_exit(worker(go[0]));
				}
			}
			close(go[0]);
			/* let both get ready, then release them together */
			usleep(20 * 1000);
			igt_assert_eq(write(go[1], "gg", 2), 2);
			close(go[1]);
			for (j = 0; j < 2; j++)
				st[j] = qt_wait_child(pid[j]);
			igt_assert_f(st[0] == 0 && st[1] == 0,
				     "round %d: workers exited with %d and %d\n",
				     i, st[0], st[1]);
			igt_assert_f(faults_now(dev.fd) - f0 == 2ull * i,
				     "round %d: %llu faults counted, expected %d\n",
				     i, (unsigned long long)(faults_now(dev.fd) - f0),
				     2 * i);
		}
	}

	igt_subtest("burst-behind-wait") {
		/*
		 * Faulting buffers of many contexts queue on the ring behind
		 * a WAIT; releasing it runs them all in one go, so the device
		 * records them all before the driver handles any.
		 */
		struct drm_qgpu_sync_entry sg = { 0 }, sf[12];
		const uint32_t n = 12;
		struct qgpu_cb *cb = qt_cb(&dev);
		uint64_t f0 = faults_now(dev.fd), *gm;
		uint32_t gate = qt_ctx(dev.fd), c[12], at[12], h, i;
		struct drm_qgpu_context_status cs;

		h = qt_bo(dev.fd, 4096, VIS | APT, QGPU_GEM_CPU_ACCESS, 0);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
		gm = qt_map(dev.fd, h, 4096);
		memset(gm, 0, 4096);
		igt_assert_eq(qgpu_syncobj_create(dev.fd, &sg.handle), 0);
		qgpu_cb_bind(cb, 0, h, 0, 4096);
		qgpu_cb_wait(cb, 0, 0, 1);
		qgpu_cb_fence(cb, 0, 8, 2);
		igt_assert_eq(qgpu_submit(dev.fd, gate, cb, NULL, 0, &sg, 1,
					  NULL), 0);
		memset(sf, 0, sizeof(sf));
		for (i = 0; i < n; i++) {
			c[i] = qt_ctx(dev.fd);
			igt_assert_eq(qgpu_syncobj_create(dev.fd, &sf[i].handle),
				      0);
			at[i] = fault_cb(cb, i & 1 ? 2 : 0, 0, 0, 0);
			igt_assert_eq(qgpu_submit(dev.fd, c[i], cb, NULL, 0,
						  &sf[i], 1, NULL), 0);
		}
		usleep(100 * 1000);
		igt_assert_eq_u64(gm[1], 0);	/* still blocked */
		__atomic_store_n(&gm[0], 1, __ATOMIC_SEQ_CST);
		igt_assert_eq(qgpu_syncobj_wait(dev.fd, sg.handle, 0,
						20 * SEC_NS), 0);
		for (i = 0; i < n; i++)
			igt_assert_eq(qgpu_syncobj_wait(dev.fd, sf[i].handle,
							0, 20 * SEC_NS), 0);
		igt_assert_eq_u64(gm[1], 2);
		igt_assert_eq(qgpu_query_context(dev.fd, gate, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_OK);
		for (i = 0; i < n; i++)
			expect_lost(dev.fd, c[i], i & 1 ? QGPU_FAULT_BAD_ALIGN :
				    QGPU_FAULT_BAD_SLOT, at[i]);
		igt_assert_f(faults_now(dev.fd) - f0 == n,
			     "%llu faults counted, expected %u\n",
			     (unsigned long long)(faults_now(dev.fd) - f0), n);
		for (i = 0; i < n; i++)
			igt_assert_eq(qgpu_ctx_destroy(dev.fd, c[i]), 0);
		igt_assert_eq(qgpu_ctx_destroy(dev.fd, gate), 0);
		qgpu_syncobj_destroy(dev.fd, sg.handle);
		for (i = 0; i < n; i++)
			qgpu_syncobj_destroy(dev.fd, sf[i].handle);
		qt_cb_free(cb);
		qt_unmap(dev.fd, h, gm, 4096);
		qt_close(dev.fd, h);
	}

	igt_subtest("faulted-context-runs-nothing-more") {
		/*
		 * Portion 1 binds A and faults; the next binding change needs
		 * B, which cannot be in VRAM with A, so the buffer is split
		 * there and portion 2 (which fills R) is queued behind the
		 * fault. R must stay untouched, and so must it after a later
		 * submit of the same context, which is refused.
		 */
		uint64_t chunk = (qgpu_vram_usable(&dev) * 6 / 10) & ~4095ull;
		uint64_t f0 = faults_now(dev.fd);
		uint32_t a, b, r, *rm, c = qt_ctx(dev.fd), at, portions = 0;
		struct drm_qgpu_context_status cs;
		struct qgpu_cb *cb = qt_cb(&dev);
		int ret;

		a = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		b = qt_bo(dev.fd, chunk, qt_vram_mask(&dev), 0, 0);
		r = qt_result_buf(dev.fd, 4096, &rm);
		qgpu_cb_bind(cb, 0, a, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, r, 0, 4096);
		qgpu_cb_fill(cb, 1, 0, 4, 0x600d0001);	/* before the fault */
		qgpu_cb_fill(cb, 0, 0, 4096, 0x600d0002);
		at = qgpu_cb_offset(cb);
		qgpu_cb_fill(cb, 5, 0, 4, 0xbadbad03);	/* unbound: faults */
		qgpu_cb_fill(cb, 1, 4, 4, 0xbadbad04);	/* same portion */
		qgpu_cb_split_point(cb);
		qgpu_cb_bind(cb, 0, b, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, r, 0, 4096);
		qgpu_cb_fill(cb, 0, 0, 4096, 0xbadbad05);
		qgpu_cb_fill(cb, 1, 8, 4, 0xbadbad06);	/* later portion */
		igt_assert_eq(cb->error, 0);
		ret = qgpu_submit_wait(dev.fd, c, cb, 60 * SEC_NS, &portions);
		igt_assert_f(ret == 0, "submit+wait: %s\n", strerror(-ret));
		igt_assert_f(portions >= 2,
			     "%u portion(s): the buffer was not split (VRAM %llu, chunk %llu)\n",
			     portions,
			     (unsigned long long)qgpu_vram_usable(&dev),
			     (unsigned long long)chunk);
		expect_lost(dev.fd, c, QGPU_FAULT_BAD_SLOT, at);
		igt_assert_eq(rm[0], 0x600d0001);
		igt_assert_eq(rm[1], 0);
		igt_assert_eq(rm[2], 0);
		igt_assert_eq_u64(faults_now(dev.fd) - f0, 1);

		/* a later submit of the context is refused, nothing runs */
		qgpu_cb_reset(cb);
		qgpu_cb_bind(cb, 1, r, 0, 4096);
		qgpu_cb_fill(cb, 1, 12, 4, 0xbadbad07);
		igt_assert_eq(qgpu_submit_wait(dev.fd, c, cb, 10 * SEC_NS,
					       NULL), -ECANCELED);
		usleep(50 * 1000);
		igt_assert_eq(rm[3], 0);
		igt_assert_eq(qgpu_query_context(dev.fd, c, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_LOST_FAULT);
		igt_assert_eq_u64(faults_now(dev.fd) - f0, 1);

		/* another context of the same file works */
		qgpu_ctx_destroy(dev.fd, c);
		c = qt_ctx(dev.fd);
		qt_run(dev.fd, c, cb, 10);
		igt_assert_eq(rm[3], 0xbadbad07);
		qgpu_ctx_destroy(dev.fd, c);
		qt_cb_free(cb);
		qt_unmap(dev.fd, r, rm, 4096);
		qt_close(dev.fd, r);
		qt_close(dev.fd, a);
		qt_close(dev.fd, b);
	}

	igt_subtest("counters-back-to-zero")
		qt_assert_no_allocations(dev.fd);

	igt_fixture
		qgpu_close(&dev);
}
