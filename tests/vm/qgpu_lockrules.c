// SPDX-License-Identifier: MIT
/*
 * qgpu_lockrules: the Lock2 rules on every path that creates a CPU mapping,
 * applied neither too narrowly nor too broadly, and data that survives
 * every move whatever the allocation-list flags said.
 *
 *  - An allocation created without QGPU_GEM_CPU_ACCESS is never CPU-mapped
 *    onto VRAM (BAR2 or host aperture): a mapping that outlived its lock,
 *    one made after the lock ended, or one made through MODE_MAP_DUMB on
 *    the primary node, touched while the allocation is in VRAM, works and
 *    leaves the allocation out of VRAM (aperture or system, CPU path 3),
 *    content preserved. While such an allocation is locked it is not
 *    committed to VRAM: MAKE_RESIDENT into VRAM fails with EBUSY, a submit
 *    places it in the aperture if it may, else fails with EBUSY.
 *  - A locked allocation created with QGPU_GEM_CPU_ACCESS has no placement
 *    restriction: MAKE_RESIDENT into its own segment returns 0, and when it
 *    was evicted (visible-only) submits still use it and bring it back.
 *  - Data written by the GPU into an allocation whose allocation-list entry
 *    lacked QGPU_ALLOC_WRITE, or by the CPU through a mapping, is still
 *    there after every later move.
 *
 * Meant for a device with non-visible VRAM and a host aperture, e.g.
 * vram-size=32M visible-vram-size=16M host-aperture-size=4M.
 */
#include "qgpu_attack.h"

#define VIS QA_VIS
#define LOC QA_LOC
#define APT QA_APT

static struct qgpu_dev dev;
static bool have_local;
static uint32_t ctx, res;
static uint32_t *rmap;

static bool in_vram(uint32_t seg)
{
	return seg == QGPU_SEG_VISIBLE || seg == QGPU_SEG_LOCAL;
}

static const char *seg_name(uint32_t seg)
{
	return qgpu_segment_name(seg);
}

static uint32_t gpu_csum(int fd, uint32_t c, uint32_t h, uint64_t size)
{
	return qa_gpu_csum(fd, c, h, size, res, rmap, 0);
}

/* mask needs non-visible VRAM? */
static void require_mask(uint32_t mask)
{
	igt_require_f(have_local || !(mask & LOC),
		      "no non-visible VRAM on this device\n");
	igt_require_f(!(mask & LOC) || dev.info.host_aperture_size,
		      "no host aperture\n");
}

/* Lock, mmap, and (optionally) unlock again keeping the mapping. */
static void *lock_mmap(int fd, uint32_t h, uint64_t size, bool unlock,
		       uint64_t *offset)
{
	uint64_t off = 0;
	void *p;

	igt_assert_eq(qgpu_bo_lock(fd, h, &off), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)off);
	igt_assert_f(p != MAP_FAILED, "mmap: %s\n", strerror(errno));
	qt_track(fd, h, p, size);
	if (unlock)
		igt_assert_eq(qgpu_bo_unlock(fd, h), 0);
	if (offset)
		*offset = off;
	return p;
}

static void drop_mmap(int fd, uint32_t h, void *p, uint64_t size)
{
	qt_untrack(fd, h, p);
	igt_assert_eq(munmap(p, size), 0);
}

/* Submit a FILL of [0, size) of @h (listed with @flags) and wait. */
static void gpu_fill(int fd, uint32_t c, uint32_t h, uint64_t size,
		     uint32_t flags, uint32_t pattern)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind_flags(cb, 0, h, 0, size, flags);
	qgpu_cb_fill(cb, 0, 0, (uint32_t)size, pattern);
	qt_run(fd, c, cb, 60);
	qt_cb_free(cb);
}

/* Every word of the mapping equals @w; returns the first other index or -1 */
static int64_t check_const(const volatile uint32_t *p, uint64_t size,
			   uint32_t w)
{
	uint64_t i;

	for (i = 0; i < size / 4; i++)
		if (p[i] != w)
			return (int64_t)i;
	return -1;
}

