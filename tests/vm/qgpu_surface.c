// SPDX-License-Identifier: MIT
/*
 * qgpu_surface: tiled (swizzled) surfaces end to end, against the rules
 * of "Mapping Virtual Addresses to a Memory Segment" (WDK), the device
 * contract (docs/hw-spec.md section 17) and the UAPI:
 *
 *  - a CPU-accessible allocation is never tiled (QGPU_GEM_TILED with
 *    QGPU_GEM_CPU_ACCESS is EINVAL); GEM_INFO reports the flag;
 *  - libqgpu's surface (a tiled allocation for the GPU, a linear
 *    CPU-accessible one for the application) round-trips pixels through
 *    GPU work done on the tiled allocation, and the result equals the
 *    host's computation with the host's own tiling formula, so a device
 *    that tiled the wrong way fails;
 *  - the tiled allocation's bytes are the tiled permutation of the pixels
 *    (read through a GPU copy into a CPU-accessible buffer);
 *  - the lock waits for the untile (a lock that returned early would show
 *    stale pixels, and return before the GPU could have run);
 *  - contents survive eviction of both allocations between every step;
 *  - odd sizes; more surfaces than VRAM holds;
 *  - the kernel refuses (EINVAL, nothing runs) every TILE it must not pass
 *    to the device: wrong layouts on either side, ranges beyond the bound
 *    sizes, unbound slots, bad geometry and flags, the wrong context kind;
 *  - the same with GPU virtual addresses (VTILE) on a device with an MMU.
 *
 * Meant for a small VRAM with non-visible VRAM, e.g. vram-size=32M
 * visible-vram-size=8M.
 */
#include <pthread.h>
#include <time.h>

#include "qgpu_test.h"

#define TIMEOUT		(60 * SEC_NS)
#define APT		QGPU_SEGBIT(QGPU_SEG_APERTURE)

static struct qgpu_dev dev;
static uint32_t ctx;		/* a physical context of the test's own */

/* ------------------------------------------------------------------------ */
/* The host's reference: hw-spec 17.1 written out, not the header's helpers */

static uint64_t ref_cols(uint32_t w)
{
	return (w + 7) / 8;
}

static uint64_t ref_tiled_size(uint32_t w, uint32_t h)
{
	return ref_cols(w) * ((h + 7) / 8) * 256;
}

/* Byte of pixel (x, y) in the tiled image of a surface @w wide */
static uint64_t ref_off(uint32_t w, uint32_t x, uint32_t y)
{
	return ((y / 8) * ref_cols(w) + x / 8) * 256 +
	       ((y % 8) * 8 + x % 8) * 4;
}

/* The host's tiling of pixels @px (w * h words, row-major), padding 0 */
static void ref_tile(const uint32_t *px, uint32_t w, uint32_t h,
		     uint32_t *tiled)
{
	uint32_t x, y;

	memset(tiled, 0, ref_tiled_size(w, h));
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			tiled[ref_off(w, x, y) / 4] = px[(uint64_t)y * w + x];
}

/* ------------------------------------------------------------------------ */
/* Surfaces, remembered so that a failed subtest leaves none behind          */

#define MAX_SURF 16
static struct qgpu_surface *surfs[MAX_SURF];

static struct qgpu_surface *surf_new(uint32_t w, uint32_t h, uint32_t flags)
{
	struct qgpu_surface *s = calloc(1, sizeof(*s));
	unsigned int i;
	int ret;

	igt_assert(s);
	ret = qgpu_surface_create(&dev, w, h, flags, s);
	igt_assert_f(ret == 0, "surface %ux%u flags %#x: %s\n", w, h, flags,
		     strerror(-ret));
	for (i = 0; i < MAX_SURF; i++)
		if (!surfs[i]) {
			surfs[i] = s;
			break;
		}
	igt_assert_lt(i, MAX_SURF);
	return s;
}

static void surf_free(struct qgpu_surface *s)
{
	unsigned int i;

	for (i = 0; i < MAX_SURF; i++)
		if (surfs[i] == s)
			surfs[i] = NULL;
	qgpu_surface_destroy(s);
	free(s);
}

static void surf_cleanup(void)
{
	unsigned int i;

	for (i = 0; i < MAX_SURF; i++)
		if (surfs[i])
			surf_free(surfs[i]);
	qt_cleanup();
}

/* Pixel (x, y) of pattern @seed */
static uint32_t pix(uint32_t seed, uint32_t w, uint32_t x, uint32_t y)
{
	return qgpu_pattern(seed, (uint64_t)y * w + x);
}

