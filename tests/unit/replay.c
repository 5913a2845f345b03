// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for qgpu-replay (tools/replay/, docs/trace-format.md):
 * hand-made traces whose figures (every policy's paging, the MIN bound,
 * the whole-allocation schedule) are computed by hand in the comments;
 * then every trace of the repository's suite (the .qtr files of traces/,
 * recorded from real runs): replayed with the policy the kernel used it gives exactly
 * the kernel's counters, moves, uses and books (the record/replay round
 * trip, checked on the host); the bound is never above any policy; and
 * every replay is deterministic.
 *
 * unit-sources: kernel/qgpu_policy.c kernel/qgpu_split.c tools/replay/trace.c tools/replay/mm.c tools/replay/bound.c */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "igt.h"
#include "qgpu_policy.h"
#include "../../tools/replay/replay.h"

#define PG	4096ull

/* A device of @visible bytes of CPU-visible VRAM and 1 MiB of aperture */
static const char *header(unsigned long long visible)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "qgpu-trace 1\n"
		 "device vram=%llu visible=%llu gart=1048576 hap=0 page=4096 slots=8 mmu=0 io_coherent=1\n"
		 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1\n"
		 "0 snap-seg seg=1 size=%llu reserved=0 used=0 allocations=0\n"
		 "0 snap-hole seg=1 start=0 size=%llu\n"
		 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
		 "0 snap-hole seg=3 start=0 size=1048576\n"
		 "0 snap-end tag=1\n",
		 visible, visible, visible, visible);
	return buf;
}

static void load(struct rp_trace *t, const char *text)
{
	static char path[PATH_MAX];
	char err[256];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/qgpu-replay-unit.XXXXXX");
	fd = mkstemp(path);
	igt_assert(fd >= 0);
	f = fdopen(fd, "w");
	igt_assert(f);
	fputs(text, f);
	fclose(f);
	igt_assert_f(!rp_trace_load(t, path, err, sizeof(err)), "%s\n", err);
	unlink(path);
}

/* @text must be refused, naming line @line */
static void refused(const char *text, unsigned int line)
{
	char path[] = "/tmp/qgpu-replay-unit.XXXXXX", err[512], want[32];
	struct rp_trace t;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	igt_assert(fd >= 0);
	f = fdopen(fd, "w");
	igt_assert(f);
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	igt_assert_f(rp_trace_load(&t, path, err, sizeof(err)),
		     "accepted:\n%s\n", text);
	snprintf(want, sizeof(want), ":%u: ", line);
	igt_assert_f(strstr(err, want), "'%s' does not name line %u\n", err,
		     line);
	unlink(path);
}

