// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: feasibility of a DMA buffer's resource tables (seed 000).
 *
 * Splitting can always make progress unless, at some split point, the
 * allocations the resource table requires at once cannot fit even with
 * everything else evicted. That is checked here before anything runs, so
 * that such a submit fails with ENOSPC and nothing changed.
 */
#include "qgpu_split.h"

/*
 * Can the allocations in @table fit at once? Each must fit a supported
 * segment on its own, and together they must fit the union of the
 * segments they support.
 */
static int qgpu_split_fits(const int *table, unsigned int nslots,
			   const struct qgpu_split_alloc *a,
			   const unsigned long long *seg_cap, unsigned int nseg)
{
	unsigned long long total = 0, cap = 0;
	unsigned int mask = 0, s, i;

	for (s = 0; s < nslots; s++) {
		unsigned long long best = 0;
		int dup = 0;

		if (table[s] < 0)
			continue;
		for (i = 0; i < s; i++)
			if (table[i] == table[s])
				dup = 1;
		if (dup)
			continue;
		for (i = 0; i < nseg; i++)
			if (a[table[s]].mask & (1u << i) && seg_cap[i] > best)
				best = seg_cap[i];
		if (a[table[s]].size > best)
			return 0;
		total += a[table[s]].size;
		mask |= a[table[s]].mask;
	}
	for (i = 0; i < nseg; i++)
		if (mask & (1u << i))
			cap += seg_cap[i];
	return total <= cap;
}

/**
 * qgpu_split_check - find the first split point whose resource table
 *	cannot fit
 * @e: patch-location entries in order (split offsets non-decreasing)
 * @n: number of entries
 * @a: allocations
 * @nalloc: number of allocations
 * @seg_cap: usable bytes per segment id (index = id)
 * @nseg: number of entries in @seg_cap
 * @table: scratch resource table of @nslots ints
 * @nslots: number of slots
 *
 * Return: -1 when every split point fits, else the index of the last
 * entry of the first split point that does not.
 */
int qgpu_split_check(const struct qgpu_split_entry *e, unsigned int n,
		     const struct qgpu_split_alloc *a, unsigned int nalloc,
		     const unsigned long long *seg_cap, unsigned int nseg,
		     int *table, unsigned int nslots)
{
	unsigned int i, s;

	for (s = 0; s < nslots; s++)
		table[s] = -1;
	for (i = 0; i < n; i++) {
		if (e[i].slot >= nslots || e[i].alloc >= (int)nalloc)
			return (int)i;
		table[e[i].slot] = e[i].alloc;
		/* evaluate once all entries of this split point are applied */
		if (i + 1 < n && e[i + 1].split_offset == e[i].split_offset)
			continue;
		if (!qgpu_split_fits(table, nslots, a, seg_cap, nseg))
			return (int)i;
	}
	return -1;
}
