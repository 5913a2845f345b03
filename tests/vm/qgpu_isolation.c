// SPDX-License-Identifier: MIT
/*
 * qgpu_isolation: what a submit may and may not do to memory that is not
 * the caller's, checked from user space with attacks and careful use.
 *
 *  - Split offsets are command boundaries of the DMA buffer (the ones the
 *    kernel's parser walked). A split offset inside a command fails SUBMIT
 *    with EINVAL and nothing runs. Attack: a BIND to another process's
 *    allocation hidden in a NOP's payload, reached through a split offset.
 *  - After a split the device's slot table never reaches memory the kernel
 *    does not hold for the context: a slot whose allocation was replaced or
 *    dropped (and a BIND already patched for an allocation that is no
 *    longer required) must not reach that memory once it is given to
 *    another process. Attack: the old range of a dropped aperture
 *    allocation is refilled, in the same submit, by another process's
 *    allocation evicted from VRAM; the stale slot then reads and writes it.
 *  - An offered allocation discarded under pressure copies nothing, yet its
 *    VRAM is reused only behind the work queued on it. Attack: work held
 *    by an in-sync reads and overwrites the allocation after it was
 *    offered and evicted, and another process took the range meanwhile.
 *  - ENOSPC means nothing ran: no portion, no out-fence, no counters, no
 *    content changed.
 *  - A buffer whose split points all fit is not refused, whatever the
 *    order of its allocation-list and patch entries, and entries sharing a
 *    SplitOffset may all be re-placed there.
 *
 * Meant for a device with non-visible VRAM and a small GART, e.g.
 * vram-size=32M visible-vram-size=16M gart-size=8M host-aperture-size=4M.
 */
#include <pthread.h>

#include "qgpu_attack.h"
#include "qgpu_swsync.h"

static struct qgpu_dev dev;
static bool have_local;

#define VIS QA_VIS
#define LOC QA_LOC
#define APT QA_APT

static uint64_t seg_usable(uint32_t id)
{
	return qt_seg_usable(&dev, id);
}

static struct drm_qgpu_segment_stats seg_stats(uint32_t id)
{
	struct drm_qgpu_segment_stats ss;

	qt_seg_stats(dev.fd, id, &ss);
	return ss;
}

/* Preconditions of the layouts below: nothing else in these segments. */
static void require_empty(uint32_t id)
{
	struct drm_qgpu_segment_stats ss = seg_stats(id);
	const struct drm_qgpu_segment *s = qgpu_dev_segment(&dev, id);

	igt_assert_f(ss.allocations == 0 && s && ss.used == s->reserved_size,
		     "precondition: segment %s holds %u allocation(s), %llu bytes\n",
		     qgpu_segment_name(id), ss.allocations,
		     (unsigned long long)ss.used);
}

static uint64_t gpu_addr(int fd, uint32_t h)
{
	return qt_info(fd, h).gpu_addr;
}

/* ------------------------------------------------------------------------ */
/* R1: split offsets are command boundaries                                 */

/*
 * Sweep every dword offset of a buffer of mixed commands as the split
 * offset of the patch entry of its second BIND (header at @bind_at):
 * accepted exactly at the command boundaries <= bind_at.
 */
static void split_offset_sweep(void)
{
	uint32_t r0h, r1h, *r0, *r1, c, bind_at, s, i, nb = 0;
	uint32_t bounds[32], wrong[256], nwrong = 0;
	struct qgpu_cb *cb = qt_cb(&dev);
	struct qa_counts k0, k1;

	r0h = qt_result_buf(dev.fd, 4096, &r0);
	r1h = qt_result_buf(dev.fd, 4096, &r1);
	c = qt_ctx(dev.fd);

	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_bind(cb, 0, r0h, 0, 4096);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_nop(cb, 3);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_fill(cb, 0, 0, 16, 0x11111111);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_copy(cb, 0, 64, 0, 0, 16);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_checksum(cb, 0, 0, 16, 0, 128);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_fence(cb, 0, 256, 7);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_timestamp(cb, 0, 264);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_xor(cb, 0, 512, 0, 0, 0, 64, 4);
	bounds[nb++] = qgpu_cb_offset(cb);
	qgpu_cb_nop(cb, 1);
	bind_at = qgpu_cb_offset(cb);
	bounds[nb++] = bind_at;
	qgpu_cb_bind(cb, 1, r1h, 0, 4096);
	qgpu_cb_fill(cb, 1, 0, 64, 0x22222222);
	qgpu_cb_wait(cb, 0, 256, 7);		/* already true */
	qgpu_cb_add(cb, 1, 128, 1, 0, 0, 0, 4);
	qgpu_cb_fence(cb, 1, 256, 9);
	igt_assert_eq(cb->npatches, 2);
	igt_assert_eq(cb->error, 0);

	for (s = 0; s < qgpu_cb_offset(cb); s += 4) {
		bool boundary = false;
		uint32_t sync = 0;
		int ret;

		for (i = 0; i < nb; i++)
			boundary |= bounds[i] == s;
		boundary &= s <= bind_at;
		cb->patches[1].split_offset = s;
		r1[64] = 0;
		qa_counts_read(dev.fd, c, &k0);
		ret = qa_submit(dev.fd, c, cb, &sync, NULL);
		qa_counts_read(dev.fd, c, &k1);
		if (ret == 0)
			qa_settle(dev.fd, c, sync);
		if (boundary) {
			qa_check(ret == 0, "split offset %u (a boundary): %s\n",
				 s, strerror(-ret));
			qa_check(ret || r1[64] == 9,
				 "split offset %u: buffer did not complete\n", s);
		} else {
			if (ret != -EINVAL && nwrong < ARRAY_SIZE(wrong))
				wrong[nwrong++] = s;
			if (ret == -EINVAL) {
				qa_check(qa_counts_diff(&k0, &k1, "refused") == 0,
					 "split offset %u refused, yet counted\n", s);
				qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
					 "split offset %u refused, yet the out-syncobj got a fence\n",
					 s);
			}
		}
		qgpu_syncobj_destroy(dev.fd, sync);
		/* a wrongly accepted buffer may have faulted: a fresh context */
		if (qa_ctx_status(dev.fd, c).state != QGPU_CTX_OK) {
			qgpu_ctx_destroy(dev.fd, c);
			c = qt_ctx(dev.fd);
		}
	}
	if (nwrong) {
		char list[1024];
		int n = 0;

		for (i = 0; i < nwrong && n < (int)sizeof(list) - 12; i++)
			n += snprintf(list + n, sizeof(list) - n, " %u", wrong[i]);
		qa_check(false, "split offsets inside commands accepted (expected EINVAL):%s\n",
			 list);
	}
	qgpu_ctx_destroy(dev.fd, c);
	qt_cb_free(cb);
	qt_unmap(dev.fd, r0h, r0, 4096);
	qt_unmap(dev.fd, r1h, r1, 4096);
	qt_close(dev.fd, r0h);
	qt_close(dev.fd, r1h);
	qa_check_done();
}