/*
 * Lock, write pattern @seed into every pixel (the bytes between a row's
 * pixels and the next row are left alone), unlock with a write
 */
static void surf_write(struct qgpu_surface *s, uint32_t seed)
{
	uint32_t pitch = 0, x, y;
	uint8_t *p = NULL;

	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), 0);
	igt_assert_eq(pitch, s->linear.fmt.pitch);
	igt_assert_lte(s->width * 4, pitch);
	for (y = 0; y < s->height; y++)
		for (x = 0; x < s->width; x++)
			((uint32_t *)(p + (uint64_t)y * pitch))[x] =
				pix(seed, s->width, x, y);
	igt_assert_eq(qgpu_surface_unlock(s, true), 0);
}

/* What pixel (x, y) must hold: @want(x, y) */
typedef uint32_t want_fn(const struct qgpu_surface *s, uint32_t x,
			 uint32_t y, const void *arg);

static void surf_check(struct qgpu_surface *s, want_fn *want,
		       const void *arg, const char *what)
{
	uint32_t pitch = 0, x, y;
	uint8_t *p = NULL;

	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), 0);
	for (y = 0; y < s->height; y++)
		for (x = 0; x < s->width; x++) {
			uint32_t got = ((uint32_t *)(p + (uint64_t)y * pitch))[x];
			uint32_t exp = want(s, x, y, arg);

			igt_assert_f(got == exp,
				     "%s: %ux%u pixel (%u, %u) is %#x, expected %#x\n",
				     what, s->width, s->height, x, y, got, exp);
		}
	igt_assert_eq(qgpu_surface_unlock(s, false), 0);
}

static uint32_t want_pattern(const struct qgpu_surface *s, uint32_t x,
			     uint32_t y, const void *arg)
{
	return pix(*(const uint32_t *)arg, s->width, x, y);
}

/* ------------------------------------------------------------------------ */
/* GPU work on the tiled allocation and raw reads of it                     */

static void run_cb(uint32_t c, struct qgpu_cb *cb)
{
	qt_run(dev.fd, c, cb, 60);
}

/*
 * A buffer whose 32-bit word i is i: the operand that makes the GPU's work
 * depend on where each pixel lies in the tiled image
 */
static uint32_t index_buf(uint64_t bytes)
{
	uint64_t size = (bytes + 4095) & ~4095ull, i;
	uint32_t h = qt_bo(dev.fd, size, APT | QGPU_SEGBIT(QGPU_SEG_VISIBLE),
			   QGPU_GEM_CPU_ACCESS, 0);
	uint32_t *p = qt_map(dev.fd, h, size);

	for (i = 0; i < size / 4; i++)
		p[i] = (uint32_t)i;
	qt_unmap(dev.fd, h, p, size);
	return h;
}

/*
 * On the test's own physical context: tiled ^= index (every word of the
 * tiled image, padding included), then tile @fill_tile filled with
 * @pattern
 */
static void gpu_xor_and_fill(struct qgpu_surface *s, uint32_t fill_tile,
			     uint32_t pattern)
{
	uint64_t bytes = s->tiled.fmt.bytes;
	uint32_t idx = index_buf(bytes);
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind(cb, 0, s->tiled.handle, 0, QGPU_CB_WHOLE);
	qgpu_cb_bind_flags(cb, 1, idx, 0, QGPU_CB_WHOLE, 0);
	qgpu_cb_xor(cb, 0, 0, 0, 0, 1, 0, (uint32_t)(bytes / 4));
	qgpu_cb_fill(cb, 0, fill_tile * 256, 256, pattern);
	run_cb(ctx, cb);
	qt_cb_free(cb);
	qt_close(dev.fd, idx);
}

struct xor_fill {
	uint32_t seed, tile, pattern;
};

static uint32_t want_xor_fill(const struct qgpu_surface *s, uint32_t x,
			      uint32_t y, const void *arg)
{
	const struct xor_fill *a = arg;
	uint64_t off = ref_off(s->width, x, y);

	if (off / 256 == a->tile)
		return a->pattern;
	return pix(a->seed, s->width, x, y) ^ (uint32_t)(off / 4);
}

/*
 * The tiled allocation's raw bytes, through a GPU copy into a
 * CPU-accessible buffer (a CPU mapping of the tiled allocation itself is
 * not what an application gets): a malloc'ed copy of @bytes bytes
 */