/* R3 postcondition after a CPU access to a non-CPU-accessible allocation */
static void check_out_of_vram(int fd, uint32_t h, const char *what)
{
	struct drm_qgpu_gem_info info = qt_info(fd, h);

	qa_check(!in_vram(info.segment) &&
		 info.cpu_path == QGPU_CPU_PATH_SYSTEM,
		 "%s: after a CPU access the non-CPU-accessible allocation is in %s, CPU path %u (%s); expected out of VRAM, path system pages\n",
		 what, seg_name(info.segment), info.cpu_path,
		 qgpu_cpu_path_name(info.cpu_path));
}

/* ------------------------------------------------------------------------ */
/* R3: non-CPU-accessible allocations are never CPU-mapped onto VRAM        */

enum map_path {
	MAP_KEPT_AFTER_UNLOCK,	/* lock, mmap, unlock, keep the mapping */
	MAP_AFTER_UNLOCK,	/* lock for the offset, unlock, then mmap */
};

/*
 * A non-CPU-accessible allocation (@mask), mapped through @path, written by
 * the CPU, then moved into VRAM (@seg; 0: by a submit that FILLs it) and
 * touched through the mapping.
 */
static void noaccess_mapping(uint32_t mask, uint32_t seg, enum map_path path)
{
	const uint64_t size = 256 * 1024;
	uint32_t h, seg_now;
	uint64_t off = 0;
	uint32_t *p = NULL;
	int64_t at;

	require_mask(mask);
	h = qt_bo(dev.fd, size, mask, 0, 0);
	if (path == MAP_KEPT_AFTER_UNLOCK) {
		p = lock_mmap(dev.fd, h, size, true, NULL);
		qgpu_pattern_fill(p, size, 31);
		igt_assert(!in_vram(qt_info(dev.fd, h).segment));
	} else {
		/* the offset is the file's to map, lock or no lock */
		igt_assert_eq(qgpu_bo_lock(dev.fd, h, &off), 0);
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
	}
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 0);

	/* into VRAM, with no lock outstanding */
	if (seg) {
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
		if (path == MAP_AFTER_UNLOCK)
			gpu_fill(dev.fd, ctx, h, size, QGPU_ALLOC_WRITE,
				 0x3c3c3c3c);
	} else {
		gpu_fill(dev.fd, ctx, h, size, QGPU_ALLOC_WRITE, 0x3c3c3c3c);
	}
	seg_now = qt_info(dev.fd, h).segment;
	igt_assert_f(in_vram(seg_now),
		     "precondition: the allocation is in %s, not in VRAM\n",
		     seg_name(seg_now));
	if (path == MAP_AFTER_UNLOCK) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 dev.fd, (off_t)off);
		igt_assert_f(p != MAP_FAILED, "mmap after unlock: %s\n",
			     strerror(errno));
		qt_track(dev.fd, h, p, size);
	}

	/* the CPU touches it: works, content kept, and it left VRAM */
	if (path == MAP_KEPT_AFTER_UNLOCK && seg) {
		at = qgpu_pattern_check(p, size, 31);
		qa_check(at < 0, "content lost: word %lld is %#x\n",
			 (long long)at, p[at < 0 ? 0 : at]);
	} else {
		at = check_const(p, size, 0x3c3c3c3c);
		qa_check(at < 0, "content lost: word %lld is %#x\n",
			 (long long)at, p[at < 0 ? 0 : at]);
	}
	check_out_of_vram(dev.fd, h, "touched mapping");
	/* CPU writes land where the GPU reads them */
	qgpu_pattern_fill(p, size, 32);
	qa_check(gpu_csum(dev.fd, ctx, h, size) == qa_pattern_csum(size, 32),
		 "the GPU does not see the CPU's writes\n");
	drop_mmap(dev.fd, h, p, size);
	qt_close(dev.fd, h);
	qa_check_done();
}

