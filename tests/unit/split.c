// SPDX-License-Identifier: MIT
/*
 * Host unit tests for kernel/qgpu_split.c: qgpu_split_check(), the
 * "Splitting a DMA Buffer" feasibility check of a DMA buffer's resource tables.
 *
 * unit-sources: kernel/qgpu_split.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "igt.h"
#include "qgpu_split.h"

#define NSEG	4	/* index = segment id; 0 (system) has no capacity */
#define SEG_VIS	1
#define SEG_LOC	2
#define SEG_APT	3
#define B(id)	(1u << (id))
#define MB	(1ull << 20)

static unsigned long long cap[NSEG] = { 0, 32 * MB, 64 * MB, 128 * MB };

static int check(const struct qgpu_split_entry *e, unsigned int n,
		 const struct qgpu_split_alloc *a, unsigned int na,
		 unsigned int nslots)
{
	int table[64];
	unsigned int i;
	int r;

	igt_assert(nslots <= 64);
	for (i = 0; i < 64; i++)
		table[i] = 12345;
	static unsigned int refs[4096];

	igt_assert(na <= 4096);
	r = qgpu_split_check(e, n, a, na, cap, NSEG, table, nslots, refs);
	/* the scratch table is the only thing written, within nslots */
	for (i = nslots; i < 64; i++)
		igt_assert_eq(table[i], 12345);
	return r;
}

/* ------------------------------------------------------------------------ */
/*
 * A reference model for random testing: the necessary condition for a
 * resource table to fit at once (ignoring fragmentation). Each allocation
 * must fit one segment it supports, and for every set S of segments the
 * allocations that can only live inside S must fit S's capacity (Hall's
 * condition). A table that breaks it can never be made resident, so the
 * kernel must report it (it may be stricter, never more lenient).
 */
static int ref_fits(const int *table, unsigned int nslots,
		    const struct qgpu_split_alloc *a)
{
	unsigned int s, i, j, set;

	for (s = 0; s < nslots; s++) {
		unsigned long long best = 0;

		if (table[s] < 0)
			continue;
		for (i = 0; i < NSEG; i++)
			if (a[table[s]].mask & B(i) && cap[i] > best)
				best = cap[i];
		if (a[table[s]].size > best)
			return 0;
	}
	for (set = 1; set < (1u << NSEG); set++) {
		unsigned long long need = 0, have = 0;

		for (i = 0; i < NSEG; i++)
			if (set & B(i))
				have += cap[i];
		for (s = 0; s < nslots; s++) {
			int dup = 0;

			if (table[s] < 0 || (a[table[s]].mask & ~set))
				continue;
			for (j = 0; j < s; j++)
				if (table[j] == table[s])
					dup = 1;
			if (!dup)
				need += a[table[s]].size;
		}
		if (need > have)
			return 0;
	}
	return 1;
}

static int ref_check(const struct qgpu_split_entry *e, unsigned int n,
		     const struct qgpu_split_alloc *a, unsigned int nslots)
{
	int table[64];
	unsigned int i, s;

	for (s = 0; s < nslots; s++)
		table[s] = -1;
	for (i = 0; i < n; i++) {
		table[e[i].slot] = e[i].alloc;
		if (i + 1 < n && e[i + 1].split_offset == e[i].split_offset)
			continue;
		if (!ref_fits(table, nslots, a))
			return (int)i;
	}
	return -1;
}

/*
 * An independent reference: exhaustive search for an assignment of the
 * table's distinct allocations to segments they support within capacity
 * (fragmentation aside). Unlike Hall's condition this is exact, so the
 * check must accept every table it can place, and every table the check
 * refuses must be impossible to place.
 */
static int exact_place(const int *ids, unsigned int n, unsigned int k,
		       const struct qgpu_split_alloc *a,
		       unsigned long long *left)
{
	unsigned int i;

	if (k == n)
		return 1;
	for (i = 1; i < NSEG; i++) {
		if (!(a[ids[k]].mask & B(i)) || a[ids[k]].size > left[i])
			continue;
		left[i] -= a[ids[k]].size;
		if (exact_place(ids, n, k + 1, a, left))
			return 1;
		left[i] += a[ids[k]].size;
	}
	return 0;
}

