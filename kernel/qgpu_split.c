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
 * Can the allocations in @table fit at once? Hall's condition over the
 * segments: for every set S of segments, the allocations that can live only
 * inside S must fit the capacity of S (and each must fit one segment).
 */
static int qgpu_split_fits(const int *table, unsigned int nslots,
			   const struct qgpu_split_alloc *a,
			   const unsigned long long *seg_cap, unsigned int nseg)
{
	unsigned int set, s, i;

	for (s = 0; s < nslots; s++) {
		unsigned long long best = 0;

		if (table[s] < 0)
			continue;
		for (i = 0; i < nseg; i++)
			if (a[table[s]].mask & (1u << i) && seg_cap[i] > best)
				best = seg_cap[i];
		if (a[table[s]].size > best)
			return 0;
	}
	for (set = 1; set < (1u << nseg); set++) {
		unsigned long long need = 0, cap = 0;

		for (i = 0; i < nseg; i++)
			if (set & (1u << i))
				cap += seg_cap[i];
		for (s = 0; s < nslots; s++) {
			int dup = 0;

			if (table[s] < 0 || a[table[s]].mask & ~set)
				continue;
			for (i = 0; i < s; i++)
				if (table[i] == table[s])
					dup = 1;
			if (!dup)
				need += a[table[s]].size;
		}
		if (need > cap)
			return 0;
	}
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
