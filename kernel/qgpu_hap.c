// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the CPU host aperture. BAR4 is a window of pages that the device
 * maps onto arbitrary VRAM pages; the driver manages it as a page
 * allocator so that allocations in non-CPU-visible VRAM can be mapped.
 * Called with mm_lock held.
 */
#include <drm/drm_vma_manager.h>

#include "qgpu_drv.h"
#include "qgpu_mm.h"

void qgpu_hap_init(struct qgpu_device *qdev)
{
	drm_mm_init(&qdev->hap_mm, 0, qdev->hap_size >> PAGE_SHIFT);
	INIT_LIST_HEAD(&qdev->hap_lru);
}

void qgpu_hap_fini(struct qgpu_device *qdev)
{
	struct drm_mm_node *node, *next;

	while (!list_empty(&qdev->hap_lru))
		list_del_init(qdev->hap_lru.next);
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

/**
 * qgpu_hap_map - map a VRAM-resident allocation through the host aperture
 * @bo: allocation resident in a VRAM segment
 *
 * Aperture pages are a cache of CPU mappings: when there is no room, the
 * least recently faulted allocations give theirs back (their CPU mappings
 * are zapped and fault again later), so pages are never held by mappings
 * nobody uses.
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
	int ret;

	lockdep_assert_held(&qdev->mm_lock);
	if (drm_mm_node_allocated(&bo->hap)) {
		list_move_tail(&bo->hap_link, &qdev->hap_lru);
		return 0;
	}
	if (!qdev->hap_size || bo->npages > qdev->hap_size >> PAGE_SHIFT)
		return -ENOSPC;
	while ((ret = drm_mm_insert_node(&qdev->hap_mm, &bo->hap, bo->npages))) {
		if (list_empty(&qdev->hap_lru))
			return -ENOSPC;
		victim = list_first_entry(&qdev->hap_lru, struct qgpu_bo,
					  hap_link);
		qgpu_hap_reclaim(victim);
	}
	vram_page = qgpu_bo_gpu_addr(bo) >> QGPU_PAGE_SHIFT;
	qgpu_wr(qdev, QGPU_REG_HAP_INDEX, bo->hap.start);
	qgpu_wr(qdev, QGPU_REG_HAP_COUNT, bo->npages);
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_LO, lower_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_HI, upper_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
	list_add_tail(&bo->hap_link, &qdev->hap_lru);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(hap_maps)]);
	return 0;
}

void qgpu_hap_unmap(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (!drm_mm_node_allocated(&bo->hap))
		return;
	qgpu_wr(qdev, QGPU_REG_HAP_INDEX, bo->hap.start);
	qgpu_wr(qdev, QGPU_REG_HAP_COUNT, bo->npages);
	qgpu_wr(qdev, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_UNMAP);
	drm_mm_remove_node(&bo->hap);
	list_del_init(&bo->hap_link);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(hap_unmaps)]);
}