static int exact_fits(const int *table, unsigned int nslots,
		      const struct qgpu_split_alloc *a)
{
	unsigned long long left[NSEG];
	int ids[64];
	unsigned int s, j, n = 0;

	memcpy(left, cap, sizeof(left));
	for (s = 0; s < nslots; s++) {
		int dup = 0;

		if (table[s] < 0)
			continue;
		for (j = 0; j < n; j++)
			dup |= ids[j] == table[s];
		if (!dup)
			ids[n++] = table[s];
	}
	return exact_place(ids, n, 0, a, left);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

igt_main
{
	igt_subtest("empty") {
		struct qgpu_split_alloc a[1] = { { 4096, B(SEG_VIS) } };

		igt_assert_eq(check(NULL, 0, a, 1, 8), -1);
		igt_assert_eq(check(NULL, 0, NULL, 0, 8), -1);
	}

	igt_subtest("single-fits") {
		struct qgpu_split_alloc a[] = { { 32 * MB, B(SEG_VIS) } };
		struct qgpu_split_entry e[] = { { 0, 0, 0 } };

		igt_assert_eq(check(e, 1, a, 1, 8), -1);
	}

	igt_subtest("single-too-big-for-its-segments") {
		/* fits LOCAL (64M) but supports only VISIBLE (32M) */
		struct qgpu_split_alloc a[] = { { 33 * MB, B(SEG_VIS) } };
		struct qgpu_split_entry e[] = { { 0, 0, 0 } };

		igt_assert_eq(check(e, 1, a, 1, 8), 0);
	}

	igt_subtest("single-fits-largest-supported") {
		struct qgpu_split_alloc a[] = {
			{ 100 * MB, B(SEG_VIS) | B(SEG_APT) },
		};
		struct qgpu_split_entry e[] = { { 0, 3, 0 } };

		igt_assert_eq(check(e, 1, a, 1, 8), -1);
	}

	igt_subtest("no-capacity-anywhere") {
		/* supported set names only segment 0 (system): no capacity */
		struct qgpu_split_alloc a[] = { { 4096, B(0) } };
		struct qgpu_split_entry e[] = { { 0, 0, 0 } };

		igt_assert_eq(check(e, 1, a, 1, 8), 0);
	}

	igt_subtest("together-too-big") {
		/* two 20M VISIBLE-only allocations bound at once: 40M > 32M */
		struct qgpu_split_alloc a[] = {
			{ 20 * MB, B(SEG_VIS) }, { 20 * MB, B(SEG_VIS) },
		};
		struct qgpu_split_entry e[] = { { 0, 0, 0 }, { 1, 1, 24 } };

		igt_assert_eq(check(e, 2, a, 2, 8), 1);
	}

	igt_subtest("together-fit-union-of-segments") {
		/* 20M VIS|LOC + 60M LOC: 80M <= 96M of VIS+LOC */
		struct qgpu_split_alloc a[] = {
			{ 20 * MB, B(SEG_VIS) | B(SEG_LOC) },
			{ 60 * MB, B(SEG_LOC) },
		};
		struct qgpu_split_entry e[] = { { 0, 0, 0 }, { 1, 1, 24 } };

		igt_assert_eq(check(e, 2, a, 2, 8), -1);
	}

	igt_subtest("first-failing-split-point-reported") {
		struct qgpu_split_alloc a[] = {
			{ 16 * MB, B(SEG_VIS) }, { 16 * MB, B(SEG_VIS) },
			{ 16 * MB, B(SEG_VIS) }, { 16 * MB, B(SEG_VIS) },
		};
		/* slots 0,1 fit (32M); adding slot 2 (48M) does not */
		struct qgpu_split_entry e[] = {
			{ 0, 0, 0 }, { 1, 1, 24 }, { 2, 2, 48 }, { 3, 3, 72 },
		};

		igt_assert_eq(check(e, 4, a, 4, 8), 2);
	}

	igt_subtest("slot-replacement-frees-previous") {
		/* "Splitting a DMA Buffer": a new entry for the same slot replaces the old */
		struct qgpu_split_alloc a[] = {
			{ 30 * MB, B(SEG_VIS) }, { 30 * MB, B(SEG_VIS) },
			{ 30 * MB, B(SEG_VIS) },
		};
		struct qgpu_split_entry e[] = {
			{ 0, 0, 0 }, { 1, 0, 24 }, { 2, 0, 48 },
		};

		igt_assert_eq(check(e, 3, a, 3, 8), -1);
	}

	igt_subtest("null-allocation-unbinds") {
		struct qgpu_split_alloc a[] = {
			{ 20 * MB, B(SEG_VIS) }, { 20 * MB, B(SEG_VIS) },
		};
		struct qgpu_split_entry bad[] = { { 0, 0, 0 }, { 1, 1, 24 } };
		struct qgpu_split_entry good[] = {
			{ 0, 0, 0 }, { -1, 0, 24 }, { 1, 1, 48 },
		};

		igt_assert_eq(check(bad, 2, a, 2, 8), 1);
		igt_assert_eq(check(good, 3, a, 2, 8), -1);
	}

	igt_subtest("split-point-evaluated-after-all-its-entries") {
		/*
		 * Entries sharing a split offset are one reprogramming: slot 0
		 * gets A then B at offset 0 (only B is required), then slot 1
		 * gets A at the same offset: A + B = 40M > 32M, reported at the
		 * last entry of the split point.
		 */
		struct qgpu_split_alloc a[] = {
			{ 20 * MB, B(SEG_VIS) }, { 20 * MB, B(SEG_VIS) },
		};
		struct qgpu_split_entry one[] = { { 0, 0, 0 }, { 1, 0, 0 } };
		struct qgpu_split_entry two[] = {
			{ 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 },
		};
		/* the transient state (A and B in slot 0 and 1) at one split
		 * point, repaired by an unbind at the same split point */
		struct qgpu_split_entry three[] = {
			{ 0, 0, 0 }, { 1, 1, 0 }, { -1, 0, 0 },
		};

		igt_assert_eq(check(one, 2, a, 2, 8), -1);
		igt_assert_eq(check(two, 3, a, 2, 8), 2);
		igt_assert_eq(check(three, 3, a, 2, 8), -1);
	}

	igt_subtest("same-allocation-in-two-slots-counted-once") {
		struct qgpu_split_alloc a[] = { { 20 * MB, B(SEG_VIS) } };
		struct qgpu_split_entry e[] = {
			{ 0, 0, 0 }, { 0, 1, 24 }, { 0, 2, 48 },
		};

		igt_assert_eq(check(e, 3, a, 1, 8), -1);
	}

	igt_subtest("aperture-capacity-counts") {
		/* VIS|APT allocations: 60+60+40 = 160M fits 32M + 128M; 180M does not */
		struct qgpu_split_alloc a[] = {
			{ 60 * MB, B(SEG_VIS) | B(SEG_APT) },
			{ 60 * MB, B(SEG_VIS) | B(SEG_APT) },
			{ 40 * MB, B(SEG_VIS) | B(SEG_APT) },
			{ 60 * MB, B(SEG_VIS) | B(SEG_APT) },
		};
		struct qgpu_split_entry ok[] = {
			{ 0, 0, 0 }, { 1, 1, 24 }, { 2, 2, 48 },
		};
		struct qgpu_split_entry bad[] = {
			{ 0, 0, 0 }, { 1, 1, 24 }, { 3, 2, 48 },
		};

		igt_assert_eq(check(ok, 3, a, 4, 8), -1);
		igt_assert_eq(check(bad, 3, a, 4, 8), 2);
	}

	igt_subtest("other-segments-do-not-pool") {
		/*
		 * Two 20M VISIBLE-only allocations cannot be in VRAM together
		 * (32M). A small aperture allocation bound beside them does
		 * not change that: the aperture's 128M is of no use to them.
		 */
		struct qgpu_split_alloc a[] = {
			{ 20 * MB, B(SEG_VIS) }, { 20 * MB, B(SEG_VIS) },
			{ 4096, B(SEG_APT) },
		};
		struct qgpu_split_entry without[] = {
			{ 0, 0, 0 }, { 1, 1, 24 },
		};
		struct qgpu_split_entry with[] = {
			{ 2, 2, 0 }, { 0, 0, 24 }, { 1, 1, 48 },
		};

		igt_assert_eq(check(without, 2, a, 3, 8), 1);
		igt_assert_eq(check(with, 3, a, 3, 8), 2);
	}

	igt_subtest("bad-slot-or-alloc-index") {
		struct qgpu_split_alloc a[] = { { 4096, B(SEG_VIS) } };
		struct qgpu_split_entry slot[] = { { 0, 0, 0 }, { 0, 8, 24 } };
		struct qgpu_split_entry idx[] = { { 0, 0, 0 }, { 1, 1, 24 } };

		igt_assert_eq(check(slot, 2, a, 1, 8), 1);
		igt_assert_eq(check(idx, 2, a, 1, 8), 1);
	}

	igt_subtest("exact-fit") {
		struct qgpu_split_alloc a[] = {
			{ 16 * MB, B(SEG_VIS) }, { 16 * MB, B(SEG_VIS) },
		};
		struct qgpu_split_entry e[] = { { 0, 0, 0 }, { 1, 1, 0 } };

		igt_assert_eq(check(e, 2, a, 2, 8), -1);
	}

	igt_subtest("random-against-exact-placement") {
		struct qgpu_split_alloc a[8];
		struct qgpu_split_entry e[32];
		unsigned int t, i, n, nslots, accepted = 0, refused = 0;

		for (t = 0; t < 3000; t++) {
			unsigned int off = 0;
			int table[64], got, s;

			nslots = 1 + rnd() % 8;
			for (i = 0; i < 8; i++) {
				a[i].size = (1 + rnd() % 96) * MB / 2;
				a[i].mask = (rnd() % 7 + 1) << 1;
			}
			n = rnd() % 32;
			for (i = 0; i < n; i++) {
				e[i].alloc = rnd() % 5 ? (int)(rnd() % 8) : -1;
				e[i].slot = rnd() % nslots;
				if (rnd() % 3)
					off += 4 * (1 + rnd() % 8);
				e[i].split_offset = off;
			}
			got = check(e, n, a, 8, nslots);
			for (s = 0; s < 64; s++)
				table[s] = -1;
			for (i = 0; i < n; i++) {
				table[e[i].slot] = e[i].alloc;
				if (i + 1 < n &&
				    e[i + 1].split_offset == e[i].split_offset)
					continue;
				if ((int)i == got) {
					igt_assert_f(!exact_fits(table, nslots, a),
						     "case %u: refused at entry %u, but the table can be placed\n",
						     t, i);
					refused++;
					break;
				}
				if (got < 0 || (int)i < got)
					accepted += exact_fits(table, nslots, a);
			}
		}
		/* both outcomes were exercised */
		igt_assert(accepted > 100 && refused > 100);
	}

	igt_subtest("random-against-reference") {
		struct qgpu_split_alloc a[16];
		struct qgpu_split_entry e[64];
		unsigned int t, i, n, nslots;

		for (t = 0; t < 5000; t++) {
			unsigned int off = 0;
			bool single = t % 4 == 0;

			nslots = 1 + rnd() % 16;
			for (i = 0; i < 16; i++) {
				a[i].size = (1 + rnd() % 80) * MB / 2;
				a[i].mask = (rnd() % 15 + 1) << 0 & 0xe;
				if (!a[i].mask || single)
					a[i].mask = B(SEG_VIS);
			}
			n = rnd() % 64;
			for (i = 0; i < n; i++) {
				e[i].alloc = rnd() % 5 ? (int)(rnd() % 16) : -1;
				e[i].slot = rnd() % nslots;
				if (rnd() % 3)
					off += 4 * (1 + rnd() % 8);
				e[i].split_offset = off;
			}
			int got = check(e, n, a, 16, nslots);
			int want = ref_check(e, n, a, nslots);

			/* never more lenient than the necessary condition */
			if (want >= 0)
				igt_assert_f(got >= 0 && got <= want,
					     "case %u: the table at entry %d cannot fit, qgpu_split_check returned %d\n",
					     t, want, got);
			/* one segment for all: the condition is exact */
			if (single)
				igt_assert_eq(got, want);
		}
	}
}