enum inside_kind { IN_NOP, IN_COPY, IN_FILL, IN_BIND };

/*
 * A buffer that has to split (two visible-only allocations of more than
 * half the visible segment, one after the other on slot 0) whose second
 * BIND's split offset points into the command right before it: every
 * interior dword of that command must be refused, with nothing run.
 */
static void split_offset_inside(enum inside_kind kind)
{
	static const uint32_t lens[] = { 8, QGPU_DMA_COPY_LEN,
					 QGPU_DMA_FILL_LEN, QGPU_DMA_BIND_LEN };
	uint64_t big = (seg_usable(QGPU_SEG_VISIBLE) * 9 / 16) & ~4095ull;
	uint32_t x1, x2, resh, res2, *r, k, t0 = 0;
	struct qa_counts k0, k1;

	x1 = qt_bo(dev.fd, big, VIS, 0, 0);
	x2 = qt_bo(dev.fd, big, VIS, 0, 0);
	resh = qt_result_buf(dev.fd, 4096, &r);
	res2 = qt_bo(dev.fd, 4096, APT, 0, 0);
	for (k = 1; k < lens[kind]; k++) {
		struct qgpu_cb *cb = qt_cb(&dev);
		uint32_t c = qt_ctx(dev.fd), sync = 0, portions = 0;
		int ret;

		qgpu_cb_bind(cb, 0, x1, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, resh, 0, 4096);
		qgpu_cb_fence(cb, 1, 0, 1);
		qgpu_cb_fill(cb, 0, 0, 4096, 0x12345678);
		t0 = qgpu_cb_offset(cb);
		switch (kind) {
		case IN_NOP:
			qgpu_cb_nop(cb, lens[kind]);
			break;
		case IN_COPY:
			qgpu_cb_copy(cb, 1, 64, 1, 0, 16);
			break;
		case IN_FILL:
			qgpu_cb_fill(cb, 1, 128, 16, 0x55555555);
			break;
		case IN_BIND:
			qgpu_cb_bind(cb, 2, res2, 0, 4096);
			break;
		}
		qgpu_cb_bind(cb, 0, x2, 0, QGPU_CB_WHOLE);
		qgpu_cb_fill(cb, 0, 0, 4096, 0x9abcdef0);
		qgpu_cb_fence(cb, 1, 8, 2);
		cb->patches[cb->npatches - 1].split_offset = t0 + 4 * k;
		memset(r, 0, 64);
		qa_counts_read(dev.fd, c, &k0);
		ret = qa_submit(dev.fd, c, cb, &sync, &portions);
		qa_counts_read(dev.fd, c, &k1);	/* before the barrier */
		qa_settle(dev.fd, c, sync);
		qa_check(ret == -EINVAL,
			 "split offset %u (dword %u of the command at %u): submit returned %d (%s), %u portion(s); expected EINVAL\n",
			 t0 + 4 * k, k, t0, ret, strerror(-ret), portions);
		qa_check(r[0] == 0 && r[2] == 0,
			 "split offset %u: a portion ran (markers %u %u)\n",
			 t0 + 4 * k, r[0], r[2]);
		qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
			 "split offset %u: the out-syncobj got a fence\n",
			 t0 + 4 * k);
		qa_check(qa_counts_diff(&k0, &k1, "inside") == 0,
			 "split offset %u: counters moved\n", t0 + 4 * k);
		qgpu_syncobj_destroy(dev.fd, sync);
		qgpu_ctx_destroy(dev.fd, c);
		qt_cb_free(cb);
	}
	qt_close(dev.fd, x1);
	qt_close(dev.fd, x2);
	qt_close(dev.fd, res2);
	qt_unmap(dev.fd, resh, r, 4096);
	qt_close(dev.fd, resh);
	qa_check_done();
}

/*
 * The attack: BIND slot 2 to another process's allocation (its GPU address
 * is all it takes), FILL it and COPY it out, all hidden in a NOP's payload
 * that the kernel's parser skips; a split offset at the hidden BIND makes
 * the device start a portion there. The victim's data must never change,
 * nothing of it may reach the attacker, and the submit is refused.
 */
static void hidden_bind_attack(uint32_t vmask, uint32_t vseg)
{
	uint64_t big = (seg_usable(QGPU_SEG_VISIBLE) * 9 / 16) & ~4095ull;
	uint64_t vsize = 64 * 1024;
	uint32_t x1, x2, resh, *r, c, sync = 0, portions = 0, hidden, n0;
	struct qa_victim *v;
	struct qa_counts k0, k1;
	struct qgpu_cb *cb;
	uint32_t nop[22];
	int ret;

	v = qa_victim_start(dev.path, vsize, vmask, vseg, 0x77);
	igt_info("victim allocation: %s, GPU address %#llx\n",
		 qgpu_segment_name(v->rep.segment),
		 (unsigned long long)v->rep.gpu_addr);
	igt_assert_eq(v->rep.segment, vseg);
	x1 = qt_bo(dev.fd, big, VIS, 0, 0);
	x2 = qt_bo(dev.fd, big, VIS, 0, 0);
	resh = qt_result_buf(dev.fd, 64 * 1024, &r);
	c = qt_ctx(dev.fd);

	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, x1, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, resh, 0, QGPU_CB_WHOLE);
	qgpu_cb_fence(cb, 1, 0, 1);
	qgpu_cb_fill(cb, 0, 0, 4096, 0x12121212);
	/* NOP: 4 padding dwords, then BIND, FILL and COPY the kernel skips */
	memset(nop, 0, sizeof(nop));
	nop[0] = QGPU_CMD_HDR(QGPU_DMA_NOP, 0, 22);
	nop[5] = QGPU_CMD_HDR(QGPU_DMA_BIND, 0, QGPU_DMA_BIND_LEN);
	nop[6] = 2;
	nop[7] = (uint32_t)v->rep.gpu_addr;
	nop[8] = (uint32_t)(v->rep.gpu_addr >> 32);
	nop[9] = (uint32_t)vsize;
	nop[10] = 0;
	nop[11] = QGPU_CMD_HDR(QGPU_DMA_FILL, 0, QGPU_DMA_FILL_LEN);
	nop[12] = 2;
	nop[13] = 0;
	nop[14] = 4096;
	nop[15] = 0xdeadbeef;
	nop[16] = QGPU_CMD_HDR(QGPU_DMA_COPY, 0, QGPU_DMA_COPY_LEN);
	nop[17] = 1;		/* dslot */
	nop[18] = 4096;		/* doff */
	nop[19] = 2;		/* sslot */
	nop[20] = 4096;		/* soff: past the FILL */
	nop[21] = 8192;
	n0 = qgpu_cb_offset(cb);
	qgpu_cb_emit_raw(cb, nop, 22);
	hidden = n0 + 5 * 4;
	/* the second big allocation forces a split at its entry */
	qgpu_cb_bind(cb, 0, x2, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, 4096, 0x34343434);
	qgpu_cb_fence(cb, 1, 8, 2);
	cb->patches[cb->npatches - 1].split_offset = hidden;

	qa_counts_read(dev.fd, c, &k0);
	ret = qa_submit(dev.fd, c, cb, &sync, &portions);
	qa_counts_read(dev.fd, c, &k1);	/* before the barrier */
	qa_settle(dev.fd, c, sync);
	{
		struct drm_qgpu_context_status cs = qa_ctx_status(dev.fd, c);

		igt_info("submit: %d (%s), %u portion(s); context %s, fault %s at %u\n",
			 ret, strerror(-ret), portions,
			 qgpu_ctx_state_name(cs.state),
			 qgpu_fault_name(cs.fault_reason), cs.fault_offset);
	}
	qa_check(qa_victim_check(v, NULL) == 0,
		 "the victim's allocation changed\n");
	qa_check(qa_count_secret(r, 64 * 1024) == 0,
		 "%llu secret word(s) of the victim reached the attacker\n",
		 (unsigned long long)qa_count_secret(r, 64 * 1024));
	qa_check(ret == -EINVAL,
		 "split offset %u inside the NOP at %u accepted (%d, %s)\n",
		 hidden, n0, ret, strerror(-ret));
	qa_check(r[0] == 0, "a portion ran\n");
	qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
		 "the out-syncobj got a fence\n");
	qa_check(qa_counts_diff(&k0, &k1, "hidden") == 0, "counters moved\n");
	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, c);
	qt_cb_free(cb);
	qt_close(dev.fd, x1);
	qt_close(dev.fd, x2);
	qt_unmap(dev.fd, resh, r, 64 * 1024);
	qt_close(dev.fd, resh);
}