/*
 * MODE_MAP_DUMB on the primary node with a handle from GEM_CREATE without
 * QGPU_GEM_CPU_ACCESS, the allocation resident in VRAM segment @seg.
 */
static void noaccess_map_dumb(uint32_t mask, uint32_t seg)
{
	const uint64_t size = 256 * 1024;
	uint32_t h, c, cres, *cmap, *p;
	struct qgpu_dev card;
	uint64_t off;
	int64_t at;

	require_mask(mask);
	qt_open(&card, QGPU_NODE_PRIMARY);
	c = qt_ctx(card.fd);
	cres = qt_bo(card.fd, 4096, APT, QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(card.fd, cres, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_APERTURE);
	cmap = qt_map(card.fd, cres, 4096);
	h = qt_bo(card.fd, size, mask, 0, 0);
	qt_reside(card.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	gpu_fill(card.fd, c, h, size, QGPU_ALLOC_WRITE, 0x4b4b4b4b);
	igt_assert_eq(qt_info(card.fd, h).segment, seg);
	igt_assert_eq(qgpu_dumb_map_offset(card.fd, h, &off), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, card.fd,
		 (off_t)off);
	igt_assert_f(p != MAP_FAILED, "mmap of MAP_DUMB offset: %s\n",
		     strerror(errno));
	at = check_const(p, size, 0x4b4b4b4b);
	qa_check(at < 0, "content lost: word %lld is %#x\n", (long long)at,
		 p[at < 0 ? 0 : at]);
	check_out_of_vram(card.fd, h, "MAP_DUMB mapping");
	qgpu_pattern_fill(p, size, 33);
	qa_check(qa_gpu_csum(card.fd, c, h, size, cres, cmap, 0) ==
		 qa_pattern_csum(size, 33),
		 "the GPU does not see the CPU's writes\n");
	/* made resident in VRAM again and touched again */
	qt_reside(card.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	igt_assert_eq(qt_info(card.fd, h).segment, seg);
	at = qgpu_pattern_check(p, size, 33);
	qa_check(at < 0, "content lost after moving back: word %lld\n",
		 (long long)at);
	check_out_of_vram(card.fd, h, "MAP_DUMB mapping, second touch");
	munmap(p, size);
	qt_close(card.fd, h);
	qt_unmap(card.fd, cres, cmap, 4096);
	qt_close(card.fd, cres);
	qgpu_ctx_destroy(card.fd, c);
	qgpu_close(&card);
	qa_check_done();
}

/* Locked and not CPU-accessible: never committed to a VRAM segment. */
static void noaccess_locked_not_in_vram(void)
{
	const uint64_t size = 256 * 1024;
	uint32_t segs[] = { QGPU_SEG_SYSTEM, QGPU_SEG_VISIBLE,
			    QGPU_SEG_LOCAL, QGPU_SEG_APERTURE }, i, h, seg;
	uint32_t mask = VIS | APT | (have_local ? LOC : 0);
	uint64_t off;
	int ret;

	for (i = 0; i < ARRAY_SIZE(segs); i++) {
		if (segs[i] == QGPU_SEG_LOCAL && !have_local)
			continue;
		h = qt_bo(dev.fd, size, mask, 0, 0);
		if (segs[i])
			qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, segs[i]);
		ret = qgpu_bo_lock(dev.fd, h, &off);
		seg = qt_info(dev.fd, h).segment;
		igt_info("locked while in %s: %d, now in %s\n",
			 seg_name(segs[i]), ret, seg_name(seg));
		if (ret) {
			qa_check(ret == -EBUSY, "lock from %s: %s\n",
				 seg_name(segs[i]), strerror(-ret));
			qt_close(dev.fd, h);
			continue;
		}
		qa_check(!in_vram(seg), "locked, yet in %s\n", seg_name(seg));
		ret = qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
				     QGPU_SEG_VISIBLE, NULL);
		qa_check(ret == -EBUSY,
			 "locked (from %s): MAKE_RESIDENT visible returned %d (%s), expected EBUSY\n",
			 seg_name(segs[i]), ret, strerror(-ret));
		if (have_local) {
			ret = qgpu_bo_reside(dev.fd, h,
					     QGPU_RESIDE_MAKE_RESIDENT,
					     QGPU_SEG_LOCAL, NULL);
			qa_check(ret == -EBUSY,
				 "locked (from %s): MAKE_RESIDENT local returned %d (%s), expected EBUSY\n",
				 seg_name(segs[i]), ret, strerror(-ret));
		}
		seg = qt_info(dev.fd, h).segment;
		qa_check(!in_vram(seg), "locked, yet in %s\n", seg_name(seg));
		/* unlocked it may go anywhere again */
		igt_assert_eq(qgpu_bo_unlock(dev.fd, h), 0);
		qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_VISIBLE);
		qt_close(dev.fd, h);
	}
	qa_check_done();
}

