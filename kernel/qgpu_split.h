/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: DMA-buffer split planning helpers. Plain C with no kernel headers
 * so that the same file builds into host unit tests.
 */
#ifndef QGPU_SPLIT_H
#define QGPU_SPLIT_H

/**
 * struct qgpu_split_entry - a patch-location entry as the planner sees it
 * @alloc: allocation index, or -1 for a NULL allocation
 * @slot: slot id
 * @split_offset: offset where the allocation is first needed
 */
struct qgpu_split_entry {
	int alloc;
	unsigned int slot;
	unsigned int split_offset;
};

/**
 * struct qgpu_split_alloc - an allocation as the planner sees it
 * @size: bytes
 * @mask: supported segment set (bit per segment id)
 */
struct qgpu_split_alloc {
	unsigned long long size;
	unsigned int mask;
};

int qgpu_split_check(const struct qgpu_split_entry *e, unsigned int n,
		     const struct qgpu_split_alloc *a, unsigned int nalloc,
		     const unsigned long long *seg_cap, unsigned int nseg,
		     int *table, unsigned int nslots, unsigned int *refs);

#endif /* QGPU_SPLIT_H */