/* ------------------------------------------------------------------------ */
/* R2: stale slots after a split                                            */

enum stale_kind {
	STALE_REPLACED,	/* slot 0: A, then B (split <= X, BIND after X) */
	STALE_UNBOUND,	/* slot 0: A, then NULL (split <= X, BIND after X) */
	STALE_PATCHED,	/* slot 0: A (BIND after X, patched), then B */
};

static const char *const stale_names[] = {
	"replaced", "unbound", "patched-bind-replaced",
};

/*
 * The attacker's aperture allocation A (@a bytes) fills the aperture with
 * F. The buffer binds slot 0 to A, then re-binds slot 0 (to B, or to
 * nothing) with a split offset S1 <= X but the BIND after X, and at X
 * needs C (aperture, @c bytes) and E (all visible VRAM). Split at X: A is
 * no longer in the resource table, so placing C may evict it; placing E
 * evicts the victim's allocation V (@a - @c bytes, visible VRAM) into the
 * aperture, where the only room left is A's old range. Between X and the
 * re-BIND the buffer COPYs slot 0 into its own D and FILLs slot 0.
 *
 * The rule: the slot either faults (BAD_SLOT) or reaches only the caller's
 * own memory; V is never read or written. (STALE_PATCHED: the BIND of A
 * itself lies after X and was patched before the split.)
 */