static uint32_t *tiled_bytes(struct qgpu_surface *s, uint64_t bytes)
{
	uint64_t size = (bytes + 4095) & ~4095ull;
	uint32_t tmp = qt_bo(dev.fd, size, APT, QGPU_GEM_CPU_ACCESS, 0);
	struct qgpu_cb *cb = qt_cb(&dev);
	uint32_t *out = malloc(size), *p;

	igt_assert(out);
	qgpu_cb_bind_flags(cb, 0, s->tiled.handle, 0, QGPU_CB_WHOLE, 0);
	qgpu_cb_bind(cb, 1, tmp, 0, QGPU_CB_WHOLE);
	qgpu_cb_copy(cb, 1, 0, 0, 0, (uint32_t)bytes);
	run_cb(ctx, cb);
	qt_cb_free(cb);
	p = qt_map(dev.fd, tmp, size);
	memcpy(out, p, bytes);
	qt_unmap(dev.fd, tmp, p, size);
	qt_close(dev.fd, tmp);
	return out;
}

/* The tiled allocation holds exactly the host's tiling of pattern @seed */
static void check_tiled_bytes(struct qgpu_surface *s, uint32_t seed)
{
	uint32_t w = s->width, h = s->height, x, y;
	uint64_t bytes = ref_tiled_size(w, h), i;
	uint32_t *px = malloc((uint64_t)w * h * 4);
	uint32_t *want = malloc(bytes);
	uint32_t *got;

	igt_assert(px && want);
	igt_assert_eq_u64(s->tiled.fmt.bytes, bytes);
	for (y = 0; y < h; y++)
		for (x = 0; x < w; x++)
			px[(uint64_t)y * w + x] = pix(seed, w, x, y);
	ref_tile(px, w, h, want);
	got = tiled_bytes(s, bytes);
	for (i = 0; i < bytes / 4; i++)
		igt_assert_f(got[i] == want[i],
			     "%ux%u: tiled word %llu is %#x, the host's tiling has %#x\n",
			     w, h, (unsigned long long)i, got[i], want[i]);
	free(got);
	free(want);
	free(px);
}

static void evict_both(struct qgpu_surface *s, uint32_t op)
{
	qt_reside(dev.fd, s->tiled.handle, op, 0);
	qt_reside(dev.fd, s->linear.handle, op, 0);
	if (op == QGPU_RESIDE_EVICT_SYSTEM) {
		igt_assert_eq(qt_info(dev.fd, s->tiled.handle).segment,
			      QGPU_SEG_SYSTEM);
		igt_assert_eq(qt_info(dev.fd, s->linear.handle).segment,
			      QGPU_SEG_SYSTEM);
	} else {
		igt_assert_neq(qt_info(dev.fd, s->tiled.handle).segment,
			       QGPU_SEG_VISIBLE);
		igt_assert_neq(qt_info(dev.fd, s->tiled.handle).segment,
			       QGPU_SEG_LOCAL);
	}
}

/* ------------------------------------------------------------------------ */
/* Subtests                                                                  */

static void check_flags(void)
{
	static const uint32_t masks[] = {
		APT, QGPU_SEGBIT(QGPU_SEG_VISIBLE),
		APT | QGPU_SEGBIT(QGPU_SEG_VISIBLE),
	};
	struct qgpu_surface s;
	unsigned int i;
	uint32_t h;

	igt_assert(dev.info.caps & QGPU_INFO_CAP_TILING);
	igt_assert(QGPU_GEM_CREATE_FLAGS & QGPU_GEM_TILED);
	/* "a CPU-accessible allocation ... cannot be swizzled" */
	for (i = 0; i < ARRAY_SIZE(masks); i++) {
		igt_assert_eq(qgpu_bo_create(dev.fd, 4096, masks[i],
					     QGPU_GEM_TILED | QGPU_GEM_CPU_ACCESS,
					     0, &h), -EINVAL);
		h = qt_bo(dev.fd, 4096, masks[i], QGPU_GEM_TILED, 0);
		igt_assert_eq(qt_info(dev.fd, h).flags, QGPU_GEM_TILED);
		qt_close(dev.fd, h);
	}
	h = qt_bo(dev.fd, 4096, qt_vram_mask(&dev) | APT, QGPU_GEM_TILED,
		  QGPU_PREF(QGPU_SEG_VISIBLE, 0, 0));
	qt_reside(dev.fd, h, QGPU_RESIDE_MAKE_RESIDENT, 0);
	igt_assert_eq(qt_info(dev.fd, h).flags, QGPU_GEM_TILED);
	qt_close(dev.fd, h);

	/* the surface: one tiled and one linear CPU-accessible allocation */
	igt_assert_eq(qgpu_surface_create(&dev, 100, 30, 0, &s), 0);
	igt_assert_eq(qt_info(dev.fd, s.tiled.handle).flags, QGPU_GEM_TILED);
	igt_assert_eq(qt_info(dev.fd, s.linear.handle).flags,
		      QGPU_GEM_CPU_ACCESS);
	igt_assert(qt_info(dev.fd, s.linear.handle).segment_mask & APT);
	igt_assert_eq(s.tiled.fmt.layout, QGPU_SURFACE_LAYOUT_TILED);
	igt_assert_eq_u64(s.tiled.fmt.bytes, ref_tiled_size(100, 30));
	igt_assert_eq(s.linear.fmt.layout, QGPU_SURFACE_LAYOUT_LINEAR);
	igt_assert_lte(100 * 4, s.linear.fmt.pitch);
	igt_assert_eq_u64(s.linear.fmt.bytes, (uint64_t)s.linear.fmt.pitch * 30);
	igt_assert_lte(s.tiled.fmt.bytes, s.tiled.size);
	qgpu_surface_destroy(&s);

	igt_assert_eq(qgpu_surface_create(&dev, 0, 4, 0, &s), -EINVAL);
	igt_assert_eq(qgpu_surface_create(&dev, 4, 0, 0, &s), -EINVAL);
	igt_assert_eq(qgpu_surface_create(&dev, QGPU_TILE_MAX_DIM + 1, 1, 0,
					  &s), -EINVAL);
	igt_assert_eq(qgpu_surface_create(&dev, 4, 4, 0x80, &s), -EINVAL);
	qt_assert_no_allocations(dev.fd);
}

