// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: feasibility of a DMA buffer's resource tables ("Splitting a DMA
 * Buffer").
 *
 * Splitting can always make progress unless, at some split point, the
 * allocations the resource table requires at once cannot fit even with
 * everything else evicted. That is checked here before anything runs, so
 * that such a submit fails with ENOSPC and nothing changed.
 */
#include "qgpu_split.h"

#define QGPU_SPLIT_MAX_SEGS	4

/*
 * Hall's condition over the segments, kept up to date as the table
 * changes: need[S] is the size of the distinct allocations in the table
 * that can live only inside the set of segments S. The table fits at once
 * (fragmentation aside) iff need[S] <= cap(S) for every S and each
 * allocation fits one segment it supports. Each table change costs
 * O(2^nseg), so the whole check is linear in the number of entries.
 */
struct qgpu_split_state {
	const struct qgpu_split_alloc *a;
	unsigned int nseg;
	unsigned int *refs;
	unsigned int misfits;
	unsigned long long need[1u << QGPU_SPLIT_MAX_SEGS];
	unsigned long long cap[1u << QGPU_SPLIT_MAX_SEGS];
};

static int qgpu_split_misfit(const struct qgpu_split_state *st,
			     const unsigned long long *seg_cap, int al)
{
	unsigned long long best = 0;
	unsigned int i;

	for (i = 0; i < st->nseg; i++)
		if (st->a[al].mask & (1u << i) && seg_cap[i] > best)
			best = seg_cap[i];
	return st->a[al].size > best;
}

static void qgpu_split_account(struct qgpu_split_state *st,
			       const unsigned long long *seg_cap, int al,
			       int add)
{
	unsigned int all = (1u << st->nseg) - 1;
	unsigned int mask = st->a[al].mask & all, set;

	if (add ? st->refs[al]++ : --st->refs[al])
		return;
	if (qgpu_split_misfit(st, seg_cap, al))
		st->misfits += add ? 1 : -1;
	/* every superset of the allocation's segment set */
	for (set = mask; set <= all; set = (set + 1) | mask) {
		if (add)
			st->need[set] += st->a[al].size;
		else
			st->need[set] -= st->a[al].size;
		if (set == all)
			break;
	}
}

static int qgpu_split_fits(const struct qgpu_split_state *st)
{
	unsigned int set;

	if (st->misfits)
		return 0;
	for (set = 1; set < (1u << st->nseg); set++)
		if (st->need[set] > st->cap[set])
			return 0;
	return 1;
}

/**
 * qgpu_split_check - find the first split point whose resource table
 *	cannot fit
 * @e: patch-location entries in order (split offsets non-decreasing)
 * @n: number of entries
 * @a: allocations
 * @nalloc: number of allocations
 * @seg_cap: usable bytes per segment id (index = id)
 * @nseg: number of entries in @seg_cap, at most 4
 * @table: scratch resource table of @nslots ints
 * @nslots: number of slots
 * @refs: scratch of @nalloc unsigned ints
 *
 * Return: -1 when every split point fits, else the index of the last
 * entry of the first split point that does not.
 */
int qgpu_split_check(const struct qgpu_split_entry *e, unsigned int n,
		     const struct qgpu_split_alloc *a, unsigned int nalloc,
		     const unsigned long long *seg_cap, unsigned int nseg,
		     int *table, unsigned int nslots, unsigned int *refs)
{
	struct qgpu_split_state state = { 0 }, *st = &state;
	unsigned int i, s, set;

	if (nseg > QGPU_SPLIT_MAX_SEGS)
		return 0;
	st->a = a;
	st->nseg = nseg;
	st->refs = refs;
	for (set = 1; set < (1u << nseg); set++)
		for (i = 0; i < nseg; i++)
			if (set & (1u << i))
				st->cap[set] += seg_cap[i];
	for (i = 0; i < nalloc; i++)
		refs[i] = 0;
	for (s = 0; s < nslots; s++)
		table[s] = -1;
	for (i = 0; i < n; i++) {
		if (e[i].slot >= nslots || e[i].alloc >= (int)nalloc)
			return (int)i;
		if (table[e[i].slot] >= 0)
			qgpu_split_account(st, seg_cap, table[e[i].slot], 0);
		table[e[i].slot] = e[i].alloc;
		if (e[i].alloc >= 0)
			qgpu_split_account(st, seg_cap, e[i].alloc, 1);
		/* evaluate once all entries of this split point are applied */
		if (i + 1 < n && e[i + 1].split_offset == e[i].split_offset)
			continue;
		if (!qgpu_split_fits(st))
			return (int)i;
	}
	return -1;
}