/* Locked, not CPU-accessible, aperture allowed: a submit uses the aperture */
static void noaccess_locked_submit(bool aperture_allowed)
{
	const uint64_t size = 256 * 1024;
	uint32_t mask = aperture_allowed ? VIS | APT | (have_local ? LOC : 0)
					 : VIS;
	uint32_t h, *p, seg;
	struct qgpu_cb *cb;
	int ret;

	h = qt_bo(dev.fd, size, mask, 0, 0);
	p = lock_mmap(dev.fd, h, size, false, NULL);
	memset(p, 0, size);
	cb = qt_cb(&dev);
	qgpu_cb_bind(cb, 1, res, 0, 4096);
	qgpu_cb_fence(cb, 1, 64, 1);
	qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
	qgpu_cb_fill(cb, 0, 0, size, 0x5d5d5d5d);
	qgpu_cb_split_point(cb);
	/* one split point for both: nothing can run before h is placed */
	cb->patches[1].split_offset = cb->patches[0].split_offset;
	rmap[16] = 0;
	ret = qgpu_submit_wait(dev.fd, ctx, cb, 60 * SEC_NS, NULL);
	seg = qt_info(dev.fd, h).segment;
	igt_info("locked submit: %d (%s), allocation in %s\n", ret,
		 strerror(-ret), seg_name(seg));
	qa_check(!in_vram(seg), "locked, yet committed to %s\n",
		 seg_name(seg));
	if (aperture_allowed) {
		qa_check(ret == 0, "submit: %s, expected success in the aperture\n",
			 strerror(-ret));
		qa_check(seg == QGPU_SEG_APERTURE, "placed in %s, expected the aperture\n",
			 seg_name(seg));
		qa_check(ret || check_const(p, size, 0x5d5d5d5d) < 0,
			 "the mapping does not show the GPU's FILL\n");
	} else {
		qa_check(ret == -EBUSY, "submit: %d (%s), expected EBUSY\n",
			 ret, strerror(-ret));
		qa_check(rmap[16] == 0, "refused after running\n");
	}
	qt_cb_free(cb);
	qt_unmap(dev.fd, h, p, size);
	qt_close(dev.fd, h);
	qa_check_done();
}

/* ------------------------------------------------------------------------ */
/* R4: CPU-accessible allocations: the lock restricts nothing               */

static void access_locked_same_segment(uint32_t mask, uint32_t seg)
{
	const uint64_t size = 256 * 1024;
	uint32_t h, out = 0;
	void *p;
	int ret;

	require_mask(mask);
	h = qt_bo(dev.fd, size, mask, QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg);
	p = qt_map(dev.fd, h, size);
	qgpu_pattern_fill(p, size, 41);
	igt_assert_eq(qt_info(dev.fd, h).segment, seg);
	ret = qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, seg, &out);
	qa_check(ret == 0,
		 "locked CPU-accessible allocation in %s: MAKE_RESIDENT into %s returned %d (%s)\n",
		 seg_name(seg), seg_name(seg), ret, strerror(-ret));
	qa_check(qt_info(dev.fd, h).segment == seg, "moved to %s\n",
		 seg_name(qt_info(dev.fd, h).segment));
	qa_check(qgpu_pattern_check(p, size, 41) < 0, "content changed\n");
	qt_unmap(dev.fd, h, p, size);
	qt_close(dev.fd, h);
	qa_check_done();
}