/* xorshift64: the same mutations on every run */
static u64 rnd(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int policy(const char *name)
{
	unsigned int i;

	for (i = 0; i < QGPU_POLICY_COUNT; i++)
		if (!strcmp(qgpu_policy_name(i), name))
			return i;
	return -1;
}

/*
 * Every policy and the oracle, the references they all served from VRAM,
 * the evictions they all made on request, the bounds (as qgpu-replay
 * computes them), and MIN with the requests ignored
 */
struct all {
	struct rp_result r[QGPU_POLICY_COUNT], oracle;
	struct rp_bound min, fnu, min_free, pooled;
	u8 *served, *out;
};

static void replay_all(const struct rp_trace *t, struct all *a)
{
	struct rp_options opt = { .oracle = true };
	struct rp_config cfg;
	unsigned int p;
	u64 i;

	igt_assert(!rp_config_from_trace(t, &cfg));
	a->served = calloc(t->nrefs + 1, 1);
	a->out = calloc(t->nev + 1, 1);
	igt_assert(a->served && a->out);
	for (i = 0; i < t->nrefs; i++)
		a->served[i] = RP_REF_VRAM;
	igt_assert(!rp_replay(t, &cfg, QGPU_POLICY_FUTURE_USE, &opt,
			      &a->oracle));
	memcpy(a->out, a->oracle.out, t->nev);
	for (i = 0; i < t->nrefs; i++)
		if (a->oracle.ref[i] != RP_REF_VRAM)
			a->served[i] = RP_REF_SKIPPED;
	for (p = 0; p < QGPU_POLICY_COUNT; p++) {
		igt_assert(!rp_replay(t, &cfg, p, NULL, &a->r[p]));
		for (i = 0; i < t->nrefs; i++)
			if (a->r[p].ref[i] != RP_REF_VRAM)
				a->served[i] = RP_REF_SKIPPED;
		for (i = 0; i < t->nev; i++)
			a->out[i] &= a->r[p].out[i];
	}
	cfg.bound_pts = !a->oracle.pt_failed;
	for (p = 0; p < QGPU_POLICY_COUNT; p++)
		cfg.bound_pts &= !a->r[p].pt_failed;
	rp_bound_min(t, &cfg, a->served, a->out, &a->min);
	rp_bound_fnu(t, &cfg, a->served, a->out, &a->fnu);
	rp_bound_min(t, &cfg, a->served, NULL, &a->min_free);
	rp_bound_min_pooled(t, &cfg, a->served, a->out, &a->pooled);
	/* the segments only ever take capacity away */
	igt_assert(a->min.in_bytes >= a->pooled.in_bytes);
}

/* Every policy, the oracle and the bounds, whatever they return */
static void replay_any(const struct rp_trace *t, const struct rp_config *c)
{
	struct rp_options opt = { .oracle = true };
	struct rp_config pts = *c, *cfg = &pts;
	struct rp_bound b;
	struct rp_result r;
	u8 *served = calloc(t->nrefs + 1, 1), *out;
	unsigned int p;

	igt_assert(served);
	for (p = 0; p < QGPU_POLICY_COUNT; p++) {
		rp_replay(t, cfg, p, NULL, &r);
		rp_result_free(&r);
	}
	rp_replay(t, cfg, QGPU_POLICY_FUTURE_USE, &opt, &r);
	rp_result_free(&r);
	memset(served, RP_REF_VRAM, t->nrefs);
	/* the page tables counted too */
	pts.bound_pts = true;
	rp_bound_min(t, cfg, served, NULL, &b);
	rp_bound_fnu(t, cfg, served, NULL, &b);
	/* every event a request that left VRAM */
	out = malloc(t->nev + 1);
	igt_assert(out);
	memset(out, 1, t->nev + 1);
	rp_bound_min(t, cfg, served, out, &b);
	rp_bound_fnu(t, cfg, served, out, &b);
	free(out);
	free(served);
}

static void all_free(struct all *a)
{
	unsigned int p;

	for (p = 0; p < QGPU_POLICY_COUNT; p++)
		rp_result_free(&a->r[p]);
	rp_result_free(&a->oracle);
	free(a->served);
	free(a->out);
}

static u64 in(const struct rp_result *r)
{
	return r->c.to_vram + r->c.filled;
}

/* Two VRAM segments of @vis and @loc pages and 1 MiB of aperture */
static int two_segments(char *buf, size_t len, unsigned int vis,
			unsigned int loc)
{
	return snprintf(buf, len,
			"qgpu-trace 1\n"
			"device vram=%llu visible=%llu gart=1048576 hap=0 page=4096 slots=8 mmu=0 io_coherent=1\n"
			"0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=15 budget=100\n"
			"0 snap-seg seg=1 size=%llu reserved=0 used=0 allocations=0\n"
			"0 snap-hole seg=1 start=0 size=%llu\n"
			"0 snap-seg seg=2 size=%llu reserved=0 used=0 allocations=0\n"
			"0 snap-hole seg=2 start=0 size=%llu\n"
			"0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
			"0 snap-hole seg=3 start=0 size=1048576\n"
			"0 snap-end tag=1\n",
			(vis + loc) * PG, vis * PG, vis * PG, vis * PG,
			loc * PG, loc * PG);
}

static char text[8192];

/* Every policy and the oracle ran every submit and paged in at least MIN */
static void every_run_at_or_above_min(const struct all *a)
{
	unsigned int p;

	for (p = 0; p < QGPU_POLICY_COUNT; p++) {
		igt_assert_eq(a->r[p].failed_submits, 0);
		igt_assert(in(&a->r[p]) >= a->min.in_bytes);
	}
	igt_assert(in(&a->oracle) >= a->min.in_bytes);
}

/*
 * Two VRAM segments of @vis and @loc pages, and three allocations of
 * @pages pages each with @mask, made resident in turn: X Y Z X Y Z
 */
static void cyclic_xyz(unsigned int vis, unsigned int loc,
		       unsigned int pages, unsigned int mask)
{
	unsigned int k;
	int len = two_segments(text, sizeof(text), vis, loc);

	for (k = 1; k <= 3; k++)
		len += snprintf(text + len, sizeof(text) - len,
				"1 create id=%u size=%u mask=0x%x flags=0 pref=0x1\n",
				k, pages * 4096, mask);
	for (k = 0; k < 6; k++)
		len += snprintf(text + len, sizeof(text) - len,
				"%u reside id=%u seg=0\n", k + 2, k % 3 + 1);
}

/* Three one-page allocations made resident in turn: A B C A B C */
static const char abcabc[] =
	"1 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
	"1 create id=2 size=4096 mask=0xa flags=0 pref=0x1\n"
	"1 create id=3 size=4096 mask=0xa flags=0 pref=0x1\n"
	"2 reside id=1 seg=1\n3 reside id=2 seg=1\n"
	"4 reside id=3 seg=1\n5 reside id=1 seg=1\n"
	"6 reside id=2 seg=1\n7 reside id=3 seg=1\n";

igt_main
{
	/*
	 * Two pages of VRAM, three one-page allocations, each made resident
	 * in VRAM in turn: A B C A B C (GEM_RESIDE to segment 1).
	 *
	 * lru: A, B filled; C evicts A (the least recent), filled; A evicts
	 * B, copied in; B evicts C; C evicts A: 3 fills + 3 copies in = 6
	 * pages in, 4 out, 4 evictions.
	 * lowest-offset: C evicts A (offset 0) and takes 0; A evicts C (now
	 * at 0); B is still there; C evicts A: 3 fills + 2 copies in = 5
	 * pages, 3 evictions.
	 * MIN: A, B miss; C misses and evicts B (next use 4, A's is 3); A
	 * hits; B misses and evicts A (never used again); C hits: 4 pages
	 * in, 2 out. Whole allocations of one page: the same.
	 */
	igt_subtest("hand-lru-vs-min") {
		struct rp_trace t;
		struct all a;
		int lru = policy("lru"), low = policy("lowest-offset");

		snprintf(text, sizeof(text), "%s%s", header(2 * PG), abcabc);
		load(&t, text);
		igt_assert_eq(t.nrefs, 6);
		replay_all(&t, &a);
		igt_assert(lru >= 0 && low >= 0);
		igt_assert_eq(a.r[lru].c.filled, 3 * PG);
		igt_assert_eq(a.r[lru].c.to_vram, 3 * PG);
		igt_assert_eq(a.r[lru].c.from_vram, 4 * PG);
		igt_assert_eq(a.r[lru].c.evictions, 4);
		igt_assert_eq(in(&a.r[low]), 5 * PG);
		igt_assert_eq(a.r[low].c.evictions, 3);
		igt_assert_eq(a.min.refs, 6);
		igt_assert_eq(a.min.in_bytes, 4 * PG);
		igt_assert_eq(a.min.out_bytes, 2 * PG);
		igt_assert_eq(a.fnu.in_bytes, 4 * PG);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * The oracle (rp_options.oracle) on the same trace: the real memory
	 * manager choosing victims by the whole trace's future. A, B filled;
	 * C evicts B (next used at reference 4, A at 3), filled; A hits; B
	 * evicts A (never used again), copied back in; C hits: 3 fills + 1
	 * page in = 4 pages, MIN's figure, 2 evictions (each 1 page out, to
	 * the aperture). The online future-use policy knows no future outside
	 * a DMA buffer: LRU's 6 pages.
	 */
	igt_subtest("hand-oracle") {
		struct rp_options oracle = { .oracle = true };
		struct rp_config cfg;
		struct rp_trace t;
		struct rp_result r;
		struct all a;
		int fu = policy("future-use");

		snprintf(text, sizeof(text), "%s%s", header(2 * PG), abcabc);
		load(&t, text);
		replay_all(&t, &a);
		igt_assert(fu >= 0);
		igt_assert_eq(in(&a.r[fu]), 6 * PG);
		igt_assert(!rp_config_from_trace(&t, &cfg));
		igt_assert(!rp_replay(&t, &cfg, fu, &oracle, &r));
		igt_assert_eq(r.c.filled, 3 * PG);
		igt_assert_eq(r.c.to_vram, PG);
		igt_assert_eq(r.c.from_vram, 2 * PG);
		igt_assert_eq(r.c.evictions, 2);
		igt_assert_eq(in(&r), a.min.in_bytes);
		rp_result_free(&r);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * gpu-write: a virtual submission (or another device) may have written
	 * the allocation where it was, so its first placement in VRAM copies
	 * it (1 page in, no zero fill); without the event a never-used
	 * allocation is zero-filled.
	 */
	igt_subtest("hand-gpu-write-copies") {
		struct rp_config cfg;
		struct rp_trace t;
		struct rp_result r;
		unsigned int k;

		for (k = 0; k < 2; k++) {
			snprintf(text, sizeof(text), "%s%s%s%s", header(2 * PG),
				 "1 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n",
				 k ? "2 gpu-write id=1\n" : "",
				 "3 reside id=1 seg=1\n");
			load(&t, text);
			igt_assert(!rp_config_from_trace(&t, &cfg));
			igt_assert(!rp_replay(&t, &cfg, 0, NULL, &r));
			igt_assert_eq(r.c.filled, k ? 0 : PG);
			igt_assert_eq(r.c.to_vram, k ? PG : 0);
			rp_result_free(&r);
			rp_trace_free(&t);
		}
	}

	/*
	 * Three pages of VRAM, two allocations of two pages, X Y X Y.
	 * Every policy: each placement evicts the other: 4 x 2 pages in.
	 * MIN over pooled pages: X 2 in; Y needs 2, 1 free: 1 page of X
	 * out, 2 in; X needs 1: 1 of Y out (used again before X's never); Y
	 * needs 1: 1 of X out: 2 + 2 + 1 + 1 = 6 pages in, 3 out.
	 * Whole allocations: X 2; Y evicts X: 2; X evicts Y: 2; Y evicts X:
	 * 2 = 8 pages in, 6 out. MIN with the segment's capacity: beside a
	 * 2-page allocation the segment holds no more whole allocation (1
	 * page free), so 2 pages at every reference: 8 in, 6 out, the
	 * policies' figure.
	 */
	igt_subtest("hand-page-granularity") {
		struct rp_trace t;
		struct all a;
		unsigned int p;

		snprintf(text, sizeof(text), "%s%s", header(3 * PG),
			 "1 create id=1 size=8192 mask=0xa flags=0 pref=0x1\n"
			 "1 create id=2 size=8192 mask=0xa flags=0 pref=0x1\n"
			 "2 reside id=1 seg=1\n3 reside id=2 seg=1\n"
			 "4 reside id=1 seg=1\n5 reside id=2 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			igt_assert_eq(in(&a.r[p]), 8 * PG);
		igt_assert_eq(a.pooled.in_bytes, 6 * PG);
		igt_assert_eq(a.pooled.out_bytes, 3 * PG);
		igt_assert_eq(a.min.in_bytes, 8 * PG);
		igt_assert_eq(a.min.out_bytes, 6 * PG);
		igt_assert_eq(a.fnu.in_bytes, 8 * PG);
		igt_assert_eq(a.fnu.out_bytes, 6 * PG);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Two segments of three pages, X Y Z of two pages each, made
	 * resident without a segment: X Y Z X Y Z. Pooled, the six pages
	 * hold all three: MIN fills only, 6 pages. But a segment holds one
	 * of them (a second does not fit beside it), so VRAM holds two at
	 * any time: the capacity at each reference is 2 + 2 pages (X alone
	 * at the first: 2). MIN: X 2, Y 2 in; Z needs 2: of X (used next)
	 * and Y (used after), Y out; X there; Y needs 2: X (never again)
	 * out; Z there: 8 pages in, 4 out. Every policy pages at least that.
	 */
	igt_subtest("hand-segments-hold-whole-allocations") {
		struct rp_trace t;
		struct all a;

		cyclic_xyz(3, 3, 2, 0x6);
		load(&t, text);
		replay_all(&t, &a);
		igt_assert_eq(a.pooled.in_bytes, 6 * PG);
		igt_assert_eq(a.min.in_bytes, 8 * PG);
		igt_assert_eq(a.min.out_bytes, 4 * PG);
		every_run_at_or_above_min(&a);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * An allocation uses only the segments of its mask. Two visible
	 * pages, four others; A B C, one page each, CPU-visible only (mask
	 * 0x2), made resident in turn: A B C A B C. Over all allocations
	 * VRAM holds the three (3 pages in). By class, the visible segment is
	 * all they may use: MIN in two pages: A, B in; C: B (used after A)
	 * out; A there; B: A (never again) out; C there: 4 pages in, 2 out,
	 * and the bound is that sum. Every policy pages at least that.
	 */
	igt_subtest("hand-segment-classes") {
		struct rp_trace t;
		struct all a;

		cyclic_xyz(2, 4, 1, 0x2);
		load(&t, text);
		replay_all(&t, &a);
		igt_assert_eq(a.pooled.in_bytes, 3 * PG);
		igt_assert_eq(a.min.in_bytes, 4 * PG);
		igt_assert_eq(a.min.out_bytes, 2 * PG);
		igt_assert(a.min.by_class);
		igt_assert_eq(a.fnu.in_bytes, 4 * PG);
		every_run_at_or_above_min(&a);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Entries with one SplitOffset are in VRAM together (no portion
	 * boundary falls between them). Five pages; A and B (two pages) used
	 * by one submission at one SplitOffset, C (three pages) made
	 * resident: {A B} C {A B} C.
	 * Segment-aware MIN: {A B}: 4 pages in (capacity 4: nothing else
	 * lives). C: capacity 3 + 2 (one of A, B beside it) = 5: B (used
	 * after A) out, 3 in. {A B}: beside A and B together 1 page is left,
	 * C's 3 do not fit: capacity 4; A there but 5 pages held: 1 of C
	 * out; B needs 2: not A (in VRAM with B for the portion), the rest
	 * of C out, 2 in. C needs 3, capacity 5: 2 of A (never used again,
	 * as B) out, 3 in. 12 pages in, 7 out.
	 * Pooled (5 pages, also what one reference alone would allow: A
	 * beside B and C's 3 of 5): {A B} 4; C: B out, 3 in; {A B}: A there,
	 * B needs 2: A out, 2 in; C there: 9 pages in, 4 out.
	 */
	igt_subtest("hand-group-together") {
		struct rp_trace t;
		struct all a;
		unsigned int p, q;
		size_t len;

		len = snprintf(text, sizeof(text), "%s%s", header(5 * PG),
			       "1 create id=1 size=8192 mask=0x2 flags=0 pref=0x1\n"
			       "1 create id=2 size=8192 mask=0x2 flags=0 pref=0x1\n"
			       "1 create id=3 size=12288 mask=0x2 flags=0 pref=0x1\n");
		for (q = 1; q <= 2; q++)
			len += snprintf(text + len, sizeof(text) - len,
					"2 submit seq=%u ctx=1 allocs=2 patches=2 dma=64\n"
					"2 entry seq=%u i=0 id=1 slot=0 split=0 patch=8 write=1 alloc=0\n"
					"2 entry seq=%u i=1 id=2 slot=1 split=0 patch=16 write=1 alloc=1\n"
					"3 reside id=3 seg=1\n", q, q, q);
		load(&t, text);
		replay_all(&t, &a);
		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			igt_assert_eq(a.r[p].failed_submits, 0);
			igt_assert(in(&a.r[p]) >= a.min.in_bytes);
		}
		igt_assert_eq(a.min.in_bytes, 12 * PG);
		igt_assert_eq(a.min.out_bytes, 7 * PG);
		igt_assert_eq(a.pooled.in_bytes, 9 * PG);
		igt_assert_eq(a.pooled.out_bytes, 4 * PG);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * The bound is a lower bound whatever the workload: 1000 random
	 * traces (two segments of 2 to 9 pages, allocations of 1 to 5 pages,
	 * made resident alone or used by submissions with 1 to 4 entries at
	 * random SplitOffsets, some destroyed, page tables taken and given
	 * back between them) replayed with every policy and
	 * the oracle: none pages in less than the segment-aware MIN, which
	 * is never below the pooled one. Deterministic.
	 */
	igt_subtest("random-traces-bound-below-every-policy") {
		u64 x = 0x243f6a8885a308d3ull;
		unsigned int it, tighter = 0;

#define RND(n) ((unsigned int)(rnd(&x) >> 33) % (n))
		for (it = 0; it < 1000; it++) {
			unsigned int na = 3 + RND(5), nev = 8 + RND(24), seq = 0;
			unsigned int npt = 0;
			unsigned int k, e, p;
			bool gone[8] = { false };
			struct rp_trace t;
			struct all a;
			int len;

			len = two_segments(text, sizeof(text), 2 + RND(8),
					   2 + RND(8));
			for (k = 1; k <= na; k++)
				{
				/* some may use only one VRAM segment */
				static const unsigned int masks[] = {
					0x6, 0x6, 0xe, 0x2, 0x4, 0xa
				};
				unsigned int pages = 1 + RND(5);
				unsigned int mask = masks[RND(6)];
				unsigned int pref = mask == 0x4 ? 2 :
						    (mask & 0x4) ? 1 + RND(2) : 1;

				len += snprintf(text + len, sizeof(text) - len,
						"1 create id=%u size=%u mask=0x%x flags=0 pref=0x%x\n",
						k, pages * 4096, mask, pref);
			}
			for (e = 0; e < nev; e++) {
				unsigned int id = 1 + RND(na), n, split = 0;
				unsigned int pick[4];

				if (gone[id - 1])
					continue;
				if (RND(12) == 0) {
					/* a page table taken, or given back */
					if (npt && RND(2))
						len += snprintf(text + len,
								sizeof(text) - len,
								"%u pt-free pt=%u\n",
								e + 2, 1 + RND(npt));
					else
						len += snprintf(text + len,
								sizeof(text) - len,
								"%u pt-alloc pt=%u level=0 seg=2 start=0 ret=0 vidmem=0\n",
								e + 2, ++npt);
					continue;
				}
				if (RND(10) == 0) {
					len += snprintf(text + len,
							sizeof(text) - len,
							"%u destroy id=%u seg=0 deferred=0\n",
							e + 2, id);
					gone[id - 1] = true;
					continue;
				}
				if (RND(2)) {
					len += snprintf(text + len,
							sizeof(text) - len,
							"%u reside id=%u seg=0\n",
							e + 2, id);
					continue;
				}
				for (n = 0, k = 0; k < 4 && n < 4; k++) {
					unsigned int c = 1 + RND(na), j;

					for (j = 0; j < n && pick[j] != c; j++)
						;
					if (j == n && !gone[c - 1])
						pick[n++] = c;
				}
				if (!n)
					continue;
				seq++;
				len += snprintf(text + len, sizeof(text) - len,
						"%u submit seq=%u ctx=1 allocs=%u patches=%u dma=128\n",
						e + 2, seq, n, n);
				for (k = 0; k < n; k++) {
					if (k && RND(2))
						split = 16 * k;
					unsigned int w = RND(2);

					len += snprintf(text + len,
							sizeof(text) - len,
							"%u entry seq=%u i=%u id=%u slot=%u split=%u patch=%u write=%u alloc=%u\n",
							e + 2, seq, k, pick[k],
							k, split, 16 * k + 8,
							w, k);
				}
			}
			igt_assert(len < (int)sizeof(text));
			load(&t, text);
			replay_all(&t, &a);
			for (p = 0; p < QGPU_POLICY_COUNT; p++)
				igt_assert_f(in(&a.r[p]) >= a.min.in_bytes,
					     "policy %s paged in %llu, below the bound %llu:\n%s",
					     qgpu_policy_name(p),
					     (unsigned long long)in(&a.r[p]),
					     (unsigned long long)a.min.in_bytes,
					     text);
			igt_assert_f(in(&a.oracle) >= a.min.in_bytes,
				     "the oracle paged in %llu, below the bound %llu:\n%s",
				     (unsigned long long)in(&a.oracle),
				     (unsigned long long)a.min.in_bytes, text);
			tighter += a.min.in_bytes > a.pooled.in_bytes;
			all_free(&a);
			rp_trace_free(&t);
		}
#undef RND
		/* the segments made a difference in many of them */
		igt_assert_f(tighter >= 100, "tighter in only %u\n", tighter);
	}

	/*
	 * A segment of 8 GiB (2^21 pages) is too much to sum sizes over per
	 * group: the bound pools VRAM then (still a bound, and says so), and
	 * a small one does not.
	 */
	igt_subtest("huge-segments-pooled") {
		struct rp_trace t;
		struct all a;

		snprintf(text, sizeof(text), "%s%s", header(8ull << 30),
			 abcabc);
		load(&t, text);
		replay_all(&t, &a);
		igt_assert(a.min.pooled);
		igt_assert_eq(a.min.in_bytes, a.pooled.in_bytes);
		igt_assert_eq(a.min.in_bytes, 3 * PG);
		all_free(&a);
		rp_trace_free(&t);
		snprintf(text, sizeof(text), "%s%s", header(2 * PG), abcabc);
		load(&t, text);
		replay_all(&t, &a);
		igt_assert(!a.min.pooled);
		igt_assert(a.pooled.pooled);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Two pages: A, B, A destroyed, C, B. Destruction frees A's page
	 * for C at no cost: A, B, C miss, B hits: 3 pages, for MIN and for
	 * every policy (ratio 1).
	 */
	igt_subtest("hand-destroy-frees") {
		struct rp_trace t;
		struct all a;
		unsigned int p;

		snprintf(text, sizeof(text), "%s%s", header(2 * PG),
			 "1 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "1 create id=2 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "1 create id=3 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "2 reside id=1 seg=1\n3 reside id=2 seg=1\n"
			 "4 destroy id=1 seg=1 deferred=0\n"
			 "5 reside id=3 seg=1\n6 reside id=2 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		igt_assert_eq(a.min.in_bytes, 3 * PG);
		igt_assert_eq(a.min.out_bytes, 0);
		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			igt_assert_eq(in(&a.r[p]), 3 * PG);
			igt_assert_eq(a.r[p].c.evictions, 0);
		}
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Room before eviction: two pages of CPU-visible VRAM, two of
	 * non-visible, three one-page allocations that may use both and
	 * prefer the visible one, made resident without a segment: A B C A.
	 * A memory manager with features bit 1 puts C where there is room
	 * (non-visible): 3 fills, no eviction, A stays. Without it, C evicts
	 * A from its preferred segment (every policy: A is the least recent
	 * and at the lowest offset) and A evicts B: 3 fills + 1 copy in, 2
	 * evictions, while non-visible VRAM stays empty. Except reuse-interval:
	 * A and B are used once, so the most recent, B, goes, and A is there
	 * when used again: 3 fills, 1 eviction.
	 */
	igt_subtest("hand-room-before-eviction") {
		static const unsigned int feat[] = { 0x3, 0x1 };
		struct rp_trace t;
		struct all a;
		unsigned int f, p;

		for (f = 0; f < 2; f++) {
			snprintf(text, sizeof(text),
				 "qgpu-trace 1\n"
				 "device vram=16384 visible=8192 gart=1048576 hap=0 page=4096 slots=8 mmu=0 io_coherent=1\n"
				 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=%u budget=100\n"
				 "0 snap-seg seg=1 size=8192 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=1 start=0 size=8192\n"
				 "0 snap-seg seg=2 size=8192 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=2 start=0 size=8192\n"
				 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=3 start=0 size=1048576\n"
				 "0 snap-end tag=1\n"
				 "1 create id=1 size=4096 mask=0x6 flags=0 pref=0x1\n"
				 "1 create id=2 size=4096 mask=0x6 flags=0 pref=0x1\n"
				 "1 create id=3 size=4096 mask=0x6 flags=0 pref=0x1\n"
				 "2 reside id=1 seg=0\n3 reside id=2 seg=0\n"
				 "4 reside id=3 seg=0\n5 reside id=1 seg=0\n",
				 feat[f]);
			load(&t, text);
			replay_all(&t, &a);
			for (p = 0; p < QGPU_POLICY_COUNT; p++) {
				bool ri = p == QGPU_POLICY_REUSE_INTERVAL;

				igt_assert_eq(a.r[p].c.filled, 3 * PG);
				igt_assert_eq(a.r[p].c.to_vram,
					      f && !ri ? PG : 0);
				igt_assert_eq(a.r[p].c.evictions,
					      f ? 2 - ri : 0);
			}
			/* 4 pages pooled hold all three: MIN fills only */
			igt_assert_eq(a.min.in_bytes, 3 * PG);
			all_free(&a);
			rp_trace_free(&t);
		}
	}

	/*
	 * Best segment: three pages of CPU-visible VRAM, two of non-visible;
	 * A (two pages) and B (three), both preferring the visible one, made
	 * resident without a segment: A B A B. Features bit 3 puts A where its
	 * best-fit hole is the smallest (non-visible: its two pages), and B
	 * takes the visible three: 5 pages filled, nothing evicted. Without
	 * it, A takes the first segment of its order with room (visible), B
	 * evicts it there (every policy: the only candidate) and A comes back
	 * in the non-visible: 2 pages copied in, 1 eviction.
	 */
	igt_subtest("hand-best-segment") {
		static const unsigned int feat[] = { 0xf, 0x7 };
		struct rp_trace t;
		struct all a;
		unsigned int f, p;

		for (f = 0; f < 2; f++) {
			snprintf(text, sizeof(text),
				 "qgpu-trace 1\n"
				 "device vram=20480 visible=12288 gart=1048576 hap=0 page=4096 slots=8 mmu=0 io_coherent=1\n"
				 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=%u budget=100\n"
				 "0 snap-seg seg=1 size=12288 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=1 start=0 size=12288\n"
				 "0 snap-seg seg=2 size=8192 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=2 start=0 size=8192\n"
				 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=3 start=0 size=1048576\n"
				 "0 snap-end tag=1\n"
				 "1 create id=1 size=8192 mask=0x6 flags=0 pref=0x1\n"
				 "1 create id=2 size=12288 mask=0x6 flags=0 pref=0x1\n"
				 "2 reside id=1 seg=0\n3 reside id=2 seg=0\n"
				 "4 reside id=1 seg=0\n5 reside id=2 seg=0\n",
				 feat[f]);
			load(&t, text);
			replay_all(&t, &a);
			for (p = 0; p < QGPU_POLICY_COUNT; p++) {
				igt_assert_eq(a.r[p].c.filled, 5 * PG);
				igt_assert_eq(a.r[p].c.to_vram, f ? 2 * PG : 0);
				igt_assert_eq(a.r[p].c.evictions, f ? 1 : 0);
			}
			/* 5 pages pooled hold both: MIN fills only */
			igt_assert_eq(a.min.in_bytes, 5 * PG);
			all_free(&a);
			rp_trace_free(&t);
		}
	}

	/*
	 * Splitting early: three pages of VRAM, four one-page allocations A B
	 * C D (VRAM only), two submissions of the DMA buffer A B C D, each at
	 * a split point of its own in slot 0.
	 *
	 * The first: A B C filled, D splits there and evicts A (lru). VRAM:
	 * B C D. Before the feature, the second buffer's walk pins A, then
	 * B, then C for its first portion, each placement evicting the one
	 * the buffer needs next (B, C, D), and D splits and evicts A: 4
	 * copies in. With it (features bit 2): A evicts B (all of B C D are
	 * used later and nothing can be released yet); B finds only C and D,
	 * both used later, while the portion holds A, which the buffer no
	 * longer needs: it splits before B and evicts A; C and D are there:
	 * 2 copies in, 2 out. MIN: 4 fills + 1 (A evicts D, used last; D
	 * evicts A).
	 */
	igt_subtest("hand-split-early") {
		static const unsigned int feat[] = { 0x3, 0x7 };
		struct rp_trace t;
		struct all a;
		unsigned int f, p, q, k;
		size_t len;

		for (f = 0; f < 2; f++) {
			struct rp_result *lru;

			len = snprintf(text, sizeof(text),
				 "qgpu-trace 1\n"
				 "device vram=12288 visible=12288 gart=1048576 hap=0 page=4096 slots=8 mmu=0 io_coherent=1\n"
				 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=%u budget=100\n"
				 "0 snap-seg seg=1 size=12288 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=1 start=0 size=12288\n"
				 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=3 start=0 size=1048576\n"
				 "0 snap-end tag=1\n"
				 "1 create id=1 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "1 create id=2 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "1 create id=3 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "1 create id=4 size=4096 mask=0x2 flags=0 pref=0x1\n",
				 feat[f]);
			for (q = 1; q <= 2; q++) {
				len += snprintf(text + len, sizeof(text) - len,
						"2 submit seq=%u ctx=1 allocs=4 patches=4 dma=64\n",
						q);
				for (k = 0; k < 4; k++)
					len += snprintf(text + len,
							sizeof(text) - len,
							"2 entry seq=%u i=%u id=%u slot=0 split=%u patch=%u write=1 alloc=%u\n",
							q, k, k + 1, 16 * k,
							16 * k + 8, k);
			}
			load(&t, text);
			replay_all(&t, &a);
			lru = &a.r[policy("lru")];
			igt_assert_eq(lru->c.filled, 4 * PG);
			igt_assert_eq(lru->c.to_vram, (f ? 2 : 4) * PG);
			igt_assert_eq(lru->c.from_vram, (f ? 3 : 5) * PG);
			/* one split in each buffer, before D, then before B */
			igt_assert_eq(lru->splits, 2);
			igt_assert_eq(a.min.in_bytes, 5 * PG);
			for (p = 0; p < QGPU_POLICY_COUNT; p++) {
				igt_assert_eq(a.r[p].failed_submits, 0);
				igt_assert(in(&a.r[p]) >= a.min.in_bytes);
			}
			all_free(&a);
			rp_trace_free(&t);
		}
	}

	/*
	 * "The same allocation may be listed more than once": a 2-page
	 * allocation listed at indices 0 and 1, bound in two slots, in 3
	 * pages of VRAM is one allocation to place (2 pages filled, the
	 * submission runs), not two that cannot fit (ENOSPC).
	 */
	igt_subtest("hand-listed-twice") {
		struct rp_config cfg;
		struct rp_trace t;
		struct rp_result r;

		snprintf(text, sizeof(text), "%s%s", header(3 * PG),
			 "1 create id=1 size=8192 mask=0x2 flags=0 pref=0x1\n"
			 "2 submit seq=1 ctx=1 allocs=2 patches=2 dma=64\n"
			 "2 entry seq=1 i=0 id=1 slot=0 split=0 patch=8 write=1 alloc=0\n"
			 "2 entry seq=1 i=1 id=1 slot=1 split=0 patch=24 write=1 alloc=1\n");
		load(&t, text);
		igt_assert(!rp_config_from_trace(&t, &cfg));
		igt_assert(!rp_replay(&t, &cfg, 0, NULL, &r));
		igt_assert_eq(r.failed_submits, 0);
		igt_assert_eq(r.c.filled, 2 * PG);
		rp_result_free(&r);
		rp_trace_free(&t);
	}

	/*
	 * Page tables count in their process's usage (features bit 4): with
	 * a budget of 2 of the 4 pages, process 1 (two page tables and
	 * allocation 1) is over by a page, process 2 (allocation 2) is not.
	 * Room for allocation 3 then trims allocation 1, not the least
	 * recently used allocation 2, and making allocation 1 resident again
	 * pages it in (a page). Without the bit process 1 holds one page and
	 * LRU evicts allocation 2: nothing is paged in.
	 */
	igt_subtest("hand-page-tables-in-budget") {
		unsigned int features[] = { 0, 0x10 };
		unsigned long long want[] = { 0, PG };
		struct rp_config cfg;
		struct rp_trace t;
		struct rp_result r;
		unsigned int i;

		for (i = 0; i < 2; i++) {
			snprintf(text, sizeof(text),
				 "qgpu-trace 1\n"
				 "device vram=16384 visible=16384 gart=1048576 hap=0 page=4096 slots=8 mmu=1 io_coherent=1\n"
				 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=%u budget=50\n"
				 "0 snap-seg seg=1 size=16384 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=1 start=0 size=16384\n"
				 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
				 "0 snap-hole seg=3 start=0 size=1048576\n"
				 "0 snap-end tag=1\n"
				 "1 pt-alloc pt=1 level=2 seg=1 start=0 ret=0 vidmem=1\n"
				 "1 pt-alloc pt=2 level=1 seg=1 start=4096 ret=0 vidmem=1\n"
				 "2 create id=1 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "2 owner id=1 vidmem=1\n"
				 "2 create id=2 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "2 owner id=2 vidmem=2\n"
				 "3 reside id=2 seg=1\n"
				 "3 reside id=1 seg=1\n"
				 "4 create id=3 size=4096 mask=0x2 flags=0 pref=0x1\n"
				 "4 owner id=3 vidmem=2\n"
				 "5 reside id=3 seg=1\n"
				 "6 reside id=1 seg=1\n",
				 features[i]);
			load(&t, text);
			igt_assert(!rp_config_from_trace(&t, &cfg));
			igt_assert(!rp_replay(&t, &cfg, policy("lru"), NULL,
					      &r));
			igt_assert_eq(r.c.evictions, 1 + (i == 1));
			igt_assert_eq(r.c.filled, 3 * PG);
			igt_assert_eq_u64(r.c.to_vram, want[i]);
			rp_result_free(&r);
			rp_trace_free(&t);
		}
	}

	/*
	 * Page tables never leave VRAM: the bound counts them while they
	 * live. Four pages, a page table in one of them, A and B of two
	 * pages: A B A B, the table given back, A B. Beside the table and
	 * one of them the other does not fit (one page left): each of the
	 * first four references pages 2 in (8), A evicted twice and B once
	 * (6 out); with the table gone both fit: A 2 in, B there. 10 pages
	 * in, 6 out. Pooled, or without the tables: both fit all along, 4
	 * pages in. The memory manager (contiguous ranges: the table's page
	 * splits the free space) pages at least that.
	 */
	igt_subtest("hand-page-tables-hold-vram") {
		struct rp_trace t;
		struct all a;
		unsigned int p;

		snprintf(text, sizeof(text),
			 "qgpu-trace 1\n"
			 "device vram=16384 visible=16384 gart=1048576 hap=0 page=4096 slots=8 mmu=1 io_coherent=1\n"
			 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=15 budget=100\n"
			 "0 snap-seg seg=1 size=16384 reserved=0 used=0 allocations=0\n"
			 "0 snap-hole seg=1 start=0 size=16384\n"
			 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
			 "0 snap-hole seg=3 start=0 size=1048576\n"
			 "0 snap-end tag=1\n"
			 "1 pt-alloc pt=1 level=2 seg=1 start=0 ret=0 vidmem=0\n"
			 "2 create id=1 size=8192 mask=0x2 flags=0 pref=0x1\n"
			 "2 create id=2 size=8192 mask=0x2 flags=0 pref=0x1\n"
			 "3 reside id=1 seg=1\n4 reside id=2 seg=1\n"
			 "5 reside id=1 seg=1\n6 reside id=2 seg=1\n"
			 "7 pt-free pt=1\n"
			 "8 reside id=1 seg=1\n9 reside id=2 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			igt_assert_eq(a.r[p].pt_failed, 0);
			igt_assert(in(&a.r[p]) >= a.min.in_bytes);
		}
		igt_assert_eq(a.min.in_bytes, 10 * PG);
		igt_assert_eq(a.min.out_bytes, 6 * PG);
		igt_assert_eq(a.pooled.in_bytes, 4 * PG);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * The paging process's page tables (no owner: vidmem=0) are in the
	 * segment's reservation; the snapshot lists them too, and the bound
	 * counts them once. 5 pages, one reserved for that table: A and B
	 * (2 pages each) fit together, so after the first use of each
	 * nothing is paged again (4 pages in, none out). Counted twice, the
	 * table would leave room for one of them only.
	 */
	igt_subtest("hand-paging-process-tables-counted-once") {
		struct rp_trace t;
		struct all a;
		unsigned int p;

		snprintf(text, sizeof(text),
			 "qgpu-trace 1\n"
			 "device vram=20480 visible=20480 gart=1048576 hap=0 page=4096 slots=8 mmu=1 io_coherent=1\n"
			 "0 snap-begin tag=1 to_vram=0 from_vram=0 vram_to_vram=0 filled=0 evictions=0 tick=0 policy=0 next_id=1 features=15 budget=100\n"
			 "0 snap-seg seg=1 size=20480 reserved=4096 used=4096 allocations=0\n"
			 "0 snap-node seg=1 start=0 size=4096 kind=pt id=1 vidmem=0\n"
			 "0 snap-hole seg=1 start=4096 size=16384\n"
			 "0 snap-seg seg=3 size=1048576 reserved=0 used=0 allocations=0\n"
			 "0 snap-hole seg=3 start=0 size=1048576\n"
			 "0 snap-end tag=1\n"
			 "2 create id=1 size=8192 mask=0x2 flags=0 pref=0x1\n"
			 "2 create id=2 size=8192 mask=0x2 flags=0 pref=0x1\n"
			 "3 reside id=1 seg=1\n4 reside id=2 seg=1\n"
			 "5 reside id=1 seg=1\n6 reside id=2 seg=1\n"
			 "7 reside id=1 seg=1\n8 reside id=2 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		for (p = 0; p < QGPU_POLICY_COUNT; p++) {
			igt_assert_eq(a.r[p].pt_failed, 0);
			igt_assert_eq(in(&a.r[p]), 4 * PG);
		}
		igt_assert_eq(a.min.in_bytes, 4 * PG);
		igt_assert_eq(a.min.out_bytes, 0);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * What is in VRAM at the start costs nothing; a use outside VRAM (an
	 * aperture-only allocation) is not a reference of the bound. The
	 * closing snapshot says the kernel paged nothing and holds the same
	 * books: the check passes.
	 */
	igt_subtest("hand-initial-and-check") {
		struct rp_options opt = { .check = true };
		struct rp_counters k;
		struct rp_config cfg;
		struct rp_result r;
		struct rp_trace t;
		struct all a;
		u32 kpolicy;

		snprintf(text, sizeof(text),
			 "qgpu-trace 1\n"
			 "0 snap-begin tag=1 to_vram=5 from_vram=6 vram_to_vram=7 filled=8 evictions=9 tick=3 policy=0 next_id=3\n"
			 "0 snap-seg seg=1 size=8192 reserved=0 used=4096 allocations=1\n"
			 "0 snap-node seg=1 start=0 size=4096 kind=bo id=1\n"
			 "0 snap-hole seg=1 start=4096 size=4096\n"
			 "0 snap-seg seg=3 size=65536 reserved=0 used=0 allocations=0\n"
			 "0 snap-hole seg=3 start=0 size=65536\n"
			 "0 snap-bo id=1 size=4096 mask=0xa flags=0 pref=0x1 seg=1 start=0 tick=3 state=0 locks=0 attachments=0 priority=0x78000000\n"
			 "0 snap-end tag=1\n"
			 "1 create id=2 size=4096 mask=0x8 flags=0 pref=0\n"
			 "2 reside id=1 seg=1\n"
			 "2 touch id=1 tick=4\n"
			 "3 reside id=2 seg=3\n"
			 "3 move id=2 from=0 to=3 bytes=4096 why=place offset=0 fill=0\n"
			 "3 touch id=2 tick=6\n"
			 "4 snap-begin tag=2 to_vram=5 from_vram=6 vram_to_vram=7 filled=8 evictions=9 tick=6 policy=0 next_id=3\n"
			 "4 snap-seg seg=1 size=8192 reserved=0 used=4096 allocations=1\n"
			 "4 snap-node seg=1 start=0 size=4096 kind=bo id=1\n"
			 "4 snap-hole seg=1 start=4096 size=4096\n"
			 "4 snap-seg seg=3 size=65536 reserved=0 used=4096 allocations=1\n"
			 "4 snap-node seg=3 start=0 size=4096 kind=bo id=2\n"
			 "4 snap-hole seg=3 start=4096 size=61440\n"
			 "4 snap-bo id=1 size=4096 mask=0xa flags=0 pref=0x1 seg=1 start=0 tick=4 state=0 locks=0 attachments=0 priority=0x78000000\n"
			 "4 snap-bo id=2 size=4096 mask=0x8 flags=0 pref=0 seg=3 start=0 tick=6 state=1 locks=0 attachments=0 priority=0x78000000\n"
			 "4 snap-end tag=2\n"
			 "lost 0\n");
		load(&t, text);
		replay_all(&t, &a);
		igt_assert_eq(a.min.refs, 1);
		igt_assert_eq(a.min.in_bytes, 0);
		igt_assert_eq(in(&a.r[0]), 0);
		igt_assert(!rp_trace_kernel_counters(&t, &k, &kpolicy));
		igt_assert_eq(k.to_vram + k.from_vram + k.vram_to_vram +
			      k.filled + k.evictions, 0);
		igt_assert(!rp_config_from_trace(&t, &cfg));
		igt_assert(!rp_replay(&t, &cfg, kpolicy, &opt, &r));
		igt_assert_eq(r.moves, 1);
		igt_assert_eq(r.move_mismatch, 0);
		igt_assert_eq(r.tick_mismatch, 0);
		igt_assert_f(r.state_match, "%s\n", r.state_diff);
		rp_result_free(&r);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Two pages of VRAM, two one-page allocations without CPU access:
	 * A B made resident; a Lock2 of A (which takes an allocation without
	 * CPU access out of VRAM), its unlock, A resident again; an eviction
	 * request for B, B resident again. Every policy pays the same: 2
	 * fills, then A and B back in: 4 pages in, 2 out. MIN ignoring the
	 * requests would keep both (2 pages in); the bound drops each
	 * allocation where every policy had it out of VRAM, so it is 4
	 * pages too, and every policy's ratio 1.
	 */
	igt_subtest("hand-requests-in-bound") {
		struct all a;
		struct rp_trace t;
		unsigned int p;

		snprintf(text, sizeof(text), "%s%s", header(2 * PG),
			 "10 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "10 create id=2 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "11 reside id=1 seg=1\n12 reside id=2 seg=1\n"
			 "13 lock id=1\n14 unlock id=1\n15 reside id=1 seg=1\n"
			 "16 evict-req id=2 system=0\n17 reside id=2 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			igt_assert_eq(in(&a.r[p]), 4 * PG);
		igt_assert_eq(a.min_free.in_bytes, 2 * PG);
		igt_assert_eq(a.min.in_bytes, 4 * PG);
		igt_assert_eq(a.min.out_bytes, 2 * PG);
		igt_assert_eq(a.fnu.in_bytes, 4 * PG);
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * Pages that a request will take out before their next use are as
	 * good as never used again. Two pages, one-page A C made resident,
	 * then B; an eviction request for A; A, C again. MIN evicts A for B
	 * (it leaves anyway), then B for A, and C is still there: 4 pages
	 * in. Ranking A by its next use (after the request) would evict C
	 * for B and page in 5, above lowest-offset, which evicts A (offset
	 * 0) for B and B for A: 4 pages. The bound is never above a policy.
	 */
	igt_subtest("hand-request-frees-early") {
		struct all a;
		struct rp_trace t;
		unsigned int p;

		snprintf(text, sizeof(text), "%s%s", header(2 * PG),
			 "10 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "10 create id=2 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "10 create id=3 size=4096 mask=0xa flags=0 pref=0x1\n"
			 "11 reside id=1 seg=1\n12 reside id=3 seg=1\n"
			 "13 reside id=2 seg=1\n14 evict-req id=1 system=0\n"
			 "15 reside id=1 seg=1\n16 reside id=3 seg=1\n");
		load(&t, text);
		replay_all(&t, &a);
		igt_assert_eq(a.min.in_bytes, 4 * PG);
		igt_assert_eq(in(&a.r[policy("lowest-offset")]), 4 * PG);
		for (p = 0; p < QGPU_POLICY_COUNT; p++)
			igt_assert(a.min.in_bytes <= in(&a.r[p]));
		all_free(&a);
		rp_trace_free(&t);
	}

	/*
	 * A trace is input: values the replay could not hold or that would
	 * wrap its arithmetic, and books that are not books, are refused
	 * with their line (docs/trace-format.md, "Limits"). Line 1 is the
	 * version, 2 the device line, 3 to 8 the snapshot of header(): what
	 * follows it starts at line 9.
	 */
	igt_subtest("hostile-traces-refused") {
		static const struct {
			const char *lines;	/* after header(8192) */
			unsigned int line;
		} bad[] = {
			{ "10 create id=16777216 size=4096 mask=0xa flags=0 pref=0x1\\n", 9 },
			{ "10 create id=1 size=281474976714752 mask=0xa flags=0 pref=0x1\\n", 9 },
			{ "10 create id=1 size=4096 mask=0xa flags=0 pref=0x9\\n", 9 },
			{ "10 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
			  "11 create id=1 size=4096 mask=0xa flags=0 pref=0x1\\n", 10 },
			{ "10 create id=1 size=4096 mask=0xa flags=0 pref=0x1\n"
			  "11 reside id=1 seg=255\\n", 10 },
			{ "10 submit seq=1 ctx=1 allocs=1 patches=4294967295 dma=8\\n", 9 },
			{ "10 submit seq=1 ctx=1 allocs=1 patches=1 dma=8\n"
			  "10 entry seq=1 i=0 id=1 slot=4294967295 split=0 patch=0 write=0 alloc=0\\n", 10 },
			{ "10 policy value=99\\n", 9 },
			{ "10 budget percent=1000\\n", 9 },
			{ "10 pt-alloc pt=1 level=0 seg=1 start=0 ret=0 vidmem=18446744073709551615\\n", 9 },
			{ "10 reside id=abc seg=1\\n", 9 },
			{ "10 reside id= seg=1\\n", 9 },
		};
		unsigned int i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(text, sizeof(text), "%s%s", header(8192),
				 bad[i].lines);
			refused(text, bad[i].line);
		}
		/* the device line */
		refused("qgpu-trace 1\ndevice vram=8192 visible=8192 gart=0 hap=0 page=4096 slots=65536 mmu=0\n", 2);
		/* books: overlapping ranges, a range past its segment, twice */
		refused("qgpu-trace 1\n"
			"0 snap-begin tag=1 policy=0\n"
			"0 snap-seg seg=1 size=8192 reserved=0 used=8192 allocations=2\n"
			"0 snap-node seg=1 start=0 size=8192 kind=bo id=1\n"
			"0 snap-node seg=1 start=4096 size=4096 kind=bo id=2\n", 5);
		refused("qgpu-trace 1\n"
			"0 snap-begin tag=1 policy=0\n"
			"0 snap-seg seg=1 size=8192 reserved=0 used=4096 allocations=1\n"
			"0 snap-node seg=1 start=8192 size=4096 kind=bo id=1\n", 4);
		refused("qgpu-trace 1\n"
			"0 snap-begin tag=1 policy=0\n"
			"0 snap-seg seg=1 size=8192 reserved=0 used=8192 allocations=1\n"
			"0 snap-node seg=1 start=0 size=4096 kind=bo id=1\n"
			"0 snap-node seg=1 start=4096 size=4096 kind=bo id=1\n", 5);
		refused("qgpu-trace 1\n"
			"0 snap-begin tag=1 policy=0\n"
			"0 snap-node seg=1 start=0 size=4096 kind=bo id=1\n", 3);
		/* the paging buffer twice (a node in two lists: a cycle) */
		refused("qgpu-trace 1\n"
			"0 snap-begin tag=1 policy=0\n"
			"0 snap-seg seg=1 size=8192 reserved=8192 used=8192 allocations=0\n"
			"0 snap-node seg=1 start=0 size=4096 kind=pbuf id=0\n"
			"0 snap-node seg=1 start=4096 size=4096 kind=pbuf id=0\n", 5);
	}

	/*
	 * Whatever a trace holds, the replay refuses it or replays it: a
	 * trace of the suite with fields set to extremes, lines dropped,
	 * repeated or cut short, loaded, replayed with every policy and the
	 * bounds, under the unit tests' AddressSanitizer and UBSan (which end
	 * the test on any bad access or overflow). Deterministic.
	 */
	igt_subtest("mutated-traces-never-crash") {
		static const char *const vals[] = { "0", "1", "-1", "2", "3",
			"4095", "4096", "65536", "4294967295", "4294967296",
			"16777215", "281474976710656", "18446744073709551615" };
		char root[PATH_MAX], path[PATH_MAX + 32], *p, *src, **line;
		char out[] = "/tmp/qgpu-replay-mut.XXXXXX";
		unsigned int it, accepted = 0, nl = 0, k;
		u64 x = 0x9e3779b97f4a7c15ull;
		size_t len = 0;
		ssize_t r;
		FILE *f;
		int fd;

		r = readlink("/proc/self/exe", root, sizeof(root) - 1);
		igt_assert(r > 0);
		root[r] = 0;
		for (int up = 0; up < 4 && (p = strrchr(root, '/')); up++)
			*p = 0;
		snprintf(path, sizeof(path), "%s/traces/split.qtr", root);
		f = fopen(path, "r");
		igt_require_f(f, "no %s\n", path);
		src = NULL;
		igt_assert(getdelim(&src, &len, 0, f) > 0);
		fclose(f);
		line = calloc(strlen(src) + 1, sizeof(*line));
		igt_assert(line);
		for (p = strtok(src, "\n"); p; p = strtok(NULL, "\n"))
			line[nl++] = p;
		fd = mkstemp(out);
		igt_assert(fd >= 0);
		close(fd);
		for (it = 0; it < 200; it++) {
			unsigned int cut = nl, dup = ~0u, drop = ~0u, m[4];
			const char *v[4];
			struct rp_config cfg;
			struct rp_trace t;
			char err[512];

			for (k = 0; k < 4; k++) {
				m[k] = 1 + rnd(&x) % (nl - 1);
				v[k] = vals[rnd(&x) % (sizeof(vals) / sizeof(vals[0]))];
			}
			switch (rnd(&x) % 4) {
			case 0:
				cut = 1 + rnd(&x) % nl;
				break;
			case 1:
				dup = rnd(&x) % nl;
				break;
			case 2:
				drop = 1 + rnd(&x) % (nl - 1);
				break;
			}
			f = fopen(out, "w");
			igt_assert(f);
			for (unsigned int l = 0; l < cut; l++) {
				char buf[512], *eq;
				int n = 0;

				if (l == drop)
					continue;
				snprintf(buf, sizeof(buf), "%s", line[l]);
				/* the k-th mutation sets one key=value field */
				for (k = 0; k < 4; k++) {
					if (m[k] != l)
						continue;
					eq = buf;
					for (n = rnd(&x) % 6; n >= 0 && eq; n--)
						eq = strchr(eq + 1, '=');
					if (eq)
						snprintf(eq + 1,
							 sizeof(buf) - (eq + 1 - buf),
							 "%s", v[k]);
				}
				fprintf(f, "%s\n", buf);
				if (l == dup)
					fprintf(f, "%s\n", buf);
			}
			fclose(f);
			if (rp_trace_load(&t, out, err, sizeof(err)))
				continue;
			accepted++;
			if (!rp_config_from_trace(&t, &cfg))
				replay_any(&t, &cfg);
			rp_trace_free(&t);
		}
		unlink(out);
		free(line);
		free(src);
		igt_info("200 mutations: %u accepted and replayed, the rest refused\n",
			 accepted);
		igt_assert(accepted);
	}

	/*
	 * The suite: every trace of traces/ replayed (the record/replay round
	 * trip on the host), the bound below every policy, and twice the
	 * same figures.
	 */
	igt_subtest("suite-round-trip-and-bound") {
		char root[PATH_MAX], dir[PATH_MAX + 16], *p;
		struct dirent *de;
		unsigned int n = 0;
		ssize_t len;
		DIR *d;

		/* build/tests/unit/replay -> the source tree */
		len = readlink("/proc/self/exe", root, sizeof(root) - 1);
		igt_assert(len > 0);
		root[len] = 0;
		for (int up = 0; up < 4 && (p = strrchr(root, '/')); up++)
			*p = 0;
		snprintf(dir, sizeof(dir), "%s/traces", root);
		d = opendir(dir);
		igt_require_f(d, "no %s\n", dir);
		while ((de = readdir(d))) {
			struct rp_options opt = { .check = true };
			char path[PATH_MAX * 2];
			struct rp_counters k;
			struct rp_config cfg;
			struct rp_result r, again;
			struct rp_trace t;
			struct all a;
			char err[256];
			unsigned int q;
			u32 kpolicy;

			len = strlen(de->d_name);
			if (len < 5 || strcmp(de->d_name + len - 4, ".qtr"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			igt_assert_f(!rp_trace_load(&t, path, err, sizeof(err)),
				     "%s\n", err);
			igt_assert_f(!t.lost, "%s: events lost\n", path);
			igt_assert(!rp_config_from_trace(&t, &cfg));
			igt_assert_f(!rp_trace_kernel_counters(&t, &k, &kpolicy),
				     "%s: no closing snapshot\n", path);
			igt_assert(kpolicy < QGPU_POLICY_COUNT);
			igt_assert(!rp_replay(&t, &cfg, kpolicy, &opt, &r));
			igt_assert_f(!memcmp(&k, &r.c, sizeof(k)),
				     "%s: the replay's counters are not the kernel's\n",
				     path);
			igt_assert_f(!r.move_mismatch, "%s: %s\n", path,
				     r.mismatch);
			igt_assert_f(!r.tick_mismatch, "%s: %s\n", path,
				     r.tick_diff);
			igt_assert_f(r.state_match, "%s: %s\n", path,
				     r.state_diff);
			replay_all(&t, &a);
			for (q = 0; q < QGPU_POLICY_COUNT; q++) {
				igt_assert_f(a.min.in_bytes <= in(&a.r[q]),
					     "%s: the bound %llu is above %s's %llu\n",
					     path,
					     (unsigned long long)a.min.in_bytes,
					     qgpu_policy_name(q),
					     (unsigned long long)in(&a.r[q]));
				igt_assert(a.min.in_bytes <= a.fnu.in_bytes);
				rp_replay(&t, &cfg, q, NULL, &again);
				igt_assert_f(!memcmp(&again.c, &a.r[q].c,
						     sizeof(again.c)) &&
					     again.splits == a.r[q].splits,
					     "%s: %s twice, two results\n",
					     path, qgpu_policy_name(q));
				rp_result_free(&again);
			}
			/* the oracle is a schedule too: at or above the bound */
			opt = (struct rp_options){ .oracle = true };
			rp_replay(&t, &cfg, QGPU_POLICY_FUTURE_USE, &opt, &again);
			igt_assert_f(a.min.in_bytes <= in(&again),
				     "%s: the bound is above the oracle's %llu\n",
				     path, (unsigned long long)in(&again));
			rp_result_free(&again);
			igt_info("%s: exact (%llu moves); min %llu bytes, every policy at or above\n",
				 de->d_name, (unsigned long long)r.moves,
				 (unsigned long long)a.min.in_bytes);
			rp_result_free(&r);
			all_free(&a);
			rp_trace_free(&t);
			n++;
		}
		closedir(d);
		igt_assert_f(n, "no traces in %s\n", dir);
	}
}
