// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: memory segments ("Initializing Use of Memory Segments", WDK). The
 * segment descriptors built from the device's sizes, each segment's range
 * allocator (drm_mm) and LRU list, its accounting, and the rule of which
 * segment an allocation may be committed to now.
 */
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_paging.h"
#include "qgpu_plan.h"
#include "qgpu_trace.h"

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

void qgpu_seg_setup(struct qgpu_device *qdev, u32 id, u64 base, u64 size,
		    u32 flags, u64 bar_offset)
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

u64 qgpu_bo_gpu_addr(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (bo->seg == QGPU_SEG_SYSTEM)
		return 0;
	return qdev->seg[bo->seg].base + bo->node.start;
}

/**
 * qgpu_mm_note_use - remember a use for the reuse-interval policy
 * @bo: the allocation used
 * @tick: the clock at the use (&qgpu_device.lru_tick)
 *
 * Keeps the last use and the interval since the one before; the replay
 * tool derives both from a trace's events. Under mm_lock.
 */
void qgpu_mm_note_use(struct qgpu_bo *bo, u64 tick)
{
	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	bo->use_gap = bo->use_tick ? tick - bo->use_tick : 0;
	bo->use_tick = tick;
}

void qgpu_mm_touch(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	lockdep_assert_held(&qdev->mm_lock);
	bo->lru_tick = ++qdev->lru_tick;
	trace_qgpu_touch(bo->id, bo->lru_tick);
	bo->uses++;
	/*
	 * The portions of one submission are one use: a split does not make
	 * the allocation look used again (the plan's walk began at
	 * &qgpu_plan.lru_tick).
	 */
	if (!qdev->plan || bo->use_tick <= qdev->plan->lru_tick)
		qgpu_mm_note_use(bo, bo->lru_tick);
	if (bo->seg != QGPU_SEG_SYSTEM)
		list_move_tail(&bo->lru, &qdev->seg[bo->seg].lru);
}

void qgpu_seg_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
		      bool add)
{
	struct qgpu_segment *seg = &qdev->seg[bo->seg];
	u64 size = bo->node.size;

	qgpu_budget_account(qdev, bo, add);
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

/**
 * qgpu_bo_lock_outside_vram - whether Lock2 keeps @bo out of VRAM
 * @bo: the allocation
 *
 * "Allocation Usage Tracking" (WDK), Lock2: a non-CPU-accessible
 * allocation is locked only through the aperture segment or in system
 * memory. So is a cached one (QGPU_GEM_CPU_CACHED): CPU caches cannot be
 * kept coherent with VRAM, so a cached CPU-accessible allocation is locked
 * only in the aperture segment or when not resident, unless all of VRAM is
 * CPU-visible (a resizable BAR), where it is locked in place and mapped
 * write-combined like any mapping of VRAM.
 *
 * Return: true when locking @bo, and faulting in its CPU mappings, move it
 * out of VRAM first, and when it may not be committed to VRAM while locked.
 */
bool qgpu_bo_lock_outside_vram(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (!(bo->flags & QGPU_GEM_CPU_ACCESS))
		return true;
	return bo->flags & QGPU_GEM_CPU_CACHED &&
	       qdev->visible_size < qdev->vram_size;
}

/* May @bo be committed to segment @id now? */
int qgpu_mm_allowed(struct qgpu_bo *bo, u32 id)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	bool memory_seg = id == QGPU_SEG_VISIBLE || id == QGPU_SEG_LOCAL;

	if (!(bo->segment_mask & BIT(id)) || !qgpu_seg(qdev, id))
		return -EINVAL;
	/*
	 * "Allocation Usage Tracking" (WDK), Lock2: a non-CPU-accessible or a
	 * cached allocation is locked only through the aperture segment or in
	 * system memory, and is not committed to a memory segment while
	 * locked. Another CPU-accessible allocation carries no placement
	 * restriction.
	 */
	if (memory_seg && bo->lock_count && qgpu_bo_lock_outside_vram(bo))
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