/*
 * Visible-only, CPU-accessible, locked and evicted (to system memory):
 * a submit (or MAKE_RESIDENT) brings it back while it stays locked.
 */
static void access_locked_evicted(bool by_submit)
{
	const uint64_t size = 256 * 1024;
	uint32_t h, *p, seg, want;
	struct qgpu_cb *cb;
	int ret;

	h = qt_bo(dev.fd, size, VIS, QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_VISIBLE);
	p = qt_map(dev.fd, h, size);
	qgpu_pattern_fill(p, size, 42);
	qt_reside(dev.fd, h, QGPU_RESIDE_EVICT, 0);
	igt_assert_eq(qt_info(dev.fd, h).segment, QGPU_SEG_SYSTEM);
	igt_assert_eq(qt_info(dev.fd, h).lock_count, 1);
	if (by_submit) {
		cb = qt_cb(&dev);
		qgpu_cb_bind(cb, 0, h, 0, QGPU_CB_WHOLE);
		qgpu_cb_bind(cb, 1, res, 0, 4096);
		qgpu_cb_checksum(cb, 0, 0, size / 2, 1, 0);
		qgpu_cb_fill(cb, 0, size / 2, size / 2, 0x6e6e6e6e);
		rmap[0] = 0;
		ret = qgpu_submit_wait(dev.fd, ctx, cb, 60 * SEC_NS, NULL);
		qt_cb_free(cb);
		qa_check(ret == 0,
			 "submit using a locked, evicted, CPU-accessible visible-only allocation: %s\n",
			 strerror(-ret));
		if (!ret) {
			want = qa_pattern_csum(size / 2, 42);
			qa_check(rmap[0] == want, "checksum %#x, expected %#x\n",
				 rmap[0], want);
			qa_check(check_const(p + size / 8, size / 2,
					     0x6e6e6e6e) < 0,
				 "the GPU's FILL is not in the mapping\n");
			qa_check(qgpu_pattern_check(p, size / 2, 42) < 0,
				 "the first half changed\n");
		}
	} else {
		ret = qgpu_bo_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT,
				     QGPU_SEG_VISIBLE, NULL);
		qa_check(ret == 0,
			 "MAKE_RESIDENT of a locked, evicted, CPU-accessible visible-only allocation: %s\n",
			 strerror(-ret));
		qa_check(qgpu_pattern_check(p, size, 42) < 0,
			 "content changed\n");
	}
	seg = qt_info(dev.fd, h).segment;
	qa_check(ret || seg == QGPU_SEG_VISIBLE, "back in %s, not visible VRAM\n",
		 seg_name(seg));
	qa_check(qt_info(dev.fd, h).lock_count == 1, "lock count changed\n");
	qt_unmap(dev.fd, h, p, size);
	qt_close(dev.fd, h);
	qa_check_done();
}

/* ------------------------------------------------------------------------ */
/* R5: data survives every move                                             */

struct move {
	uint32_t op, seg;	/* GEM_RESIDE op and target */
	uint32_t want;		/* segment afterwards */
};

#define MR(s) { QGPU_RESIDE_MAKE_RESIDENT, QGPU_SEG_##s, QGPU_SEG_##s }
#define EV_APT { QGPU_RESIDE_EVICT, 0, QGPU_SEG_APERTURE }
#define EV_SYS { QGPU_RESIDE_EVICT_SYSTEM, 0, QGPU_SEG_SYSTEM }

