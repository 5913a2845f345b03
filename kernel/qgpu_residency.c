// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: residency entry points. Committing an allocation to a segment
 * (its preferred segments first), and making it reachable by the CPU under
 * Lock2's rules.
 */
#include <linux/dma-resv.h>
#include <drm/drm_cache.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_plan.h"
#include "qgpu_trace.h"

static int qgpu_mm_place(struct qgpu_bo *bo, u32 id)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct drm_mm_node node = {};
	int ret;

	ret = qgpu_mm_allowed(bo, id);
	if (ret)
		return ret;
	if (bo->seg == id)
		return 0;
	ret = qgpu_mm_find_space(qdev, &qdev->seg[id],
				 (u64)bo->npages << PAGE_SHIFT, &node, bo);
	if (ret)
		return ret;
	return qgpu_mm_move_into(bo, id, &node, QGPU_WHY_PLACE);
}

/* @bo's segments in order: its preferred ones, then its set by id */
static unsigned int qgpu_mm_order(struct qgpu_bo *bo, u32 *order)
{
	unsigned int n = 0, i;

	for (i = 0; i < ARRAY_SIZE(bo->preferred) && bo->preferred[i]; i++)
		order[n++] = bo->preferred[i];
	for (i = QGPU_SEG_VISIBLE; i <= QGPU_SEG_MAX; i++)
		if (bo->segment_mask & BIT(i))
			order[n++] = i;
	return n;
}

/*
 * The segment of the VRAM segments of @order (those before the aperture
 * segment) whose best-fit hole for @size bytes is the smallest, the first
 * of them on a tie; @n when none has room. A large allocation then keeps
 * the large hole it needs, where the first segment with room would take
 * it for an allocation that fits elsewhere. The hole sizes are the
 * layout's alone, so a plan's replay chooses as its dry run did.
 */
static unsigned int qgpu_mm_best_segment(struct qgpu_bo *bo, const u32 *order,
					 unsigned int n, u64 size)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	unsigned int i, best = n;
	u64 best_hole = 0;

	for (i = 0; i < n && order[i] != QGPU_SEG_APERTURE; i++) {
		struct qgpu_segment *seg = &qdev->seg[order[i]];
		struct drm_mm_node *pos;
		u64 start, end;

		if (qgpu_mm_allowed(bo, order[i]) ||
		    size > seg->size - seg->reserved)
			continue;
		drm_mm_for_each_hole(pos, &seg->mm, start, end)
			if (end - start >= size &&
			    (best == n || end - start < best_hole)) {
				best = i;
				best_hole = end - start;
			}
	}
	return best;
}

/*
 * Of the VRAM segments of @order that have room for @bo as it is, the one
 * whose best-fit hole is the smallest (qgpu_mm_best_segment()) takes it,
 * evicting nothing (a placement decision, recorded and replayed as any
 * other). Return: 0 when placed, 1 when no segment has room, or a negative
 * errno.
 */
static int qgpu_mm_place_free(struct qgpu_bo *bo, const u32 *order,
			      unsigned int n)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	unsigned int i;
	int ret;

	i = qgpu_mm_best_segment(bo, order, n, size);
	if (i == n)
		return 1;
	for (; i < n && order[i] != QGPU_SEG_APERTURE; i++) {
		struct drm_mm_node node = {};
		u32 id = order[i];

		if (qgpu_mm_allowed(bo, id))
			continue;
		ret = qgpu_mm_find_room(qdev, &qdev->seg[id], size, &node);
		if (ret == -ENOSPC)
			continue;
		if (ret)
			return ret;
		return qgpu_mm_move_into(bo, id, &node, QGPU_WHY_PLACE);
	}
	return 1;
}

/*
 * Room before eviction: an allocation goes to the first VRAM segment of
 * its order that has room as it is; only when none has does it evict, in
 * the VRAM segment whose victims the policy gives up first
 * (qgpu_mm_victim_segment()), and then, if that fails, in each segment of
 * its order. Evicting from a preferred segment while
 * another VRAM segment stays empty pages bytes for nothing (a preferred
 * segment is a hint, "DXGK_ALLOCATIONINFO", WDK). -EAGAIN: the walk's
 * victim policy would rather release what a split frees in some segment,
 * and no other segment made room (&qgpu_future.release).
 */
static int qgpu_mm_choose(struct qgpu_bo *bo, u32 seg)
{
	u32 order[QGPU_SEG_MAX + 4];
	unsigned int n, i;
	int ret = -ENOSPC, r;

	if (seg)
		return qgpu_mm_place(bo, seg);
	if (bo->seg != QGPU_SEG_SYSTEM)
		return 0;
	n = qgpu_mm_order(bo, order);
	r = qgpu_mm_place_free(bo, order, n);
	if (r <= 0)
		return r;
	/* evicting where the policy gives up least, first */
	r = qgpu_mm_victim_segment(bo, order, n, &i);
	if (r)
		return r;
	if (i < n) {
		r = qgpu_mm_place(bo, order[i]);
		if (!r)
			return 0;
		if (r != -ENOSPC && r != -EBUSY && r != -EINVAL &&
		    r != -EAGAIN)
			return r;
	}
	for (i = 0; i < n; i++) {
		r = qgpu_mm_place(bo, order[i]);
		if (!r)
			return 0;
		/* a split by choice: another segment may still have room */
		if (r == -EAGAIN) {
			ret = r;
			continue;
		}
		if (r != -ENOSPC && r != -EBUSY && r != -EINVAL)
			return r;
		if (r == -EBUSY && ret != -EAGAIN)
			ret = r;
	}
	return ret;
}