/*
 * Random pixels written linear, processed tiled by the GPU (an XOR with a
 * buffer of word indices, so each pixel's result depends on where the
 * device put it, and a FILL of one tile), read back linear: equal to the
 * host's computation with its own tiling
 */
static void check_roundtrip(uint32_t w, uint32_t h, uint32_t seed)
{
	struct qgpu_surface *s = surf_new(w, h, 0);
	struct xor_fill a = {
		.seed = seed,
		.tile = (uint32_t)(ref_tiled_size(w, h) / 256 / 2),
		.pattern = 0x5eed0000 ^ seed,
	};

	surf_write(s, seed);
	surf_check(s, want_pattern, &seed, "written");
	gpu_xor_and_fill(s, a.tile, a.pattern);
	surf_check(s, want_xor_fill, &a, "xor and fill");
	surf_free(s);
}

/* The tiled allocation holds the tiled permutation, not linear bytes */
static void check_tiled_permutation(void)
{
	struct qgpu_surface *s = surf_new(37, 21, 0);
	uint32_t seed = 0x7113;
	uint32_t *got, x, y, same = 0;

	surf_write(s, seed);
	check_tiled_bytes(s, seed);
	/* a CPU reading the tiled bytes would see scrambled pixels */
	got = tiled_bytes(s, s->tiled.fmt.bytes);
	for (y = 0; y < 21; y++)
		for (x = 0; x < 37; x++)
			same += got[(uint64_t)y * 37 + x] == pix(seed, 37, x, y);
	igt_assert_f(same < 37 * 21 / 4,
		     "%u of %u pixels where a linear surface has them\n", same,
		     37 * 21);
	free(got);
	surf_free(s);
}

/* Pixels on their way through every step while both allocations move */
static void check_eviction(void)
{
	struct qgpu_surface *s = surf_new(256, 120, 0);
	struct xor_fill a = { .seed = 0xe71c, .tile = 17, .pattern = 0xfeed };
	uint32_t seed2 = 0xe71d;

	surf_write(s, a.seed);
	evict_both(s, QGPU_RESIDE_EVICT_SYSTEM);
	check_tiled_bytes(s, a.seed);
	evict_both(s, QGPU_RESIDE_EVICT_SYSTEM);
	surf_check(s, want_pattern, &a.seed, "after eviction");
	evict_both(s, QGPU_RESIDE_EVICT);
	gpu_xor_and_fill(s, a.tile, a.pattern);
	evict_both(s, QGPU_RESIDE_EVICT_SYSTEM);
	surf_check(s, want_xor_fill, &a, "xor, evicted");
	evict_both(s, QGPU_RESIDE_EVICT);
	surf_check(s, want_xor_fill, &a, "xor, evicted to the aperture");
	qt_reside(dev.fd, s->tiled.handle, QGPU_RESIDE_MAKE_RESIDENT, 0);
	surf_write(s, seed2);
	evict_both(s, QGPU_RESIDE_EVICT_SYSTEM);
	surf_check(s, want_pattern, &seed2, "rewritten, evicted");
	check_tiled_bytes(s, seed2);
	surf_free(s);
}