static const struct move_path {
	const char *name;
	uint32_t start;
	bool local;
	struct move m[3];
	unsigned int n;
} move_paths[] = {
	{ "visible-to-local", QGPU_SEG_VISIBLE, true, { MR(LOCAL) }, 1 },
	{ "local-to-visible", QGPU_SEG_LOCAL, true, { MR(VISIBLE) }, 1 },
	{ "aperture-to-visible", QGPU_SEG_APERTURE, false, { MR(VISIBLE) }, 1 },
	{ "aperture-to-local", QGPU_SEG_APERTURE, true, { MR(LOCAL) }, 1 },
	{ "aperture-to-system-to-visible", QGPU_SEG_APERTURE, false,
	  { EV_SYS, MR(VISIBLE) }, 2 },
	{ "visible-to-aperture-to-local", QGPU_SEG_VISIBLE, true,
	  { EV_APT, MR(LOCAL) }, 2 },
	{ "visible-to-system-to-visible", QGPU_SEG_VISIBLE, false,
	  { EV_SYS, MR(VISIBLE) }, 2 },
	{ "local-to-system-to-local", QGPU_SEG_LOCAL, true,
	  { EV_SYS, MR(LOCAL) }, 2 },
	{ "local-to-aperture-to-visible", QGPU_SEG_LOCAL, true,
	  { EV_APT, MR(VISIBLE) }, 2 },
};

static void do_moves(int fd, uint32_t h, const struct move_path *mp,
		     uint64_t size, uint32_t want, const char *what)
{
	unsigned int i;
	uint32_t got;

	for (i = 0; i < mp->n; i++) {
		qt_reside(fd, h, mp->m[i].op, mp->m[i].seg);
		igt_assert_eq(qt_info(fd, h).segment, mp->m[i].want);
		got = gpu_csum(fd, ctx, h, size);
		qa_check(got == want,
			 "%s, %s: after move %u (to %s) the content is lost (checksum %#x, expected %#x%s)\n",
			 what, mp->name, i + 1, seg_name(mp->m[i].want), got,
			 want, got == qt_csum_const(0, size / 4) ?
			 ": all zero" : "");
	}
}

/*
 * The GPU writes (FILL one half, COPY into the other) into an allocation
 * whose allocation-list entry has no QGPU_ALLOC_WRITE; then it moves.
 */
static void gpu_write_no_flag(const struct move_path *mp)
{
	const uint64_t size = 512 * 1024;
	uint32_t mask = VIS | APT | (have_local ? LOC : 0), h, src, want;
	uint32_t *host, *sp;
	struct qgpu_cb *cb;
	uint64_t i;

	igt_require(!mp->local || have_local);
	src = qt_bo(dev.fd, size / 2, APT, QGPU_GEM_CPU_ACCESS, 0);
	sp = qt_map(dev.fd, src, size / 2);
	qgpu_pattern_fill(sp, size / 2, 51);
	h = qt_bo(dev.fd, size, mask, 0, 0);
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, mp->start);
	cb = qt_cb(&dev);
	qgpu_cb_bind_flags(cb, 0, h, 0, QGPU_CB_WHOLE, 0);	/* no WRITE */
	qgpu_cb_bind_flags(cb, 1, src, 0, QGPU_CB_WHOLE, 0);
	qgpu_cb_fill(cb, 0, 0, size / 2, 0x3e3e3e3e);
	qgpu_cb_copy(cb, 0, size / 2, 1, 0, size / 2);
	igt_assert_eq(cb->allocs[0].flags, 0);
	qt_run(dev.fd, ctx, cb, 60);
	qt_cb_free(cb);
	igt_assert_eq(qt_info(dev.fd, h).segment, mp->start);
	host = malloc(size);
	igt_assert(host);
	for (i = 0; i < size / 8; i++)
		host[i] = 0x3e3e3e3e;
	memcpy(host + size / 8, sp, size / 2);
	want = qgpu_csum(host, size / 4);
	free(host);
	igt_assert_eq(gpu_csum(dev.fd, ctx, h, size), want);	/* in place */
	do_moves(dev.fd, h, mp, size, want, "GPU write without QGPU_ALLOC_WRITE");
	qt_close(dev.fd, h);
	qt_unmap(dev.fd, src, sp, size / 2);
	qt_close(dev.fd, src);
	qa_check_done();
}