static void stale_slot(enum stale_kind kind, uint64_t a, uint64_t c)
{
	uint64_t v = a - c, vis = seg_usable(QGPU_SEG_VISIBLE), fsize;
	uint64_t dsize = a + 64 * 1024, a_old;
	uint32_t D, B, A, F, C, E, ctx, sync = 0, portions = 0, s1, x;
	struct drm_qgpu_segment_stats ap;
	struct drm_qgpu_context_status cs;
	struct qa_victim_report vr;
	struct qa_counts k0, k1;
	struct qa_victim *vic;
	volatile uint32_t *d;
	struct qgpu_cb *cb;
	uint64_t leaked, bad, foreign, i;
	int ret, e_first;

	igt_require(have_local);
	require_empty(QGPU_SEG_VISIBLE);
	require_empty(QGPU_SEG_APERTURE);
	/* the attacker's own D (results) and B live in non-visible VRAM */
	D = qt_bo(dev.fd, dsize, LOC | APT, QGPU_GEM_CPU_ACCESS,
		  QGPU_PREF(QGPU_SEG_LOCAL, 0, 0));
	qt_reside(dev.fd, D, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL);
	d = qt_map(dev.fd, D, dsize);
	memset((void *)d, 0, dsize);
	B = qt_bo(dev.fd, 64 * 1024, LOC, 0, 0);
	qt_reside(dev.fd, B, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_LOCAL);
	/* A, then F over the rest of the aperture */
	A = qt_bo(dev.fd, a, APT, 0, 0);
	qt_reside(dev.fd, A, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
	ap = seg_stats(QGPU_SEG_APERTURE);
	fsize = ap.size - ap.used;
	F = qt_bo(dev.fd, fsize, APT, 0, 0);
	qt_reside(dev.fd, F, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
	C = qt_bo(dev.fd, c, APT, 0, 0);
	E = qt_bo(dev.fd, vis, VIS, 0, 0);
	a_old = gpu_addr(dev.fd, A);
	/* the victim: another process, its allocation in visible VRAM */
	vic = qa_victim_start(dev.path, v, VIS | APT, QGPU_SEG_VISIBLE, 0x5a);
	ctx = qt_ctx(dev.fd);

	cb = qt_cb(&dev);
	if (kind != STALE_PATCHED)
		qgpu_cb_bind(cb, 0, A, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, D, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 2, F, 0, QGPU_CB_WHOLE);
	if (kind != STALE_PATCHED)
		qgpu_cb_fill(cb, 0, 0, a, 0x0a0a0a0a);
	qgpu_cb_fence(cb, 1, 8, 1);
	s1 = qgpu_cb_offset(cb);
	qgpu_cb_nop(cb, 1);
	x = qgpu_cb_offset(cb);
	qgpu_cb_nop(cb, 1);
	if (kind == STALE_PATCHED)
		qgpu_cb_bind(cb, 0, A, 0, QGPU_CB_WHOLE);
	/* through slot 0: read all of A's range into D, then overwrite it */
	qgpu_cb_checksum(cb, 0, 0, a, 1, 0);
	qgpu_cb_copy(cb, 1, 64 * 1024, 0, 0, a);
	qgpu_cb_fill(cb, 0, 0, a, 0x41414141);
	if (kind == STALE_UNBOUND)
		qgpu_cb_unbind(cb, 0);
	else
		qgpu_cb_bind(cb, 0, B, 0, QGPU_CB_WHOLE);
	e_first = cb->npatches;
	qgpu_cb_bind(cb, 3, C, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 4, E, 0, QGPU_CB_WHOLE);
	qgpu_cb_fence(cb, 1, 16, 2);
	igt_assert_eq(cb->error, 0);
	/* slot 0's entries: split S1 <= X; C and E: split X */
	cb->patches[e_first - 1].split_offset = s1;
	if (kind == STALE_PATCHED)
		cb->patches[e_first - 2].split_offset = s1;
	cb->patches[e_first].split_offset = x;
	cb->patches[e_first + 1].split_offset = x;

	qa_counts_read(dev.fd, ctx, &k0);
	ret = qa_submit(dev.fd, ctx, cb, &sync, &portions);
	qa_counts_read(dev.fd, ctx, &k1);	/* before the barrier */
	qa_settle(dev.fd, ctx, sync);
	cs = qa_ctx_status(dev.fd, ctx);
	leaked = qa_count_secret(d + 16384, a);
	bad = qa_victim_check(vic, &vr);
	igt_info("%s, A %lluK, C %lluK, V %lluK: submit %d (%s), %u portion(s), context %s (fault %s at %u); A was at %#llx, V now in %s at %#llx; C at %#llx\n",
		 stale_names[kind], (unsigned long long)a >> 10,
		 (unsigned long long)c >> 10, (unsigned long long)v >> 10,
		 ret, strerror(-ret), portions, qgpu_ctx_state_name(cs.state),
		 qgpu_fault_name(cs.fault_reason), cs.fault_offset,
		 (unsigned long long)a_old, qgpu_segment_name(vr.segment),
		 (unsigned long long)vr.gpu_addr,
		 (unsigned long long)gpu_addr(dev.fd, C));
	qa_check(leaked == 0,
		 "%s: %llu word(s) of another process's allocation reached the attacker through the stale slot\n",
		 stale_names[kind], (unsigned long long)leaked);
	qa_check(bad == 0,
		 "%s: %llu word(s) of another process's allocation were written through the stale slot\n",
		 stale_names[kind], (unsigned long long)bad);
	/* whatever the stale slot read, it is only what this file wrote */
	foreign = 0;
	for (i = 0; i < a / 4; i++)
		foreign += d[16384 + i] != 0 && d[16384 + i] != 0x0a0a0a0a;
	qa_check(foreign == 0,
		 "%s: %llu word(s) read through the stale slot are neither zero nor what this file wrote there\n",
		 stale_names[kind], (unsigned long long)foreign);
	if (cs.state == QGPU_CTX_LOST_FAULT)
		qa_check(cs.fault_reason == QGPU_FAULT_BAD_SLOT,
			 "%s: the stale slot faulted with %s, expected BAD_SLOT\n",
			 stale_names[kind], qgpu_fault_name(cs.fault_reason));
	if (ret == -ENOSPC) {
		/* R6: then nothing ran */
		qa_check(d[2] == 0, "%s: ENOSPC after a portion ran\n",
			 stale_names[kind]);
		qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
			 "%s: ENOSPC, yet the out-syncobj got a fence\n",
			 stale_names[kind]);
		qa_check(qa_counts_diff(&k0, &k1, "ENOSPC") == 0,
			 "%s: ENOSPC, yet counted\n", stale_names[kind]);
	}

	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_cb_free(cb);
	qt_unmap(dev.fd, D, (void *)d, dsize);
	qt_close(dev.fd, D);
	qt_close(dev.fd, B);
	qt_close(dev.fd, A);
	qt_close(dev.fd, F);
	qt_close(dev.fd, C);
	qt_close(dev.fd, E);
}

static void stale_slot_layouts(enum stale_kind kind)
{
	static const struct { uint64_t a, c; } lay[] = {
		{ 1 * MiB, 512 * 1024 },
		{ 2 * MiB, 1 * MiB },
		{ 2 * MiB, 1536 * 1024 },
		{ 3 * MiB, 1 * MiB },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lay); i++)
		stale_slot(kind, lay[i].a, lay[i].c);
	qa_check_done();
}

/* ------------------------------------------------------------------------ */
/* R6: ENOSPC means nothing ran                                             */

/*
 * Visible VRAM holds M0 | P | M2 (quarter, quarter, half; M0 and M2
 * another file's). The buffer uses P, then at X keeps P and needs R (three
 * quarters): that fits by size but only if P is elsewhere than between the
 * others. Either the submit succeeds with every result right, or it fails
 * with ENOSPC having run nothing and changed nothing.
 */
