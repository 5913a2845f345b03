// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: memory segments ("Initializing Use of Memory Segments", WDK). The
 * segment descriptors built from the device's sizes, each segment's range
 * allocator (drm_mm) and LRU list, its accounting, and the rule of which
 * segment an allocation may be committed to now.
 */
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "qgpu_drv.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_paging.h"

struct qgpu_segment *qgpu_seg(struct qgpu_device *qdev, u32 id)
{
	if (id < QGPU_SEG_VISIBLE || id > QGPU_SEG_MAX ||
	    !qdev->seg[id].present)
		return NULL;
	return &qdev->seg[id];
}

bool qgpu_mm_seg_present(struct qgpu_device *qdev, u32 id)
{
	return qgpu_seg(qdev, id);
}

static void qgpu_seg_setup(struct qgpu_device *qdev, u32 id, u64 base,
			   u64 size, u32 flags, u64 bar_offset)
{
	struct qgpu_segment *seg = &qdev->seg[id];

	seg->id = id;
	seg->base = base;
	seg->size = size;
	seg->flags = flags;
	seg->cpu_bar_offset = bar_offset;
	seg->present = true;
	drm_mm_init(&seg->mm, 0, size);
	INIT_LIST_HEAD(&seg->lru);
}

static void qgpu_mm_release_wq(struct drm_device *drm, void *wq)
{
	destroy_workqueue(wq);
}

int qgpu_mm_init(struct qgpu_device *qdev)
{
	struct qgpu_segment *ap;
	int ret;

	mutex_init(&qdev->mm_lock);
	/* Lives as long as the DRM device: objects may be freed after unplug. */
	qdev->reap_wq = alloc_workqueue("qgpu-reap", WQ_UNBOUND, 0);
	if (!qdev->reap_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&qdev->drm, qgpu_mm_release_wq,
				       qdev->reap_wq);
	if (ret)
		return ret;
	/* qgpu_hw_identify() made sure of the paging engine and the GART */
	if (qdev->gart_size < 2 * QGPU_PBUF_SIZE || qdev->visible_size < SZ_1M) {
		drm_err(&qdev->drm, "device lacks GART range or VRAM\n");
		return -ENODEV;
	}
	/*
	 * Segment descriptors, from the device's registers ("Initializing Use
	 * of Memory Segments").
	 */
	qgpu_seg_setup(qdev, QGPU_SEG_VISIBLE, 0, qdev->visible_size,
		       QGPU_SEGF_CPU_VISIBLE, 0);
	if (qdev->vram_size > qdev->visible_size)
		qgpu_seg_setup(qdev, QGPU_SEG_LOCAL, qdev->visible_size,
			       qdev->vram_size - qdev->visible_size,
			       qdev->hap_size ? QGPU_SEGF_CPU_HOST_APERTURE : 0,
			       0);
	qgpu_seg_setup(qdev, QGPU_SEG_APERTURE, QGPU_GART_BASE, qdev->gart_size,
		       QGPU_SEGF_APERTURE | QGPU_SEGF_CPU_VISIBLE |
		       QGPU_SEGF_CACHE_COHERENT | QGPU_SEGF_POPULATED_FROM_SYS |
		       QGPU_SEGF_PAGING_BUFFER, 0);

	/* The paging buffer: PagingBufferSize bytes of the aperture segment. */
	ap = &qdev->seg[QGPU_PBUF_SEGMENT];
	qdev->pbuf_node.start = 0;
	qdev->pbuf_node.size = QGPU_PBUF_SIZE;
	ret = drm_mm_reserve_node(&ap->mm, &qdev->pbuf_node);
	if (ret)
		return ret;
	ap->reserved = QGPU_PBUF_SIZE;
	ap->used = QGPU_PBUF_SIZE;

	qgpu_hap_init(qdev);
	ret = qgpu_paging_init(qdev);
	if (ret)
		qgpu_mm_fini(qdev);
	return ret;
}

void qgpu_mm_fini(struct qgpu_device *qdev)
{
	u32 id;

	/* allocations already destroyed give back their ranges first */
	flush_workqueue(qdev->reap_wq);
	qgpu_paging_fini(qdev);
	qgpu_hap_fini(qdev);
	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++) {
		struct qgpu_segment *seg = &qdev->seg[id];
		struct drm_mm_node *node, *next;

		if (!seg->present)
			continue;
		/* Allocations still open keep their nodes; they are detached. */
		drm_mm_for_each_node_safe(node, next, &seg->mm)
			drm_mm_remove_node(node);
		drm_mm_takedown(&seg->mm);
		seg->present = false;
	}
}

u64 qgpu_bo_gpu_addr(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (bo->seg == QGPU_SEG_SYSTEM)
		return 0;
	return qdev->seg[bo->seg].base + bo->node.start;
}

void qgpu_mm_touch(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	lockdep_assert_held(&qdev->mm_lock);
	bo->lru_tick = ++qdev->lru_tick;
	if (bo->seg != QGPU_SEG_SYSTEM)
		list_move_tail(&bo->lru, &qdev->seg[bo->seg].lru);
}

void qgpu_seg_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
		      bool add)
{
	struct qgpu_segment *seg = &qdev->seg[bo->seg];
	u64 size = bo->node.size;

	if (add) {
		seg->allocations++;
		seg->used += size;
		list_add_tail(&bo->lru, &seg->lru);
	} else {
		seg->allocations--;
		seg->used -= size;
		list_del_init(&bo->lru);
	}
}

/* May @bo be committed to segment @id now? */
int qgpu_mm_allowed(struct qgpu_bo *bo, u32 id)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	bool memory_seg = id == QGPU_SEG_VISIBLE || id == QGPU_SEG_LOCAL;

	if (!(bo->segment_mask & BIT(id)) || !qgpu_seg(qdev, id))
		return -EINVAL;
	/*
	 * "Allocation Usage Tracking" (WDK), Lock2: a non-CPU-accessible
	 * allocation is locked only through the aperture segment or in system
	 * memory, and is not committed to a memory segment while locked. A
	 * CPU-accessible allocation carries no placement restriction.
	 */
	if (memory_seg && bo->lock_count && !(bo->flags & QGPU_GEM_CPU_ACCESS))
		return -EBUSY;
	/* Other devices hold its pages: the content stays in them. */
	if (memory_seg && bo->attachments)
		return -EBUSY;
	return 0;
}

void qgpu_mm_segment_stats(struct qgpu_device *qdev,
			   struct drm_qgpu_segment_stats *st, u32 *n)
{
	u32 id;

	/* the count alone is fixed at init; the figures need the lock */
	if (st)
		lockdep_assert_held(&qdev->mm_lock);
	*n = 0;
	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++) {
		struct qgpu_segment *seg = qgpu_seg(qdev, id);

		if (!seg)
			continue;
		if (st) {
			st[*n].id = id;
			st[*n].allocations = seg->allocations;
			st[*n].size = seg->size;
			st[*n].used = seg->used;
		}
		(*n)++;
	}
}