/* The CPU writes through a mapping made where @mp starts; then it moves. */
static void cpu_write(const struct move_path *mp, bool dumb)
{
	const uint64_t size = 512 * 1024;
	uint32_t mask = VIS | APT | (have_local ? LOC : 0), h;
	struct qgpu_dev card;
	uint64_t off;
	void *p;
	int fd = dev.fd;

	igt_require(!mp->local || have_local);
	if (dumb) {
		qt_open(&card, QGPU_NODE_PRIMARY);
		fd = card.fd;
	}
	h = qt_bo(fd, size, mask, QGPU_GEM_CPU_ACCESS, 0);
	qt_reside(fd, h, QGPU_RESIDE_MAKE_RESIDENT, mp->start);
	if (dumb) {
		igt_assert_eq(qgpu_dumb_map_offset(fd, h, &off), 0);
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)off);
		igt_assert(p != MAP_FAILED);
		qgpu_pattern_fill(p, size, 52);
		munmap(p, size);
	} else {
		p = qt_map(fd, h, size);
		qgpu_pattern_fill(p, size, 52);
		qt_unmap(fd, h, p, size);
	}
	if (dumb) {
		/* read back through a new MAP_DUMB mapping after each move */
		unsigned int i;

		for (i = 0; i < mp->n; i++) {
			qt_reside(fd, h, mp->m[i].op, mp->m[i].seg);
			igt_assert_eq(qt_info(fd, h).segment, mp->m[i].want);
			igt_assert_eq(qgpu_dumb_map_offset(fd, h, &off), 0);
			p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd,
				 (off_t)off);
			igt_assert(p != MAP_FAILED);
			qa_check(qgpu_pattern_check(p, size, 52) < 0,
				 "CPU write through MAP_DUMB, %s: lost after move %u\n",
				 mp->name, i + 1);
			munmap(p, size);
		}
		qt_close(fd, h);
		qgpu_close(&card);
	} else {
		do_moves(fd, h, mp, size, qa_pattern_csum(size, 52),
			 "CPU write through a mapping");
		qt_close(fd, h);
	}
	qa_check_done();
}