static void enospc_fragmented(void)
{
	uint64_t q = (seg_usable(QGPU_SEG_VISIBLE) / 4) & ~4095ull;
	uint32_t m0, p, m2, r, resh, *res, ctx, sync = 0, portions = 0;
	uint32_t want;
	int other = qt_reopen(&dev), ret;
	struct qa_counts k0, k1;
	struct qgpu_cb *cb;
	void *mp;

	require_empty(QGPU_SEG_VISIBLE);
	m0 = qt_bo(other, q, VIS, QGPU_GEM_CPU_ACCESS, 0);
	p = qt_bo(dev.fd, q, VIS, QGPU_GEM_CPU_ACCESS, 0);
	m2 = qt_bo(other, 2 * q, VIS, QGPU_GEM_CPU_ACCESS, 0);
	r = qt_bo(dev.fd, 3 * q, VIS, 0, 0);
	qt_reside(other, m0, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	qt_reside(dev.fd, p, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	qt_reside(other, m2, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	mp = qt_map(other, m0, q);
	qgpu_pattern_fill(mp, q, 601);
	qt_unmap(other, m0, mp, q);
	mp = qt_map(dev.fd, p, q);
	qgpu_pattern_fill(mp, q, 602);
	qt_unmap(dev.fd, p, mp, q);
	mp = qt_map(other, m2, 2 * q);
	qgpu_pattern_fill(mp, 2 * q, 603);
	qt_unmap(other, m2, mp, 2 * q);
	igt_info("visible VRAM: M0 at %#llx, P at %#llx, M2 at %#llx\n",
		 (unsigned long long)gpu_addr(other, m0),
		 (unsigned long long)gpu_addr(dev.fd, p),
		 (unsigned long long)gpu_addr(other, m2));
	resh = qt_result_buf(dev.fd, 4096, &res);
	ctx = qt_ctx(dev.fd);

	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, p, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, resh, 0, 4096);
	qgpu_cb_fence(cb, 1, 0, 1);
	qgpu_cb_fill(cb, 0, 0, q, 0x66666666);
	qgpu_cb_bind(cb, 2, r, 0, QGPU_CB_WHOLE);	/* split X; P kept */
	qgpu_cb_copy(cb, 2, 0, 0, 0, 4096);
	qgpu_cb_checksum(cb, 2, 0, 4096, 1, 8);
	qgpu_cb_fence(cb, 1, 16, 2);

	qa_counts_read(dev.fd, ctx, &k0);
	ret = qa_submit(dev.fd, ctx, cb, &sync, &portions);
	qa_counts_read(dev.fd, ctx, &k1);	/* before the barrier */
	qa_settle(dev.fd, ctx, sync);
	igt_info("submit: %d (%s), %u portion(s)\n", ret, strerror(-ret),
		 portions);
	want = qt_csum_const(0x66666666, 1024);
	if (ret == 0) {
		qa_check(qa_ctx_status(dev.fd, ctx).state == QGPU_CTX_OK,
			 "context lost\n");
		qa_check(res[0] == 1 && res[4] == 2 && res[2] == want,
			 "wrong results %u %u %#x\n", res[0], res[4], res[2]);
		mp = qt_map(dev.fd, p, q);
		qa_check(qt_csum_const(0x66666666, q / 4) ==
			 qgpu_csum(mp, q / 4), "P does not hold the FILL\n");
		qt_unmap(dev.fd, p, mp, q);
	} else {
		qa_check(ret == -ENOSPC, "submit failed with %s, expected ENOSPC\n",
			 strerror(-ret));
		qa_check(res[0] == 0 && res[2] == 0 && res[4] == 0,
			 "refused with %s after a portion ran (markers %u %#x %u)\n",
			 strerror(-ret), res[0], res[2], res[4]);
		qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
			 "refused, yet the out-syncobj got a fence\n");
		qa_check(qa_counts_diff(&k0, &k1, "ENOSPC") == 0,
			 "refused, yet counted\n");
		mp = qt_map(dev.fd, p, q);
		qa_check(qgpu_pattern_check(mp, q, 602) < 0,
			 "refused, yet P changed\n");
		qt_unmap(dev.fd, p, mp, q);
	}
	mp = qt_map(other, m0, q);
	qa_check(qgpu_pattern_check(mp, q, 601) < 0, "M0 changed\n");
	qt_unmap(other, m0, mp, q);
	mp = qt_map(other, m2, 2 * q);
	qa_check(qgpu_pattern_check(mp, 2 * q, 603) < 0, "M2 changed\n");
	qt_unmap(other, m2, mp, 2 * q);

	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_cb_free(cb);
	qt_close(other, m0);
	qt_close(other, m2);
	qt_close(dev.fd, p);
	qt_close(dev.fd, r);
	qt_unmap(dev.fd, resh, res, 4096);
	qt_close(dev.fd, resh);
	close(other);
	qa_check_done();
}

/*
 * Three split points; the third needs more visible VRAM than there is.
 * The two portions before it must not run.
 */
static void enospc_after_split(void)
{
	uint64_t vis = seg_usable(QGPU_SEG_VISIBLE);
	uint64_t big = (vis * 5 / 8) & ~4095ull, half = (vis / 2) & ~4095ull;
	uint32_t a, b, cc, resh, *res, ctx, sync = 0, portions = 0;
	struct qa_counts k0, k1;
	struct qgpu_cb *cb;
	int ret;

	a = qt_bo(dev.fd, big, VIS, 0, 0);
	b = qt_bo(dev.fd, big, VIS, 0, 0);
	cc = qt_bo(dev.fd, half, VIS, 0, 0);
	resh = qt_result_buf(dev.fd, 4096, &res);
	ctx = qt_ctx(dev.fd);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, a, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, resh, 0, 4096);
	qgpu_cb_fence(cb, 1, 0, 1);
	qgpu_cb_fill(cb, 0, 0, 4096, 1);
	qgpu_cb_bind(cb, 0, b, 0, QGPU_CB_WHOLE);
	qgpu_cb_fence(cb, 1, 8, 2);
	qgpu_cb_fill(cb, 0, 0, 4096, 2);
	qgpu_cb_bind(cb, 2, cc, 0, QGPU_CB_WHOLE);	/* B and C at once */
	qgpu_cb_fence(cb, 1, 16, 3);
	qgpu_cb_copy(cb, 2, 0, 0, 0, 4096);

	qa_counts_read(dev.fd, ctx, &k0);
	ret = qa_submit(dev.fd, ctx, cb, &sync, &portions);
	qa_counts_read(dev.fd, ctx, &k1);	/* before the barrier */
	qa_settle(dev.fd, ctx, sync);
	qa_check(ret == -ENOSPC, "submit: %d (%s), %u portion(s); expected ENOSPC\n",
		 ret, strerror(-ret), portions);
	qa_check(res[0] == 0 && res[2] == 0 && res[4] == 0,
		 "portions ran (markers %u %u %u)\n", res[0], res[2], res[4]);
	qa_check(qa_syncobj_state(dev.fd, sync) == -EINVAL,
		 "the out-syncobj got a fence\n");
	qa_check(qa_counts_diff(&k0, &k1, "ENOSPC") == 0, "counters moved\n");
	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_cb_free(cb);
	qt_close(dev.fd, a);
	qt_close(dev.fd, b);
	qt_close(dev.fd, cc);
	qt_unmap(dev.fd, resh, res, 4096);
	qt_close(dev.fd, resh);
	qa_check_done();
}

/* ------------------------------------------------------------------------ */
/* R7: a buffer that fits is not refused                                    */

/*
 * X (10/16 of the visible segment, visible or local) and Y (half of it,
 * visible only) at the same split point: they fit with X in local VRAM,
 * whichever is listed first, and whether X starts in visible VRAM or not.
 */
