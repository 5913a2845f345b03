// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the CPU host aperture. BAR4 is a window of pages that the device
 * maps onto arbitrary VRAM pages; the driver manages it as a page
 * allocator so that allocations in non-CPU-visible VRAM can be mapped.
 * Called with mm_lock held.
 */
#include <linux/slab.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_device.h"
#include "qgpu_hw.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"

void qgpu_hap_init(struct qgpu_device *qdev)
{
	drm_mm_init(&qdev->hap_mm, 0, qdev->hap_size >> PAGE_SHIFT);
	INIT_LIST_HEAD(&qdev->hap_lru);
}

static void qgpu_hap_free_runs(struct qgpu_bo *bo);

void qgpu_hap_fini(struct qgpu_device *qdev)
{
	struct drm_mm_node *node, *next;

	struct qgpu_bo *bo, *tmp;

	/* allocations still open lose their aperture pages with the device */
	list_for_each_entry_safe(bo, tmp, &qdev->hap_lru, hap_link) {
		qgpu_hap_free_runs(bo);
		list_del_init(&bo->hap_link);
	}
	drm_mm_for_each_node_safe(node, next, &qdev->hap_mm)
		drm_mm_remove_node(node);
	drm_mm_takedown(&qdev->hap_mm);
}

/* Stop the CPU mappings of @bo that go through its aperture pages. */
static void qgpu_hap_reclaim(struct qgpu_bo *bo)
{
	drm_vma_node_unmap(&bo->base.vma_node,
			   bo->base.dev->anon_inode->i_mapping);
	qgpu_hap_unmap(bo);
}

static void qgpu_hap_free_runs(struct qgpu_bo *bo)
{
	u32 i;

	for (i = 0; i < bo->hap_nruns; i++)
		drm_mm_remove_node(&bo->hap_runs[i].node);
	bo->hap_nruns = 0;
}

/*
 * Take aperture pages for all of @bo, in at most QGPU_HAP_RUNS runs, the
 * largest free ranges first: an allocation needs no contiguous run.
 */
static int qgpu_hap_take(struct qgpu_device *qdev, struct qgpu_bo *bo)
{
	struct drm_mm_node *hole;
	u64 hs, he, best_s, best_n;
	u32 got = 0;
	int ret;

	if (!drm_mm_insert_node(&qdev->hap_mm, &bo->hap_runs[0].node,
				bo->npages)) {
		bo->hap_runs[0].first = 0;
		bo->hap_nruns = 1;
		return 0;
	}
	while (got < bo->npages && bo->hap_nruns < QGPU_HAP_RUNS) {
		struct qgpu_hap_run *run = &bo->hap_runs[bo->hap_nruns];

		best_n = 0;
		drm_mm_for_each_hole(hole, &qdev->hap_mm, hs, he) {
			if (he - hs > best_n) {
				best_s = hs;
				best_n = he - hs;
			}
		}
		if (!best_n)
			break;
		best_n = min_t(u64, best_n, bo->npages - got);
		memset(&run->node, 0, sizeof(run->node));
		run->node.start = best_s;
		run->node.size = best_n;
		ret = drm_mm_reserve_node(&qdev->hap_mm, &run->node);
		if (ret)
			break;
		run->first = got;
		got += best_n;
		bo->hap_nruns++;
	}
	if (got == bo->npages)
		return 0;
	qgpu_hap_free_runs(bo);
	return -ENOSPC;
}

/**
 * qgpu_hap_map - map a VRAM-resident allocation through the host aperture
 * @bo: allocation resident in a VRAM segment
 *
 * Aperture pages are a cache of CPU mappings: when there is no room, the
 * least recently faulted allocations give theirs back (their CPU mappings
 * are zapped and fault again later), so pages are never held by mappings
 * nobody uses. The pages of one allocation need not be contiguous.
 *
 * Return: 0, or -ENOSPC when @bo cannot fit the aperture even then (the
 * caller falls back to evicting it to system memory, as "Mapping Virtual
 * Addresses to a Memory Segment" says).
 */
int qgpu_hap_map(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct qgpu_bo *victim;
	u64 vram_page;
	u32 i;

	lockdep_assert_held(&qdev->mm_lock);
	if (bo->hap_nruns) {
		list_move_tail(&bo->hap_link, &qdev->hap_lru);
		return 0;
	}
	if (!qdev->hap_size || bo->npages > qdev->hap_size >> PAGE_SHIFT)
		return -ENOSPC;
	if (!bo->hap_runs) {
		bo->hap_runs = kvcalloc(QGPU_HAP_RUNS, sizeof(*bo->hap_runs),
					GFP_KERNEL);
		if (!bo->hap_runs)
			return -ENOMEM;
	}
	while (qgpu_hap_take(qdev, bo)) {
		if (list_empty(&qdev->hap_lru))
			return -ENOSPC;
		victim = list_first_entry(&qdev->hap_lru, struct qgpu_bo,
					  hap_link);
		qgpu_hap_reclaim(victim);
	}
	vram_page = qgpu_bo_gpu_addr(bo) >> QGPU_PAGE_SHIFT;
	for (i = 0; i < bo->hap_nruns; i++) {
		struct qgpu_hap_run *run = &bo->hap_runs[i];

		qgpu_hw_hap_map(qdev, run->node.start, run->node.size,
				vram_page + run->first);
	}
	list_add_tail(&bo->hap_link, &qdev->hap_lru);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(hap_maps)]);
	return 0;
}

/**
 * qgpu_hap_page - the aperture page that maps page @pg of @bo
 * @bo: allocation mapped through the host aperture
 * @pg: page index in @bo
 *
 * Return: the aperture page index.
 */
u64 qgpu_hap_page(struct qgpu_bo *bo, u32 pg)
{
	u32 i = bo->hap_nruns;

	while (i-- > 1 && bo->hap_runs[i].first > pg)
		;
	return bo->hap_runs[i].node.start + pg - bo->hap_runs[i].first;
}

void qgpu_hap_unmap(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	u32 i;

	lockdep_assert_held(&qdev->mm_lock);
	if (!bo->hap_nruns)
		return;
	for (i = 0; i < bo->hap_nruns; i++)
		qgpu_hw_hap_unmap(qdev, bo->hap_runs[i].node.start,
				  bo->hap_runs[i].node.size);
	qgpu_hap_free_runs(bo);
	list_del_init(&bo->hap_link);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(hap_unmaps)]);
}
