/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_MM_H
#define QGPU_MM_H

#include "qgpu_device.h"
#include "qgpu_gem.h"

/**
 * struct qgpu_future - the known future of a submission's walk: the rest
 *	of its patch-location list (the future-use victim policy)
 * @bos: the allocation of each allocation-list entry (NULL: none)
 * @pe: the patch-location list
 * @n: its entries
 * @pos: the walk's position: entries from here on are still to come
 * @spare: eviction takes only allocations that the entries from @pos on do
 *	not use (the walk's first try at each placement; see
 *	qgpu_submit_place())
 * @release: eviction also weighs the allocations pinned for the current
 *	portion that a split here would release (those qgpu_future_keeps()
 *	does not keep); when the victim policy picks one of them, the walk
 *	splits instead of evicting (-EAGAIN from qgpu_mm_find_space())
 * @keep_i0: with @release: the first entry of the split point
 * @keep_ran: the first entry whose BIND does not run before it
 * @keep_slot: &qgpu_bo.walk_slot of the allocations in slots a split there
 *	does not reprogram
 */
struct qgpu_future {
	struct qgpu_bo *const *bos;
	const struct drm_qgpu_patch_entry *pe;
	u32 n;
	u32 pos;
	bool spare;
	bool release;
	u32 keep_i0;
	u32 keep_ran;
	u64 keep_slot;
};

/*
 * Would a split at the split point of @f's books keep pinned @bo? What it
 * keeps pinned is what qgpu_submit_split_state() pins: the resource
 * table's slots not reprogrammed there, and allocations whose BINDs are
 * patched already but lie after it; and the entries from the split point
 * on use what they use. O(1): the walk's books in the allocation
 * (&qgpu_bo.walk_last, &qgpu_bo.walk_seen, &qgpu_bo.walk_slot), under
 * mm_lock.
 */
static inline bool qgpu_future_keeps(const struct qgpu_future *f,
				     const struct qgpu_bo *bo)
{
	return bo->walk_last > f->keep_i0 || bo->walk_slot == f->keep_slot ||
	       bo->walk_seen > f->keep_ran;
}

u64 qgpu_mm_mark_future(struct qgpu_device *qdev);

int qgpu_policy_parse(const char *buf, unsigned int *policy);
unsigned int qgpu_mm_default_policy(void);
u32 qgpu_mm_default_budget(void);

/* qgpu_budget.c: per-process budgets (QueryVideoMemoryInfo) */
struct dentry;
struct qgpu_vidmem *qgpu_vidmem_new(void);
struct qgpu_vidmem *qgpu_vidmem_get(struct qgpu_vidmem *vm);
void qgpu_vidmem_put(struct qgpu_vidmem *vm);
u32 qgpu_vidmem_query(struct qgpu_file *qf, struct drm_qgpu_vidmem_info *out);
void qgpu_budget_debugfs_init(struct qgpu_device *qdev, struct dentry *root);
/**
 * enum qgpu_move_why - why the memory manager moved an allocation (the
 *	@why of the qgpu_move and qgpu_evict tracepoints)
 * @QGPU_WHY_PLACE: committed to a segment for a use or a request
 * @QGPU_WHY_VICTIM: evicted to make room for another allocation
 * @QGPU_WHY_REQUEST: evicted on request (GEM_RESIDE, MakeResident's Evict,
 *	a device attaching to its dma-buf)
 * @QGPU_WHY_CPU: evicted for CPU access (Lock2's rule, a CPU fault that the
 *	host aperture cannot serve)
 */
enum qgpu_move_why {
	QGPU_WHY_PLACE = 0,
	QGPU_WHY_VICTIM = 1,
	QGPU_WHY_REQUEST = 2,
	QGPU_WHY_CPU = 3,
};