static void fits_any_order(bool x_first, bool x_resident)
{
	uint64_t vis = seg_usable(QGPU_SEG_VISIBLE);
	uint64_t xs = (vis * 10 / 16) & ~4095ull, ys = (vis / 2) & ~4095ull;
	uint32_t x, y, resh, *res, ctx, sync = 0, portions = 0;
	struct qgpu_cb *cb;
	int ret;

	igt_require(have_local && seg_usable(QGPU_SEG_LOCAL) >= xs);
	require_empty(QGPU_SEG_VISIBLE);
	require_empty(QGPU_SEG_LOCAL);
	x = qt_bo(dev.fd, xs, VIS | LOC, 0, 0);
	y = qt_bo(dev.fd, ys, VIS, 0, 0);
	if (x_resident) {
		qt_reside(dev.fd, x, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		igt_assert_eq(qt_info(dev.fd, x).segment, QGPU_SEG_VISIBLE);
	}
	resh = qt_result_buf(dev.fd, 4096, &res);
	ctx = qt_ctx(dev.fd);
	cb = qt_cb(&dev);
	if (x_first) {
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, y, 0, QGPU_CB_WHOLE);
	} else {
		qgpu_cb_bind(cb, 1, y, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 0, x, 0, QGPU_CB_WHOLE);
	}
	qgpu_cb_bind(cb, 2, resh, 0, 4096);
	qgpu_cb_fill(cb, 0, 0, xs, 0x0b0b0b0b);
	qgpu_cb_fill(cb, 1, 0, ys, 0x0c0c0c0c);
	qgpu_cb_checksum(cb, 0, 0, xs, 2, 0);
	qgpu_cb_checksum(cb, 1, 0, ys, 2, 4);
	qgpu_cb_fence(cb, 2, 8, 1);
	ret = qa_submit(dev.fd, ctx, cb, &sync, &portions);
	qa_settle(dev.fd, ctx, sync);
	igt_info("X %llu KiB (visible|local)%s, Y %llu KiB (visible), %s first: submit %d (%s), %u portion(s); X in %s, Y in %s\n",
		 (unsigned long long)xs >> 10,
		 x_resident ? " resident in visible" : "",
		 (unsigned long long)ys >> 10, x_first ? "X" : "Y", ret,
		 strerror(-ret), portions,
		 qgpu_segment_name(qt_info(dev.fd, x).segment),
		 qgpu_segment_name(qt_info(dev.fd, y).segment));
	qa_check(ret == 0, "a buffer that fits was refused: %s\n",
		 strerror(-ret));
	if (ret == 0) {
		qa_check(qa_ctx_status(dev.fd, ctx).state == QGPU_CTX_OK,
			 "context lost\n");
		qa_check(res[0] == qt_csum_const(0x0b0b0b0b, xs / 4) &&
			 res[1] == qt_csum_const(0x0c0c0c0c, ys / 4) &&
			 res[2] == 1, "wrong results\n");
	} else {
		qa_check(res[2] == 0, "refused after running\n");
	}
	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_cb_free(cb);
	qt_close(dev.fd, x);
	qt_close(dev.fd, y);
	qt_unmap(dev.fd, resh, res, 4096);
	qt_close(dev.fd, resh);
	qa_check_done();
}

/*
 * P and Q (a quarter of the visible segment each, visible or local) sit in
 * the middle of visible VRAM. At split point X both are re-bound together
 * with R (three quarters, visible only): R fits only if both P and Q move.
 * Entries sharing X are all free to be re-placed there.
 */