static void check_odd_sizes(void)
{
	static const uint32_t sizes[][2] = {
		{ 1, 1 }, { 7, 9 }, { 13, 3 }, { 65, 33 }, { 1, 200 },
		{ 300, 1 }, { 8, 8 }, { 9, 17 }, { 1000, 5 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t w = sizes[i][0], h = sizes[i][1], seed = 0x0dd0 + i;
		struct qgpu_surface *s = surf_new(w, h, 0);

		surf_write(s, seed);
		check_tiled_bytes(s, seed);
		surf_check(s, want_pattern, &seed, "odd size");
		surf_free(s);
		check_roundtrip(w, h, seed + 100);
	}
}

/* More surfaces than VRAM holds: each keeps its pixels */
static void check_oversubscribed(void)
{
	uint64_t vram = qt_seg_usable(&dev, QGPU_SEG_VISIBLE) +
			qt_seg_usable(&dev, QGPU_SEG_LOCAL);
	struct qgpu_surface *s[12];
	uint32_t seeds[12];
	unsigned int i, n;

	/* 1024 x 1024: 4 MiB tiled, 4 MiB linear */
	n = (unsigned int)(vram / (4 * MiB)) + 2;
	igt_require_f(n <= 12, "VRAM too large for this subtest\n");
	for (i = 0; i < n; i++) {
		s[i] = surf_new(1024, 1024, 0);
		seeds[i] = 0x0a0a + i;
		surf_write(s[i], seeds[i]);
	}
	for (i = 0; i < n; i++)
		surf_check(s[i], want_pattern, &seeds[i], "oversubscribed");
	for (i = 0; i < n; i++)
		surf_free(s[i]);
}

/* Gate a context: a DMA WAIT until the word at @gate_map is >= 1 */
struct gate {
	volatile uint64_t *map;
	int64_t delay_ns;
};

static void *gate_open(void *arg)
{
	struct gate *g = arg;
	struct timespec ts = {
		.tv_sec = g->delay_ns / SEC_NS,
		.tv_nsec = g->delay_ns % SEC_NS,
	};

	nanosleep(&ts, NULL);
	*g->map = 1;
	return NULL;
}

/*
 * The lock waits for the untile: with the surface's context held back by
 * a WAIT that the CPU releases later, and stale pixels in the linear
 * allocation, a lock that returned before the untile ran would return
 * early and show the stale pixels
 */
static void check_lock_waits(void)
{
	struct qgpu_surface *s = surf_new(200, 100, 0);
	uint32_t good = 0x900d, stale = 0x57a1e;
	struct qgpu_cb *cb = qt_cb(&dev);
	struct gate g = { .delay_ns = SEC_NS / 2 };
	uint32_t gate, pitch, x, y;
	uint8_t *p = NULL;
	pthread_t thr;
	int64_t t0, t1;

	surf_write(s, good);
	/* the linear allocation gets stale pixels, the tiled one keeps good */
	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), 0);
	for (y = 0; y < s->height; y++)
		for (x = 0; x < s->width; x++)
			((uint32_t *)(p + (uint64_t)y * pitch))[x] =
				pix(stale, s->width, x, y);
	igt_assert_eq(qgpu_surface_unlock(s, false), 0);

	gate = qt_bo(dev.fd, 4096, APT, QGPU_GEM_CPU_ACCESS, 0);
	g.map = qt_map(dev.fd, gate, 4096);
	*g.map = 0;
	qgpu_cb_bind_flags(cb, 0, gate, 0, 4096, 0);
	qgpu_cb_wait(cb, 0, 0, 1);
	igt_assert_eq(qgpu_submit(dev.fd, s->ctx, cb, NULL, 0, NULL, 0, NULL),
		      0);
	qt_cb_free(cb);
	t0 = qgpu_now_ns();
	igt_assert_eq(pthread_create(&thr, NULL, gate_open, &g), 0);
	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), 0);
	t1 = qgpu_now_ns();
	pthread_join(thr, NULL);
	igt_assert_f(t1 - t0 >= g.delay_ns - SEC_NS / 20,
		     "the lock returned after %lld ms, before the untile could run\n",
		     (long long)((t1 - t0) / 1000000));
	for (y = 0; y < s->height; y++)
		for (x = 0; x < s->width; x++)
			igt_assert_f(((uint32_t *)(p + (uint64_t)y * pitch))[x] ==
				     pix(good, s->width, x, y),
				     "pixel (%u, %u) is not the untiled one\n",
				     x, y);
	igt_assert_eq(qgpu_surface_unlock(s, false), 0);
	/* a second lock while locked is refused; unlock of an unlocked one */
	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), 0);
	igt_assert_eq(qgpu_surface_lock(s, (void **)&p, &pitch), -EBUSY);
	igt_assert_eq(qgpu_surface_unlock(s, false), 0);
	igt_assert_eq(qgpu_surface_unlock(s, false), -EINVAL);
	qt_unmap(dev.fd, gate, (void *)g.map, 4096);
	qt_close(dev.fd, gate);
	surf_free(s);
}