igt_main
{
	static unsigned int i;	/* survives the subtests' longjmp */

	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		have_local = qgpu_dev_segment(&dev, QGPU_SEG_LOCAL) != NULL;
		ctx = qt_ctx(dev.fd);
		igt_assert_eq(qgpu_bo_create(dev.fd, 4096, APT,
					     QGPU_GEM_CPU_ACCESS, 0, &res), 0);
		qt_reside(dev.fd, res, QGPU_RESIDE_MAKE_RESIDENT,
			  QGPU_SEG_APERTURE);
		igt_assert_eq(qgpu_bo_map(dev.fd, res, 4096, (void **)&rmap),
			      0);
	}

	/* R3 */
	igt_subtest("noaccess-mapping-kept-after-unlock-touched-in-visible") {
		qa_begin();
		noaccess_mapping(VIS | APT, QGPU_SEG_VISIBLE,
				 MAP_KEPT_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-mapping-kept-after-unlock-touched-in-local") {
		qa_begin();
		noaccess_mapping(LOC | APT, QGPU_SEG_LOCAL,
				 MAP_KEPT_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-visible-only-mapping-kept-after-unlock") {
		qa_begin();
		noaccess_mapping(VIS, QGPU_SEG_VISIBLE, MAP_KEPT_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-local-only-mapping-kept-after-unlock") {
		qa_begin();
		noaccess_mapping(LOC, QGPU_SEG_LOCAL, MAP_KEPT_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-mapping-kept-after-unlock-submit-moves-it-in") {
		qa_begin();
		noaccess_mapping(VIS | APT, 0, MAP_KEPT_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-mmap-after-unlock-touched-in-visible") {
		qa_begin();
		noaccess_mapping(VIS | APT, QGPU_SEG_VISIBLE, MAP_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-mmap-after-unlock-touched-in-local") {
		qa_begin();
		noaccess_mapping(LOC | APT, QGPU_SEG_LOCAL, MAP_AFTER_UNLOCK);
	}
	igt_subtest("noaccess-map-dumb-primary-visible") {
		qa_begin();
		noaccess_map_dumb(VIS | APT, QGPU_SEG_VISIBLE);
	}
	igt_subtest("noaccess-map-dumb-primary-local") {
		qa_begin();
		noaccess_map_dumb(LOC | APT, QGPU_SEG_LOCAL);
	}
	igt_subtest("noaccess-map-dumb-primary-visible-only") {
		qa_begin();
		noaccess_map_dumb(VIS, QGPU_SEG_VISIBLE);
	}
	igt_subtest("noaccess-locked-make-resident-vram-ebusy") {
		qa_begin();
		noaccess_locked_not_in_vram();
	}
	igt_subtest("noaccess-locked-submit-placed-in-aperture") {
		qa_begin();
		noaccess_locked_submit(true);
	}
	igt_subtest("noaccess-locked-submit-without-aperture-ebusy") {
		qa_begin();
		noaccess_locked_submit(false);
	}

	/* R4 */
	igt_subtest("access-locked-make-resident-own-segment-visible-only") {
		qa_begin();
		access_locked_same_segment(VIS, QGPU_SEG_VISIBLE);
	}
	igt_subtest("access-locked-make-resident-own-segment-visible") {
		qa_begin();
		access_locked_same_segment(VIS | APT, QGPU_SEG_VISIBLE);
	}
	igt_subtest("access-locked-make-resident-own-segment-local") {
		qa_begin();
		access_locked_same_segment(LOC | APT, QGPU_SEG_LOCAL);
	}
	igt_subtest("access-locked-make-resident-own-segment-aperture") {
		qa_begin();
		access_locked_same_segment(APT, QGPU_SEG_APERTURE);
	}
	igt_subtest("access-locked-evicted-visible-only-used-by-submit") {
		qa_begin();
		access_locked_evicted(true);
	}
	igt_subtest("access-locked-evicted-visible-only-make-resident") {
		qa_begin();
		access_locked_evicted(false);
	}

	/* R5 */
	for (i = 0; i < ARRAY_SIZE(move_paths); i++)
		igt_subtest_f("gpu-write-without-write-flag-survives-%s",
			      move_paths[i].name) {
			qa_begin();
			gpu_write_no_flag(&move_paths[i]);
		}
	for (i = 0; i < ARRAY_SIZE(move_paths); i++)
		igt_subtest_f("cpu-write-survives-%s", move_paths[i].name) {
			qa_begin();
			cpu_write(&move_paths[i], false);
		}
	igt_subtest("cpu-write-via-map-dumb-survives-aperture-to-system-to-visible") {
		qa_begin();
		cpu_write(&move_paths[4], true);
	}
	igt_subtest("cpu-write-via-map-dumb-survives-visible-to-local") {
		qa_begin();
		cpu_write(&move_paths[0], true);
	}

	igt_subtest("no-leaks") {
		qa_begin();
		qgpu_bo_unmap(dev.fd, res, rmap, 4096);
		qgpu_bo_destroy(dev.fd, res);
		res = 0;
		qt_assert_no_allocations(dev.fd);
	}

	igt_fixture {
		qa_reap();
		qt_cleanup();
		if (res) {
			qgpu_bo_unmap(dev.fd, res, rmap, 4096);
			qgpu_bo_destroy(dev.fd, res);
		}
		qgpu_ctx_destroy(dev.fd, ctx);
		qgpu_close(&dev);
	}
}