static void same_split_all_movable(void)
{
	uint64_t q = (seg_usable(QGPU_SEG_VISIBLE) / 4) & ~4095ull;
	uint32_t sp, p, qq, r, resh, *res, ctx, sync = 0, portions = 0;
	uint32_t want_r = QGPU_CSUM_INIT;
	struct qgpu_cb *cb;
	uint64_t i;
	int ret;

	igt_require(have_local && seg_usable(QGPU_SEG_LOCAL) >= 2 * q);
	require_empty(QGPU_SEG_VISIBLE);
	require_empty(QGPU_SEG_LOCAL);
	sp = qt_bo(dev.fd, q, VIS, 0, 0);
	p = qt_bo(dev.fd, q, VIS | LOC, 0, QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	qq = qt_bo(dev.fd, q, VIS | LOC, 0, QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	r = qt_bo(dev.fd, 3 * q, VIS, 0, 0);
	qt_reside(dev.fd, sp, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	qt_reside(dev.fd, p, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	qt_reside(dev.fd, qq, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	qt_close(dev.fd, sp);
	igt_info("P at %#llx, Q at %#llx (visible VRAM of %llu KiB)\n",
		 (unsigned long long)gpu_addr(dev.fd, p),
		 (unsigned long long)gpu_addr(dev.fd, qq),
		 (unsigned long long)seg_usable(QGPU_SEG_VISIBLE) >> 10);
	resh = qt_result_buf(dev.fd, 4096, &res);
	ctx = qt_ctx(dev.fd);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, p, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, qq, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 3, resh, 0, 4096);
	qgpu_cb_fill(cb, 0, 0, q, 0x70707070);
	qgpu_cb_fill(cb, 1, 0, q, 0x71717171);
	qgpu_cb_fence(cb, 3, 24, 1);
	/* split point X: P and Q re-bound together with R */
	qgpu_cb_bind(cb, 0, p, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, qq, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 2, r, 0, QGPU_CB_WHOLE);
	igt_assert_eq(cb->patches[3].split_offset, cb->patches[5].split_offset);
	qgpu_cb_copy(cb, 2, 0, 0, 0, q);
	qgpu_cb_copy(cb, 2, q, 1, 0, q);
	qgpu_cb_fill(cb, 2, 2 * q, q, 0x72727272);
	qgpu_cb_checksum(cb, 2, 0, 3 * q, 3, 0);
	qgpu_cb_checksum(cb, 0, 0, q, 3, 4);
	qgpu_cb_checksum(cb, 1, 0, q, 3, 8);
	qgpu_cb_fence(cb, 3, 16, 1);
	ret = qa_submit(dev.fd, ctx, cb, &sync, &portions);
	qa_settle(dev.fd, ctx, sync);
	igt_info("submit %d (%s), %u portion(s); P in %s, Q in %s, R in %s\n",
		 ret, strerror(-ret), portions,
		 qgpu_segment_name(qt_info(dev.fd, p).segment),
		 qgpu_segment_name(qt_info(dev.fd, qq).segment),
		 qgpu_segment_name(qt_info(dev.fd, r).segment));
	for (i = 0; i < q / 4; i++)
		want_r = (want_r ^ 0x70707070) * QGPU_CSUM_PRIME;
	for (i = 0; i < q / 4; i++)
		want_r = (want_r ^ 0x71717171) * QGPU_CSUM_PRIME;
	for (i = 0; i < q / 4; i++)
		want_r = (want_r ^ 0x72727272) * QGPU_CSUM_PRIME;
	qa_check(ret == 0, "a buffer that fits was refused: %s\n",
		 strerror(-ret));
	if (ret == 0) {
		qa_check(qa_ctx_status(dev.fd, ctx).state == QGPU_CTX_OK,
			 "context lost\n");
		qa_check(res[0] == want_r, "R: %#x, expected %#x\n", res[0],
			 want_r);
		qa_check(res[1] == qt_csum_const(0x70707070, q / 4),
			 "P lost its content\n");
		qa_check(res[2] == qt_csum_const(0x71717171, q / 4),
			 "Q lost its content\n");
		qa_check(res[4] == 1, "did not complete\n");
	} else {
		qa_check(res[4] == 0 && res[6] == 0,
			 "refused after a portion ran\n");
	}
	qgpu_syncobj_destroy(dev.fd, sync);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_cb_free(cb);
	qt_close(dev.fd, p);
	qt_close(dev.fd, qq);
	qt_close(dev.fd, r);
	qt_unmap(dev.fd, resh, res, 4096);
	qt_close(dev.fd, resh);
	qa_check_done();
}

/* ------------------------------------------------------------------------ */
/* CPU mappings                                                             */

/*
 * A private mapping is a copy-on-write one (VM_MAYWRITE without VM_SHARED,
 * whatever the file's mode): its pages cannot be the device's PFNs (the
 * kernel's vmf_insert_pfn() BUGs on one, with qgpu's memory-manager lock
 * held, which hangs every process using the device). mmap() of a GEM
 * offset or of an exported dma-buf (read/write or read-only) must refuse
 * MAP_PRIVATE (EINVAL), whatever the protection. The mapping, if one is
 * wrongly made, is never touched here.
 */
struct release_later {
	int tl;
	int64_t after_ns;
};

static void *release_later_fn(void *p)
{
	const struct release_later *r = p;
	struct timespec ts = { r->after_ns / SEC_NS, r->after_ns % SEC_NS };

	nanosleep(&ts, NULL);
	qt_sw_inc(r->tl, 1);
	return NULL;
}

/*
 * Discarding an offered allocation copies nothing, but its VRAM must still
 * be reused only behind the work queued on it. The attacker queues a
 * buffer that reads the first MiB of X (the whole of visible VRAM) into its
 * own D and then overwrites all of X, held back by an in-sync; offers X and evicts it
 * (discarded). Another process then takes visible VRAM (it can only land
 * where X was) and writes its secret. The attacker's work, released later,
 * must see X's own content and leave the other process's intact: the new
 * allocation's placement waits behind the attacker's work.
 */
static void offered_discard_waits(void)
{
	uint64_t vis = seg_usable(QGPU_SEG_VISIBLE), csize = 1 << 20;
	uint64_t dsize = csize + 4096;
	struct drm_qgpu_sync_entry in = { 0 }, out = { 0 };
	struct release_later rl = { .after_ns = 700 * 1000 * 1000ll };
	struct drm_qgpu_stats s0, s1;
	struct qa_victim_report vr;
	struct qa_victim *vic;
	volatile uint32_t *d;
	uint64_t leaked, bad, own, i;
	uint32_t X, D, ctx;
	struct qgpu_cb *cb;
	pthread_t thr;

	require_empty(QGPU_SEG_VISIBLE);
	D = qt_bo(dev.fd, dsize, have_local ? LOC | APT : APT,
		  QGPU_GEM_CPU_ACCESS, 0);
	d = qt_map(dev.fd, D, dsize);
	memset((void *)d, 0, dsize);
	X = qt_bo(dev.fd, vis, VIS, 0, 0);
	qt_reside(dev.fd, X, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	ctx = qt_ctx(dev.fd);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, X, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, vis, 0x0a0a0a0a);
	qt_run(dev.fd, ctx, cb, 60);
	qt_cb_free(cb);

	/* read X into D, then overwrite X; held back by the in-sync */
	rl.tl = qt_sw_timeline();
	in.handle = qt_sw_syncobj(dev.fd, rl.tl, 1);
	igt_assert_eq(qgpu_syncobj_create(dev.fd, &out.handle), 0);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 0, X, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind(cb, 1, D, 0, QGPU_CB_WHOLE);
	qgpu_cb_copy(cb, 1, 4096, 0, 0, csize);
	qgpu_cb_fill(cb, 0, 0, vis, 0x41414141);
	qgpu_cb_fence(cb, 1, 0, 1);
	igt_assert_eq(cb->error, 0);
	igt_assert_eq(qgpu_submit(dev.fd, ctx, cb, &in, 1, &out, 1, NULL), 0);
	qt_cb_free(cb);

	/* offered, evicted: discarded, nothing copied */
	qt_stats(dev.fd, &s0);
	igt_assert_eq(qgpu_bo_offer(dev.fd, &X, 1,
				    QGPU_OFFER_PRIORITY_NORMAL), 0);
	qt_reside(dev.fd, X, QGPU_RESIDE_EVICT_SYSTEM, 0);
	qt_stats(dev.fd, &s1);
	igt_assert_eq_u64(s1.offer_discards - s0.offer_discards, 1);

	/* the other process, while the attacker's work is still held */
	igt_assert_eq(pthread_create(&thr, NULL, release_later_fn, &rl), 0);
	vic = qa_victim_start(dev.path, vis, VIS, QGPU_SEG_VISIBLE, 0x3d);
	igt_assert_eq(pthread_join(thr, NULL), 0);
	igt_assert_eq(qgpu_syncobj_wait(dev.fd, out.handle, 0, 60 * SEC_NS),
		      0);
	leaked = qa_count_secret(d + 1024, csize);
	own = 0;
	for (i = 0; i < csize / 4; i++)
		own += d[1024 + i] == 0x0a0a0a0a;
	bad = qa_victim_check(vic, &vr);
	igt_info("victim in %s at %#llx; attacker read %llu secret word(s), %llu of its own of %llu; victim saw %llu changed\n",
		 qgpu_segment_name(vr.segment),
		 (unsigned long long)vr.gpu_addr, (unsigned long long)leaked,
		 (unsigned long long)own, (unsigned long long)csize / 4,
		 (unsigned long long)bad);
	qa_check(leaked == 0,
		 "%llu word(s) of another process's allocation reached the attacker through the discarded allocation's range\n",
		 (unsigned long long)leaked);
	qa_check(bad == 0,
		 "%llu word(s) of another process's allocation were overwritten through the discarded allocation's range\n",
		 (unsigned long long)bad);
	qa_check(own == csize / 4,
		 "the held work read %llu of %llu words of its own allocation's content\n",
		 (unsigned long long)own, (unsigned long long)csize / 4);
	qa_check_done();
	close(rl.tl);
	qgpu_syncobj_destroy(dev.fd, in.handle);
	qgpu_syncobj_destroy(dev.fd, out.handle);
	qgpu_ctx_destroy(dev.fd, ctx);
	qt_unmap(dev.fd, D, (void *)d, dsize);
	qt_close(dev.fd, D);
	qt_close(dev.fd, X);
}

static void cow_mmap_refused(int fd, uint64_t off, const char *what)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE };
	unsigned int i;
	void *p;

	for (i = 0; i < 2; i++) {
		errno = 0;
		p = mmap(NULL, 8192, prots[i], MAP_PRIVATE, fd, off);
		qa_check(p == MAP_FAILED && errno == EINVAL,
			 "%s: MAP_PRIVATE prot %#x: %s (expected EINVAL)\n",
			 what, prots[i], p == MAP_FAILED ? strerror(errno) :
			 "mapped");
		if (p != MAP_FAILED)
			munmap(p, 8192);
	}
	/* a shared mapping of the same range works and reads the content */
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, off);
	igt_assert_f(p != MAP_FAILED, "%s: MAP_SHARED: %s\n", what,
		     strerror(errno));
	qa_check(((volatile uint32_t *)p)[1024] == 0xc0ffee01,
		 "%s: shared mapping reads %#x\n", what,
		 ((volatile uint32_t *)p)[1024]);
	munmap(p, 8192);
}

static void private_mapping_refused(uint32_t mask, uint32_t seg)
{
	uint32_t h = qt_bo(dev.fd, 8192, mask, QGPU_GEM_CPU_ACCESS, 0);
	uint64_t off;
	uint32_t *m;
	int dfd = -1;

	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	m = qt_map(dev.fd, h, 8192);
	m[1024] = 0xc0ffee01;
	igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
	cow_mmap_refused(dev.fd, off, "GEM offset");
	igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);

	igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC | DRM_RDWR,
					 &dfd), 0);
	cow_mmap_refused(dfd, 0, "dma-buf");
	close(dfd);
	igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &dfd), 0);
	cow_mmap_refused(dfd, 0, "read-only dma-buf");
	close(dfd);
	qt_unmap(dev.fd, h, m, 8192);
	qt_close(dev.fd, h);
}