/* ------------------------------------------------------------------------ */
/* TILEs the kernel must refuse                                              */

/*
 * A buffer that first fills the marker, then binds and tiles as @build
 * says. Submitted: @want_ok, or EINVAL with nothing run (the marker is
 * untouched and the context healthy: no fault reached the device)
 */
struct bad_env {
	uint32_t tiled, tiled2, linear, linear2, marker;
	uint32_t *marker_map;
};

static void bad_submit(struct bad_env *e, uint32_t c, struct qgpu_cb *cb,
		       bool want_ok, const char *what)
{
	struct drm_qgpu_context_status cs;
	int ret;

	igt_assert_eq(cb->error, 0);
	e->marker_map[0] = 0;
	ret = qgpu_submit_wait(dev.fd, c, cb, TIMEOUT, NULL);
	igt_assert_f(ret == (want_ok ? 0 : -EINVAL), "%s: submit %s\n", what,
		     ret ? strerror(-ret) : "accepted");
	igt_assert_eq(qgpu_query_context(dev.fd, c, &cs), 0);
	igt_assert_f(cs.state == QGPU_CTX_OK, "%s: context lost (fault %s)\n",
		     what, qgpu_fault_name(cs.fault_reason));
	igt_assert_f(e->marker_map[0] == (want_ok ? 0xbadc0deu : 0),
		     "%s: the marker is %#x\n", what, e->marker_map[0]);
}

/* The marker FILL, then slot 0 = @t (size @tsz), slot 1 = @l (@lsz) */
static struct qgpu_cb *bad_cb(struct bad_env *e, uint32_t t, uint64_t tsz,
			      uint32_t l, uint64_t lsz)
{
	struct qgpu_cb *cb = qt_cb(&dev);

	qgpu_cb_bind(cb, 2, e->marker, 0, 4096);
	qgpu_cb_fill(cb, 2, 0, 4, 0xbadc0de);
	if (t)
		qgpu_cb_bind(cb, 0, t, 0, tsz);
	if (l)
		qgpu_cb_bind(cb, 1, l, 0, lsz);
	return cb;
}

#define BAD(ok, what, t, tsz, l, lsz, ...) do {				\
		struct qgpu_cb *cb_ = bad_cb(&e, t, tsz, l, lsz);	\
		struct qgpu_cb *cb = cb_;				\
									\
		__VA_ARGS__;						\
		bad_submit(&e, ctx, cb_, ok, what);			\
		qt_cb_free(cb_);					\
	} while (0)