/**
 * enum qgpu_mm_req_kind - the memory manager's requests, as the qgpu_mm_req
 *	tracepoint names them (docs/trace-format.md)
 * @QGPU_REQ_RESIDE: GEM_RESIDE make resident (@arg: the segment, 0 any)
 * @QGPU_REQ_EVICT: GEM_RESIDE evict (@arg: 1 to system memory)
 * @QGPU_REQ_LOCK: Lock2
 * @QGPU_REQ_UNLOCK: Unlock2
 * @QGPU_REQ_ATTACH: a device attaches to its dma-buf
 * @QGPU_REQ_DETACH: a device detaches
 * @QGPU_REQ_MAKE_RESIDENT: MakeResident's worker (@arg: 1 for Evict)
 * @QGPU_REQ_REAP: a destroyed allocation's range is given back
 * @QGPU_REQ_PRIORITY: SetAllocationPriority (@arg: the priority)
 * @QGPU_REQ_POLICY: the victim policy changed (@arg: enum qgpu_policy_id)
 * @QGPU_REQ_OFFER: OfferAllocations (@arg: the offer priority)
 * @QGPU_REQ_RECLAIM: ReclaimAllocations
 * @QGPU_REQ_GPU_MAP: a mapping of the allocation in a GPU address space is
 *	linked (@arg 1) or unlinked (@arg 0)
 * @QGPU_REQ_OWNER: the allocation counts in the usage of a file's video
 *	memory (@arg: &qgpu_vidmem.id; QueryVideoMemoryInfo)
 * @QGPU_REQ_BUDGET: every process's budget changed (@arg: percent)
 * @QGPU_REQ_GPU_WRITE: the allocation's content is no longer known to be
 *	zero (&qgpu_bo.pristine): a virtual submission of an address space
 *	it is mapped in, or another device attached to it, may write it
 *	wherever it is, so its next move into VRAM copies it
 */
enum qgpu_mm_req_kind {
	QGPU_REQ_RESIDE = 1,
	QGPU_REQ_EVICT = 2,
	QGPU_REQ_LOCK = 3,
	QGPU_REQ_UNLOCK = 4,
	QGPU_REQ_ATTACH = 5,
	QGPU_REQ_DETACH = 6,
	QGPU_REQ_MAKE_RESIDENT = 7,
	QGPU_REQ_REAP = 8,
	QGPU_REQ_PRIORITY = 9,
	QGPU_REQ_POLICY = 10,
	QGPU_REQ_OFFER = 11,
	QGPU_REQ_RECLAIM = 12,
	QGPU_REQ_GPU_MAP = 13,
	QGPU_REQ_OWNER = 14,
	QGPU_REQ_BUDGET = 15,
	QGPU_REQ_GPU_WRITE = 16,
};

int qgpu_mm_init(struct qgpu_device *qdev);
void qgpu_mm_fini(struct qgpu_device *qdev);
bool qgpu_mm_seg_present(struct qgpu_device *qdev, u32 id);
int qgpu_bo_backing(struct qgpu_bo *bo);
void qgpu_bo_release_backing(struct qgpu_bo *bo);
u64 qgpu_bo_gpu_addr(struct qgpu_bo *bo);
int qgpu_mm_make_resident(struct qgpu_bo *bo, u32 seg);
int qgpu_mm_use_resident(struct qgpu_bo *bo);
int qgpu_mm_evict(struct qgpu_bo *bo, bool to_system, u32 why);
void qgpu_mm_bo_gone(struct qgpu_bo *bo);
int qgpu_mm_bo_reap(struct qgpu_bo *bo);
void qgpu_mm_touch(struct qgpu_bo *bo);
void qgpu_mm_note_use(struct qgpu_bo *bo, u64 tick);
int qgpu_mm_cpu_prepare(struct qgpu_bo *bo, u32 *path, bool *moving);
void qgpu_mm_segment_stats(struct qgpu_device *qdev,
			   struct drm_qgpu_segment_stats *st, u32 *n);
/* qgpu_mm_snap.c */
void qgpu_mm_trace_snapshot(struct qgpu_device *qdev, u32 tag);

/* qgpu_hap.c: the CPU host aperture page allocator */
void qgpu_hap_init(struct qgpu_device *qdev);
void qgpu_hap_fini(struct qgpu_device *qdev);
int qgpu_hap_map(struct qgpu_bo *bo);
void qgpu_hap_unmap(struct qgpu_bo *bo);
u64 qgpu_hap_page(struct qgpu_bo *bo, u32 pg);

#endif /* QGPU_MM_H */
