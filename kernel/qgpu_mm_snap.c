// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: a snapshot of the memory manager's books in the tracepoints, so
 * that a recording (qgpu-trace, docs/trace-format.md) starts from what the
 * memory manager really holds: its counters and clocks, every segment's
 * ranges in address order, its free ranges in the order drm_mm hands them
 * out (the hole stack) and its allocations in LRU order. The replay
 * (qgpu-replay) rebuilds the same books from it.
 */
#include <drm/drm_gpuvm.h>
#include <drm/drm_mm.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

/*
 * What this memory manager does that earlier ones did not, for the replay
 * of its traces (docs/trace-format.md, snap-begin features=)
 */
#define QGPU_MM_FEATURE_MIGRATE_BACK	0x1	/* qgpu_mm_use_resident() */
/* qgpu_mm_make_resident(): room as it is in a VRAM segment before eviction */
#define QGPU_MM_FEATURE_ROOM_FIRST	0x2
/*
 * qgpu_submit_place(): the walk evicts what its DMA buffer uses later only
 * when nothing else makes room, and splits early to release what it no
 * longer needs
 */
#define QGPU_MM_FEATURE_SPLIT_EARLY	0x4
/*
 * qgpu_mm_place_free(): room as it is goes to the VRAM segment whose
 * best-fit hole is the smallest, not to the first of the order that has one
 */
#define QGPU_MM_FEATURE_BEST_SEGMENT	0x8
/* qgpu_budget_pt(): a process's page tables count in its usage */
#define QGPU_MM_FEATURE_PT_BUDGET	0x10
/*
 * qgpu_submit_place(): split by choice: the victim policy weighs what a
 * split would release beside the other candidates
 */
#define QGPU_MM_FEATURE_SPLIT_CHOICE	0x20
/*
 * qgpu_mm_choose(): when no VRAM segment has room, the eviction goes to
 * the segment whose victims the policy would give up first
 * (qgpu_mm_victim_segment()), not to the first of the order
 */
#define QGPU_MM_FEATURE_VICTIM_SEGMENT	0x40
#define QGPU_MM_FEATURES		(QGPU_MM_FEATURE_MIGRATE_BACK | \
					 QGPU_MM_FEATURE_ROOM_FIRST | \
					 QGPU_MM_FEATURE_SPLIT_EARLY | \
					 QGPU_MM_FEATURE_BEST_SEGMENT | \
					 QGPU_MM_FEATURE_PT_BUDGET | \
					 QGPU_MM_FEATURE_SPLIT_CHOICE | \
					 QGPU_MM_FEATURE_VICTIM_SEGMENT)

/* How many mappings in GPU address spaces @bo has (under mm_lock) */
static u32 qgpu_snap_mappings(struct qgpu_bo *bo)
{
	struct drm_gpuvm_bo *vm_bo;
	struct drm_gpuva *va;
	u32 n = 0;

	drm_gem_for_each_gpuvm_bo(vm_bo, &bo->base)
		drm_gpuvm_bo_for_each_va(va, vm_bo)
			n++;
	return n;
}

/* The allocation whose range @node is, if it is one (else NULL) */
static struct qgpu_bo *qgpu_snap_owner(struct qgpu_segment *seg,
				       struct drm_mm_node *node)
{
	struct qgpu_bo *bo;

	list_for_each_entry(bo, &seg->lru, lru)
		if (&bo->node == node)
			return bo;
	return NULL;
}

static void qgpu_snap_segment(struct qgpu_device *qdev,
			      struct qgpu_segment *seg)
{
	struct drm_mm_node *node;
	struct qgpu_bo *bo;
	u64 hs, he;

	trace_qgpu_snap_seg(seg->id, seg->size, seg->reserved, seg->used,
			    seg->allocations);
	drm_mm_for_each_node(node, &seg->mm) {
		struct qgpu_pt *pt;

		bo = qgpu_snap_owner(seg, node);
		if (bo) {
			trace_qgpu_snap_node(seg->id, node->start, node->size, 0,
					     bo->id, 0);
		} else if (node == &qdev->pbuf_node) {
			trace_qgpu_snap_node(seg->id, node->start, node->size, 2,
					     0, 0);
		} else {
			pt = container_of(node, struct qgpu_pt, node);
			trace_qgpu_snap_node(seg->id, node->start, node->size, 1,
					     pt->id,
					     pt->owner ? pt->owner->id : 0);
		}
	}
	drm_mm_for_each_hole(node, &seg->mm, hs, he)
		trace_qgpu_snap_hole(seg->id, hs, he - hs);
	list_for_each_entry(bo, &seg->lru, lru)
		trace_qgpu_snap_bo(bo->id, bo->base.size, bo->segment_mask,
				   bo->flags, bo->preferred[0] |
				   bo->preferred[1] << 8 |
				   bo->preferred[2] << 16 |
				   (u32)bo->preferred[3] << 24, bo->seg,
				   bo->node.start, bo->lru_tick,
				   bo->pristine | bo->dead << 1 |
				   (bo->sgt ? 4 : 0), bo->lock_count,
				   bo->attachments, bo->priority);
	list_for_each_entry(bo, &seg->lru, lru)
		trace_qgpu_snap_bo_state(bo->id, bo->offered ?
					 bo->offer_priority : 0,
					 qgpu_snap_mappings(bo), bo->evicted,
					 bo->owner ? bo->owner->id : 0);
}

/**
 * qgpu_mm_trace_snapshot - the memory manager's books, in the tracepoints
 * @qdev: device
 * @tag: the caller's tag (qgpu-trace: 1 at the start, 2 at the end)
 *
 * Nothing is emitted unless the qgpu_snap_begin event is enabled.
 */
void qgpu_mm_trace_snapshot(struct qgpu_device *qdev, u32 tag)
{
	struct drm_qgpu_stats st = {};
	__u64 *v = (__u64 *)&st;
	unsigned int i;
	u32 id;

	if (!trace_qgpu_snap_begin_enabled())
		return;
	qgpu_mm_lock(qdev, NULL);
	for (i = 0; i < sizeof(st) / sizeof(*v); i++)
		v[i] = atomic64_read(&qdev->stats.c[i]);
	trace_qgpu_snap_begin(tag, st.bytes_to_vram, st.bytes_from_vram,
			      st.bytes_vram_to_vram, st.bytes_filled,
			      st.evictions, qdev->lru_tick, qdev->policy,
			      atomic64_read(&qdev->bo_ids) + 1,
			      QGPU_MM_FEATURES, READ_ONCE(qdev->budget_pct));
	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++)
		if (qdev->seg[id].present)
			qgpu_snap_segment(qdev, &qdev->seg[id]);
	trace_qgpu_snap_end(tag);
	qgpu_mm_unlock(qdev);
}