static void check_bad_tiles(void)
{
	/* 16 x 16 at pitch 64: 1 KiB on each side */
	const uint32_t w = 16, hh = 16, pitch = 64;
	struct bad_env e;
	uint32_t raw[8];

	e.tiled = qt_bo(dev.fd, 4096, qt_vram_mask(&dev), QGPU_GEM_TILED, 0);
	e.tiled2 = qt_bo(dev.fd, 4096, qt_vram_mask(&dev), QGPU_GEM_TILED, 0);
	e.linear = qt_bo(dev.fd, 4096, qt_vram_mask(&dev), 0, 0);
	e.linear2 = qt_bo(dev.fd, 4096, APT, QGPU_GEM_CPU_ACCESS, 0);
	e.marker = qt_bo(dev.fd, 4096, APT, QGPU_GEM_CPU_ACCESS, 0);
	e.marker_map = qt_map(dev.fd, e.marker, 4096);

	/* the rule holds, with exact fits at the ends of both slots */
	BAD(true, "good tile", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 3072, 1, 3072, w, hh, pitch));
	BAD(true, "good untile", e.tiled, 4096, e.linear2, 4096,
	    qgpu_cb_tile(cb, true, 1, 3072, 0, 3072, w, hh, pitch));
	BAD(true, "good, BIND sizes just enough", e.tiled, 1024, e.linear,
	    1024, qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));

	/* layouts: tiled side on a linear allocation, linear side on a tiled one */
	BAD(false, "tiled side not TILED", e.linear2, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "linear side TILED", e.tiled, 4096, e.tiled2, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "tile into the linear one", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 1, 0, 0, 0, w, hh, pitch));
	BAD(false, "untile into the tiled one", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, true, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "untile from a linear one", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, true, 1, 0, 1, 2048, w, hh, pitch));

	/* ranges: one dword past the bound size, on each side */
	BAD(false, "tiled range past the slot", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 3076, 1, 0, w, hh, pitch));
	BAD(false, "linear range past the slot", e.tiled, 4096, e.linear,
	    4096, qgpu_cb_tile(cb, false, 0, 0, 1, 3076, w, hh, pitch));
	BAD(false, "untile past the linear slot", e.tiled, 4096, e.linear,
	    4096, qgpu_cb_tile(cb, true, 1, 3076, 0, 0, w, hh, pitch));
	BAD(false, "BIND size too small", e.tiled, 1020, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "beyond the allocation", e.tiled, QGPU_CB_WHOLE, e.linear,
	    QGPU_CB_WHOLE, qgpu_cb_tile(cb, false, 0, 0, 1, 0, 64, 64, 256));
	BAD(false, "huge pitch", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, 1, 8, 0xfffffffc));
	BAD(false, "offset wraps", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0xffffff00, 1, 0, w, hh, pitch));

	/* slots: unbound, the NULL allocation, bound only after the TILE */
	BAD(false, "unbound slot", e.tiled, 4096, 0, 0,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "NULL allocation", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_unbind(cb, 1);
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch));
	BAD(false, "BIND after the TILE", e.tiled, 4096, 0, 0,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch);
	    qgpu_cb_bind(cb, 1, e.linear, 0, 4096));
	BAD(false, "slot beyond the table", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, dev.info.max_slots, 0, 1, 0, w, hh,
			 pitch));
	BAD(false, "empty surface, unbound slot", e.tiled, 4096, 0, 0,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, 0, 0, 0));

	/* geometry and flags */
	BAD(false, "width above 16384", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, 16385, 1, 65540));
	BAD(false, "pitch not a multiple of 4", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, 3, 3, 14));
	BAD(false, "pitch below 4 x width", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, 60));
	raw[0] = QGPU_CMD_HDR(QGPU_DMA_TILE, QGPU_TILE_UNTILE | 0x02,
			      QGPU_DMA_TILE_LEN);
	raw[1] = 1;
	raw[2] = 0;
	raw[3] = 0;
	raw[4] = 0;
	raw[5] = w;
	raw[6] = hh;
	raw[7] = pitch;
	BAD(false, "unknown flag", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_emit_raw(cb, raw, 8));
	raw[0] = QGPU_CMD_HDR(QGPU_DMA_VTILE, 0, QGPU_DMA_VTILE_LEN);
	BAD(false, "VTILE in a physical context", e.tiled, 4096, e.linear,
	    4096, qgpu_cb_emit_raw(cb, raw, 8));

	/* the good ones still pass, so the refusals were about the rules */
	BAD(true, "good again", e.tiled, 4096, e.linear, 4096,
	    qgpu_cb_tile(cb, false, 0, 0, 1, 0, w, hh, pitch);
	    qgpu_cb_tile(cb, true, 1, 0, 0, 0, w, hh, pitch));

	qt_unmap(dev.fd, e.marker, e.marker_map, 4096);
	qt_close(dev.fd, e.marker);
	qt_close(dev.fd, e.linear2);
	qt_close(dev.fd, e.linear);
	qt_close(dev.fd, e.tiled2);
	qt_close(dev.fd, e.tiled);
}

/* ------------------------------------------------------------------------ */
/* The virtual form                                                          */