/*
 * Lock2 is the file's: an importer that locks a shared allocation and
 * goes away (closes its file, or its handle) leaves no lock behind, so the creator can
 * still place the allocation in VRAM; and a file cannot end another
 * file's lock (UNLOCK without a lock of its own is EINVAL).
 */
static void check_lock2_per_file(void)
{
	uint32_t mask = QGPU_SEGBIT(QGPU_SEG_VISIBLE) |
			(have_local ? QGPU_SEGBIT(QGPU_SEG_LOCAL) : 0);
	uint32_t h = qt_bo(dev.fd, 65536, mask, 0, 0), hb, hc;
	uint64_t off;
	int dfd, b, c;

	igt_assert_eq(drmPrimeHandleToFD(dev.fd, h, DRM_CLOEXEC, &dfd), 0);
	b = qt_reopen(&dev);
	igt_assert_eq(drmPrimeFDToHandle(b, dfd, &hb), 0);
	igt_assert_eq(qgpu_bo_lock(b, hb, &off), 0);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 1);
	/* while locked, not committed to VRAM */
	igt_assert_eq(qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0,
				     NULL), -EBUSY);
	close(b);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 0);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	igt_assert_neq(qt_info(dev.fd, h).segment, QGPU_SEG_SYSTEM);
	qt_reside(dev.fd, h, QGPU_RESIDE_EVICT_SYSTEM, 0);
	/* the creator's lock: another file cannot end it */
	igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
	c = qt_reopen(&dev);
	igt_assert_eq(drmPrimeFDToHandle(c, dfd, &hc), 0);
	igt_assert_eq(qgpu_bo_unlock(c, hc), -EINVAL);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 1);
	igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
	igt_assert_eq(qgpu_bo_unlock(dev.fd, h), -EINVAL);
	/* the importer's handle closed, its file still open: no lock left */
	igt_assert_eq(qgpu_bo_lock(c, hc, &off), 0);
	igt_assert_eq(qgpu_bo_lock(c, hc, &off), 0);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 2);
	igt_assert_eq(drmCloseBufferHandle(c, hc), 0);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 0);
	close(c);
	close(dfd);
	qt_close(dev.fd, h);
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		have_local = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) != NULL;
		/* buffers that are wrongly accepted fault on purpose */
		igt_expect_dmesg("device fault");
	}

	/* R1 */
	igt_subtest("split-offset-sweep-mixed-commands") {
		qa_begin();
		split_offset_sweep();
	}
	igt_subtest("split-offset-inside-nop-payload") {
		qa_begin();
		split_offset_inside(IN_NOP);
	}
	igt_subtest("split-offset-inside-copy-operands") {
		qa_begin();
		split_offset_inside(IN_COPY);
	}
	igt_subtest("split-offset-inside-fill-operands") {
		qa_begin();
		split_offset_inside(IN_FILL);
	}
	igt_subtest("split-offset-inside-bind-operands") {
		qa_begin();
		split_offset_inside(IN_BIND);
	}
	igt_subtest("hidden-bind-in-nop-payload-other-process") {
		qa_begin();
		hidden_bind_attack(VIS | APT, QGPU_SEG_VISIBLE);
		if (have_local)
			hidden_bind_attack(LOC | APT, QGPU_SEG_LOCAL);
		hidden_bind_attack(APT, QGPU_SEG_APERTURE);
		qa_check_done();
	}

	/* R2 */
	igt_subtest("stale-slot-replaced-aperture-reuse") {
		qa_begin();
		stale_slot_layouts(STALE_REPLACED);
	}
	igt_subtest("stale-slot-unbound-aperture-reuse") {
		qa_begin();
		stale_slot_layouts(STALE_UNBOUND);
	}
	igt_subtest("stale-slot-patched-bind-replaced-aperture-reuse") {
		qa_begin();
		stale_slot_layouts(STALE_PATCHED);
	}

	/* R6 */
	igt_subtest("enospc-fragmented-set-all-or-nothing") {
		qa_begin();
		enospc_fragmented();
	}
	igt_subtest("enospc-set-exceeds-vram-after-split") {
		qa_begin();
		enospc_after_split();
	}

	/* R7 */
	igt_subtest("fits-visible-or-local-listed-first") {
		qa_begin();
		fits_any_order(true, false);
	}
	igt_subtest("fits-visible-only-listed-first") {
		qa_begin();
		fits_any_order(false, false);
	}
	igt_subtest("fits-visible-or-local-resident-in-visible") {
		qa_begin();
		fits_any_order(true, true);
	}
	igt_subtest("same-split-offset-entries-all-movable") {
		qa_begin();
		same_split_all_movable();
	}

	/* OfferAllocations */
	igt_subtest("offered-discard-waits-for-queued-work") {
		qa_begin();
		offered_discard_waits();
	}

	/* CPU mappings */
	igt_subtest("cpu-map-private-refused") {
		qa_begin();
		private_mapping_refused(VIS | APT, QGPU_SEG_VISIBLE);
		if (have_local)
			private_mapping_refused(LOC | APT, QGPU_SEG_LOCAL);
		private_mapping_refused(APT, QGPU_SEG_APERTURE);
		qa_check_done();
	}

	igt_subtest("lock2-is-the-files")
		check_lock2_per_file();

	igt_subtest("no-leaks") {
		qa_begin();
		qt_assert_no_allocations(dev.fd);
	}

	igt_fixture {
		qa_reap();
		qgpu_close(&dev);
	}
}
