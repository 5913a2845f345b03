// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the CPU host aperture. BAR4 is a window of pages that the device
 * maps onto arbitrary VRAM pages; the driver manages it as a page
 * allocator so that allocations in non-CPU-visible VRAM can be mapped.
 * Called with mm_lock held.
 */
#include "qgpu_drv.h"
#include "qgpu_mm.h"

void qgpu_hap_init(struct qgpu_device *qdev)
{
	drm_mm_init(&qdev->hap_mm, 0, qdev->hap_size >> PAGE_SHIFT);
}

void qgpu_hap_fini(struct qgpu_device *qdev)
{
	struct drm_mm_node *node, *next;

	drm_mm_for_each_node_safe(node, next, &qdev->hap_mm)
		drm_mm_remove_node(node);
	drm_mm_takedown(&qdev->hap_mm);
}

/**
 * qgpu_hap_map - map a VRAM-resident allocation through the host aperture
 * @bo: allocation resident in a VRAM segment
 *
 * Return: 0, or -ENOSPC when the aperture has no room (the caller falls
 * back to evicting the allocation to system memory, as seed 003 says).
 */
int qgpu_hap_map(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	u64 vram_page;
	int ret;

	if (drm_mm_node_allocated(&bo->hap))
		return 0;
	if (!qdev->hap_size)
		return -ENOSPC;
	ret = drm_mm_insert_node(&qdev->hap_mm, &bo->hap, bo->npages);
	if (ret)
		return -ENOSPC;
	vram_page = qgpu_bo_gpu_addr(bo) >> QGPU_PAGE_SHIFT;
	qgpu_wr(qdev, QGPU_REG_HAP_INDEX, bo->hap.start);
	qgpu_wr(qdev, QGPU_REG_HAP_COUNT, bo->npages);
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_LO, lower_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_VRAM_PAGE_HI, upper_32_bits(vram_page));
	qgpu_wr(qdev, QGPU_REG_HAP_CMD, QGPU_HAP_CMD_MAP);
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
	atomic64_inc(&qdev->stats.c[QGPU_STAT(hap_unmaps)]);
}