static void check_virtual(void)
{
	struct qgpu_surface *s;
	struct xor_fill a = { .seed = 0x7e7e, .tile = 3, .pattern = 0x1111 };
	uint64_t bytes, size, va, i;
	struct qgpu_vcb vcb;
	uint32_t idx, *p;
	int ret;

	igt_require_f(qgpu_dev_has_mmu(&dev), "no GPU MMU\n");
	s = surf_new(150, 70, QGPU_SURFACE_VIRTUAL);
	igt_assert(s->tiled.va && s->linear.va);
	surf_write(s, a.seed);
	surf_check(s, want_pattern, &a.seed, "virtual");

	/* tiled ^= index, then one tile filled, in the surface's own VM */
	bytes = s->tiled.fmt.bytes;
	size = (bytes + 0xffff) & ~0xffffull;
	idx = qt_bo(dev.fd, size, APT, QGPU_GEM_CPU_ACCESS, 0);
	p = qt_map(dev.fd, idx, size);
	for (i = 0; i < size / 4; i++)
		p[i] = (uint32_t)i;
	qt_unmap(dev.fd, idx, p, size);
	igt_assert_eq(qgpu_vm_reserve(dev.fd, 0, size, 0, &va), 0);
	igt_assert_eq(qgpu_vm_map(dev.fd, idx, va, 0, size, 0), 0);
	qgpu_vcb_init(&vcb);
	qgpu_vcb_xor(&vcb, s->tiled.va, s->tiled.va, va, (uint32_t)(bytes / 4));
	qgpu_vcb_fill(&vcb, s->tiled.va + a.tile * 256, 256, a.pattern);
	ret = qgpu_vcb_submit_wait(dev.fd, s->ctx, &vcb, TIMEOUT);
	igt_assert_eq(ret, 0);
	surf_check(s, want_xor_fill, &a, "virtual xor and fill");

	/* evicted (MakeResident's Evict), reached through system entries */
	igt_assert_eq(qgpu_evict(dev.fd, &s->tiled.handle, 1, NULL), 0);
	igt_assert_eq(qgpu_evict(dev.fd, &s->linear.handle, 1, NULL), 0);
	surf_check(s, want_xor_fill, &a, "virtual, evicted");

	/* the kernel checks a VTILE's geometry; a TILE is not virtual */
	qgpu_vcb_reset(&vcb);
	qgpu_vcb_tile(&vcb, true, s->linear.va, s->tiled.va, 150, 70, 596);
	igt_assert_eq(qgpu_vcb_submit_wait(dev.fd, s->ctx, &vcb, TIMEOUT),
		      -EINVAL);
	qgpu_vcb_reset(&vcb);
	qgpu_vcb_tile(&vcb, true, s->linear.va, s->tiled.va, 16385, 1, 65540);
	igt_assert_eq(qgpu_vcb_submit_wait(dev.fd, s->ctx, &vcb, TIMEOUT),
		      -EINVAL);
	qgpu_vcb_reset(&vcb);
	{
		uint32_t raw[8] = {
			QGPU_CMD_HDR(QGPU_DMA_TILE, 0, QGPU_DMA_TILE_LEN),
			0, 0, 1, 0, 8, 8, 32,
		};

		qgpu_vcb_emit_raw(&vcb, raw, 8);
	}
	igt_assert_eq(qgpu_vcb_submit_wait(dev.fd, s->ctx, &vcb, TIMEOUT),
		      -EINVAL);
	qgpu_vcb_fini(&vcb);
	surf_check(s, want_xor_fill, &a, "virtual, after refusals");
	igt_assert_eq(qgpu_vm_free(dev.fd, va, size), 0);
	qt_close(dev.fd, idx);
	surf_free(s);
}

igt_main
{
	igt_fixture {
		qt_open(&dev, QGPU_NODE_RENDER);
		igt_require_f(dev.info.caps & QGPU_INFO_CAP_TILING,
			      "the device has no tiling (QGPU_INFO_CAP_TILING)\n");
		ctx = qt_ctx(dev.fd);
	}

	igt_subtest("tiled-flag-rules")
		check_flags();
	igt_subtest("roundtrip-gpu-work-on-tiled") {
		check_roundtrip(200, 120, 0x5a5a);
		check_roundtrip(512, 64, 0x1234);
	}
	igt_subtest("tiled-bytes-are-the-permutation")
		check_tiled_permutation();
	igt_subtest("lock-waits-for-untile")
		check_lock_waits();
	igt_subtest("survives-eviction")
		check_eviction();
	igt_subtest("odd-sizes")
		check_odd_sizes();
	igt_subtest("oversubscribed")
		check_oversubscribed();
	igt_subtest("bad-tiles-einval")
		check_bad_tiles();
	igt_subtest("virtual")
		check_virtual();

	igt_fixture {
		struct drm_qgpu_context_status cs;
		struct drm_qgpu_stats st;
		int i;

		surf_cleanup();
		igt_assert_eq(qgpu_query_context(dev.fd, ctx, &cs), 0);
		igt_assert_eq(cs.state, QGPU_CTX_OK);
		/* destroyed surfaces go once their queued tiles are done */
		for (i = 0; i < 100; i++) {
			qt_stats(dev.fd, &st);
			if (!st.allocations)
				break;
			usleep(100 * 1000);
		}
		qt_assert_no_allocations(dev.fd);
	}
}
