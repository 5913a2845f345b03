// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: deferred destruction ("Allocation Usage Tracking", WDK). A
 * destroyed allocation stays an eviction victim that costs no copy; its
 * range is given back behind its last work, and what is left is released
 * once that work is done.
 */
#include <drm/drm_drv.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_paging.h"
#include "qgpu_plan.h"

/*
 * Give back the segment range of a destroyed allocation. The range is
 * reused only behind the allocation's last GPU work: a paging job that
 * waits for it (and clears the GART entries of an aperture range) is
 * queued first, and the paging engine runs jobs in order, so whatever is
 * placed there next is written only after that work is done. Nothing here
 * waits. The backing pages are freed by the caller once every fence in the
 * allocation's reservation object (that job's among them) has signalled.
 */
int qgpu_mm_drop(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct qgpu_paging pb;
	int idx, ret = 0;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (bo->seg == QGPU_SEG_SYSTEM)
		return 0;
	if (qgpu_plan_dry(qdev)) {
		ret = qgpu_plan_save(qdev, bo);
		if (!ret)
			qgpu_mm_book_move(bo, QGPU_SEG_SYSTEM, NULL);
		return ret;
	}
	/* After unplug the device and its schedulers are gone: no paging. */
	if (drm_dev_enter(&qdev->drm, &idx)) {
		ret = qgpu_mm_paging_begin(bo, &pb);
		if (!ret) {
			if (bo->seg == QGPU_SEG_APERTURE)
				ret = qgpu_paging_unmap_aperture(&pb,
								 bo->node.start >> PAGE_SHIFT,
								 bo->npages);
			if (!ret)
				ret = qgpu_paging_nop(&pb);
			qgpu_mm_paging_end(bo, &pb, ret);
		}
		drm_dev_exit(idx);
		if (ret)
			return ret;
	}
	qgpu_seg_account(qdev, bo, false);
	if (drm_mm_node_allocated(&bo->node))
		drm_mm_remove_node(&bo->node);
	bo->seg = QGPU_SEG_SYSTEM;
	return 0;
}

/**
 * qgpu_mm_bo_gone - the last reference to @bo is gone
 * @bo: the allocation
 *
 * Deferred destruction ("Allocation Usage Tracking", WDK): this returns at
 * once. The allocation stays an eviction victim that costs no copy, so its
 * range can be reused before its queued work is done (behind that work);
 * qgpu_mm_bo_reap() releases what is left once the work has completed.
 */
void qgpu_mm_bo_gone(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	lockdep_assert_held(&qdev->mm_lock);
	qgpu_hap_unmap(bo);
	bo->dead = true;
}

/**
 * qgpu_mm_bo_reap - release the segment range of a dead allocation
 * @bo: the allocation, after qgpu_mm_bo_gone()
 *
 * The backing pages may be freed once every fence in the allocation's
 * reservation object has signalled: the GART unmap queued here is one.
 *
 * Return: 0, or an error when the paging job could not be built (nothing
 * was released; the caller tries again).
 */
int qgpu_mm_bo_reap(struct qgpu_bo *bo)
{
	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	return qgpu_mm_drop(bo);
}