/**
 * qgpu_mm_make_resident - commit an allocation to a segment
 * @bo: the allocation
 * @seg: a segment id, or 0 to try the preferred segments in order and then
 *	the rest of the supported set
 *
 * An allocation already resident in an acceptable segment stays put.
 * Return: 0, -EBUSY when the lock rules forbid it, -ENOSPC when no segment
 * has room even after eviction.
 */
int qgpu_mm_make_resident(struct qgpu_bo *bo, u32 seg)
{
	int ret = qgpu_mm_choose(bo, seg);

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (!qgpu_plan_dry(to_qdev(bo->base.dev)))
		trace_qgpu_make_resident(bo, seg, bo->seg, ret, bo->id);
	return ret;
}

/*
 * Migrating back: @bo, used again, is in the aperture segment where an
 * eviction to make room for another allocation put it (@bo->evicted; not
 * one placed there by request or by preference), while a VRAM segment
 * before the aperture in its order has room now: it moves there. Nothing
 * is evicted for it, so an allocation that does not fit stays where it is
 * (no ping-pong). Not for an allocation this submission pinned (its BINDs
 * are patched already), nor one that may not go to VRAM now
 * (qgpu_mm_allowed()).
 */
static int qgpu_mm_migrate_back(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	u32 order[QGPU_SEG_MAX + 4];
	int ret;

	if (bo->seg != QGPU_SEG_APERTURE || !bo->evicted || bo->pin_count)
		return 0;
	ret = qgpu_mm_place_free(bo, order, qgpu_mm_order(bo, order));
	if (ret)
		return ret < 0 ? ret : 0;
	if (!qgpu_plan_dry(qdev)) {
		qgpu_stat_add(qdev, qdev->mm_requester,
			      QGPU_STAT(migrations_back), 1);
		qgpu_stat_add(qdev, qdev->mm_requester,
			      QGPU_STAT(migrated_back_bytes), size);
	}
	return 0;
}

/**
 * qgpu_mm_use_resident - commit an allocation that is used now
 * @bo: the allocation
 *
 * As qgpu_mm_make_resident() with segment 0, and an allocation that an
 * eviction left in the aperture segment moves back to VRAM when there is
 * room (qgpu_mm_migrate_back()). For the uses: a submission's walk and
 * MakeResident.
 *
 * Return: as qgpu_mm_make_resident().
 */
int qgpu_mm_use_resident(struct qgpu_bo *bo)
{
	int ret = qgpu_mm_make_resident(bo, 0);

	if (!ret)
		ret = qgpu_mm_migrate_back(bo);
	return ret;
}

/**
 * qgpu_mm_cpu_prepare - make @bo reachable by the CPU
 * @bo: the allocation
 * @path: returns a QGPU_CPU_PATH_* value
 * @moving: returns true while a move is still in flight (a kernel-usage
 *	fence in the reservation object): wait for it without mm_lock and
 *	try again; false when the content is in place and may be mapped now
 *
 * Lock2's rules ("Allocation Usage Tracking", WDK) hold on every path that
 * creates a CPU mapping, whatever created it (Lock2 + mmap, a dumb-buffer
 * map offset, a mapping made before an unlock): an allocation created
 * without CPU access, or cached (unless all of VRAM is CPU-visible), is
 * never mapped onto VRAM; it is first moved to the aperture segment or
 * system memory (qgpu_bo_lock_outside_vram()). A CPU-accessible allocation maps
 * linearly through BAR2 in visible VRAM and through host-aperture pages in
 * the rest; when the host aperture is full it is evicted to system memory
 * ("Mapping Virtual Addresses to a Memory Segment", WDK).
 *
 * Only moves are waited for: the GPU work that uses the allocation is the
 * user-mode driver's to synchronise with (Lock2 has no implicit wait), so a
 * DMA buffer may wait for a value the CPU writes into the same allocation.
 */
int qgpu_mm_cpu_prepare(struct qgpu_bo *bo, u32 *path, bool *moving)
{
	bool vram = bo->seg == QGPU_SEG_VISIBLE || bo->seg == QGPU_SEG_LOCAL;
	int ret;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	*moving = false;
	ret = qgpu_bo_backing(bo);
	if (ret)
		return ret;
	if (vram && qgpu_bo_lock_outside_vram(bo)) {
		if (bo->pin_count)
			return -EBUSY;
		ret = qgpu_mm_evict_one(bo, false, QGPU_WHY_CPU);
		if (ret)
			return ret;
	} else if (bo->seg == QGPU_SEG_LOCAL && qgpu_hap_map(bo)) {
		ret = qgpu_mm_evict_one(bo, false, QGPU_WHY_CPU);
		if (ret)
			return ret;
	}
	if (!dma_resv_test_signaled(bo->base.resv, DMA_RESV_USAGE_KERNEL)) {
		*moving = true;
		return 0;
	}
	switch (bo->seg) {
	case QGPU_SEG_VISIBLE:
		*path = QGPU_CPU_PATH_BAR;
		break;
	case QGPU_SEG_LOCAL:
		*path = QGPU_CPU_PATH_HAP;
		break;
	default:
		*path = QGPU_CPU_PATH_SYSTEM;
		/* a move wrote the pages behind the CPU caches' back */
		if (bo->cpu_stale) {
			drm_clflush_pages(bo->pages, bo->npages);
			bo->cpu_stale = false;
		}
		break;
	}
	bo->pristine = false;
	return 0;
}
