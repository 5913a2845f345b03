// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: moving an allocation between segments and system memory. Every
 * move is a paging buffer on the paging engine (TRANSFER, FILL, GART
 * map/unmap; for an allocation mapped in a GPU address space, TransferVirtual
 * and FillVirtual through the paging process, and the rewrite of its
 * page-table entries); the CPU never copies VRAM. A move zaps the allocation's CPU
 * mappings, queues behind all of qgpu's work on the allocation and puts
 * its fence in the allocation's reservation object; the books (segment,
 * range, LRU) change at once. In a plan's dry run only the books change.
 * On a device that is not I/O coherent, a move of a cached allocation to
 * or from its system pages also writes back and invalidates their CPU
 * cache lines.
 */
#include <linux/dma-resv.h>
#include <drm/drm_cache.h>
#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_hw.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_paging.h"
#include "qgpu_plan.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

/* Drop every CPU mapping of @bo; the next access faults and re-resolves. */
void qgpu_mm_zap(struct qgpu_bo *bo)
{
	drm_vma_node_unmap(&bo->base.vma_node,
			   bo->base.dev->anon_inode->i_mapping);
	qgpu_hap_unmap(bo);
}

/*
 * OfferAllocations: an offered allocation leaving VRAM for system memory
 * is discarded, not copied (unless mapped in a GPU address space: those
 * move with their content, their page tables rewritten on the way).
 */
static bool qgpu_mm_discards(struct qgpu_bo *bo, u32 dst)
{
	bool src_vram = bo->seg == QGPU_SEG_VISIBLE ||
			bo->seg == QGPU_SEG_LOCAL;

	return bo->offered && src_vram && dst == QGPU_SEG_SYSTEM &&
	       !qgpu_pp_can_move(bo, bo->seg, dst);
}

/* Page lists never exceed what one paging-buffer list can hold. */
#define QGPU_CHUNK_PAGES	(QGPU_PBUF_MAX_LIST / sizeof(u64))

static int qgpu_mm_list(struct qgpu_paging *pb, struct qgpu_bo *bo, u32 first,
			u32 n, bool gpu_addrs, u64 *addr)
{
	return qgpu_paging_list(pb, bo->dma + first, n, gpu_addrs, addr);
}

/* GART entries for @bo's backing pages, from aperture page @first. */
static int qgpu_mm_map_pages(struct qgpu_paging *pb, struct qgpu_bo *bo,
			     u32 first)
{
	u32 i, n;
	u64 list;
	int ret = 0;

	for (i = 0; i < bo->npages && !ret; i += n) {
		n = min_t(u32, bo->npages - i, QGPU_CHUNK_PAGES);
		ret = qgpu_mm_list(pb, bo, i, n, false, &list);
		if (!ret)
			ret = qgpu_paging_map_aperture(pb, first + i, n, list);
	}
	return ret;
}

/* TRANSFER between VRAM at @vram and @bo's backing pages (page lists). */
static int qgpu_mm_xfer_pages(struct qgpu_paging *pb, struct qgpu_bo *bo,
			      u64 vram, bool to_vram)
{
	u32 i, n;
	u64 list, at, bytes;
	int ret = 0;

	for (i = 0; i < bo->npages && !ret; i += n) {
		n = min_t(u32, bo->npages - i, QGPU_CHUNK_PAGES);
		ret = qgpu_mm_list(pb, bo, i, n, true, &list);
		if (ret)
			break;
		at = vram + ((u64)i << PAGE_SHIFT);
		bytes = (u64)n << PAGE_SHIFT;
		if (to_vram)
			ret = qgpu_paging_transfer(pb, bytes, list, at,
						   QGPU_XFER_SRC_PAGELIST);
		else
			ret = qgpu_paging_transfer(pb, bytes, at, list,
						   QGPU_XFER_DST_PAGELIST);
	}
	return ret;
}

/*
 * Build the paging operations that move @bo's content from where it is to
 * @dst (segment id) at @dst_node. Returns 0 and leaves the job in @pb.
 */
static int qgpu_mm_build_move(struct qgpu_paging *pb, struct qgpu_bo *bo,
			      u32 dst, struct drm_mm_node *dst_node)
{
	struct qgpu_device *qdev = pb->qdev;
	struct qgpu_segment *dseg = dst ? &qdev->seg[dst] : NULL;
	u32 src = bo->seg;
	u64 src_addr = qgpu_bo_gpu_addr(bo);
	u64 dst_addr = dseg ? dseg->base + dst_node->start : 0;
	bool src_vram = src == QGPU_SEG_VISIBLE || src == QGPU_SEG_LOCAL;
	bool dst_vram = dst == QGPU_SEG_VISIBLE || dst == QGPU_SEG_LOCAL;
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	unsigned int stat = 0;
	int ret = 0;

	/* Into the aperture: write GART entries for the backing pages. */
	if (dst == QGPU_SEG_APERTURE) {
		ret = qgpu_mm_map_pages(pb, bo, dst_node->start >> PAGE_SHIFT);
		if (ret)
			return ret;
	}

	if (qgpu_pp_can_move(bo, src, dst)) {
		/* mapped in a GPU address space: through the paging process */
		ret = qgpu_pp_build_move(pb, bo, src_addr, src, dst_addr, dst);
		stat = dst_vram && bo->pristine ? QGPU_STAT(bytes_filled) :
		       src_vram && dst_vram ? QGPU_STAT(bytes_vram_to_vram) :
		       src_vram ? QGPU_STAT(bytes_from_vram) :
		       QGPU_STAT(bytes_to_vram);
	} else if (dst_vram && bo->pristine) {
		/* a new allocation in local memory is zero-filled ("GpuMmu
		 * Example Scenarios")
		 */
		ret = qgpu_paging_fill(pb, size, dst_addr, 0);
		stat = QGPU_STAT(bytes_filled);
	} else if (src != QGPU_SEG_SYSTEM && dst != QGPU_SEG_SYSTEM &&
		   (src_vram || dst_vram)) {
		/* VRAM<->VRAM, or VRAM<->aperture through the GART */
		ret = qgpu_paging_transfer(pb, size, src_addr, dst_addr, 0);
		stat = src_vram && dst_vram ? QGPU_STAT(bytes_vram_to_vram) :
		       src_vram ? QGPU_STAT(bytes_from_vram) :
		       QGPU_STAT(bytes_to_vram);
	} else if (qgpu_mm_discards(bo, dst)) {
		/*
		 * offered: its content is discarded, nothing is copied; but
		 * its range is reused only behind the work queued on it, so
		 * the job still runs, after its dependencies
		 */
		ret = qgpu_paging_nop(pb);
	} else if (src_vram && dst == QGPU_SEG_SYSTEM) {
		ret = qgpu_mm_xfer_pages(pb, bo, src_addr, false);
		stat = QGPU_STAT(bytes_from_vram);
	} else if (src == QGPU_SEG_SYSTEM && dst_vram) {
		ret = qgpu_mm_xfer_pages(pb, bo, dst_addr, true);
		stat = QGPU_STAT(bytes_to_vram);
	}
	if (ret)
		return ret;
	if (stat)
		qgpu_stat_add(qdev, qdev->mm_requester, stat, size);

	/* Out of the aperture: clear the GART entries. */
	if (src == QGPU_SEG_APERTURE)
		ret = qgpu_paging_unmap_aperture(pb, bo->node.start >> PAGE_SHIFT,
						 bo->npages);
	/* Its GPU virtual addresses follow it. */
	if (!ret && qdev->pp)
		ret = qgpu_vm_bo_moved(pb, bo, dst, dst_addr);
	return ret;
}

/*
 * @bo->node takes over the range @node holds (drm_mm has no node
 * replacement any more): the range is freed and at once reserved again.
 */
static void qgpu_mm_take_node(struct qgpu_bo *bo, struct drm_mm_node *node)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct drm_mm *mm = node->mm;
	u64 start = node->start, size = node->size;

	drm_mm_remove_node(node);
	memset(&bo->node, 0, sizeof(bo->node));
	bo->node.start = start;
	bo->node.size = size;
	drm_WARN_ON(&qdev->drm, drm_mm_reserve_node(mm, &bo->node));
}

/* The books of a move: @bo is in segment @dst at @dst_node from now on. */
void qgpu_mm_book_move(struct qgpu_bo *bo, u32 dst,
		       struct drm_mm_node *dst_node)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	/* wherever it goes, it is not where an eviction for room put it */
	bo->evicted = false;
	if (bo->seg != QGPU_SEG_SYSTEM) {
		bool from_vram = bo->seg != QGPU_SEG_APERTURE;

		qgpu_seg_account(qdev, bo, false);
		if (drm_mm_node_allocated(&bo->node))
			drm_mm_remove_node(&bo->node);
		if (from_vram)
			bo->pristine = false;
	}
	bo->seg = dst;
	if (dst != QGPU_SEG_SYSTEM) {
		qgpu_mm_take_node(bo, dst_node);
		qgpu_seg_account(qdev, bo, true);
	}
	bo->lru_tick = ++qdev->lru_tick;
}

/*
 * A paging job for @bo: it runs behind every fence in @bo's reservation
 * object, and its fence goes there with kernel usage (what a CPU fault
 * waits for, and what every later user of the allocation waits for).
 * Called with mm_lock held; takes @bo's reservation lock alone, never
 * together with another one: mm_lock, then one reservation lock, is the
 * order everywhere in qgpu (a submission locks several, with drm_exec,
 * but only while it queues, and never pages then).
 */
int qgpu_mm_paging_begin(struct qgpu_bo *bo, struct qgpu_paging *pb)
{
	struct dma_resv *resv = bo->base.resv;
	int ret;

	dma_resv_lock(resv, NULL);
	ret = dma_resv_reserve_fences(resv, 1);
	if (!ret)
		ret = qgpu_paging_begin(to_qdev(bo->base.dev), pb);
	if (!ret) {
		ret = qgpu_paging_resv_deps(pb, resv, qgpu_bo_skip_client(bo));
		if (ret)
			qgpu_paging_abort(pb);
	}
	if (ret)
		dma_resv_unlock(resv);
	return ret;
}

/* Queue (or, on @err, drop) the paging job qgpu_mm_paging_begin() began. */
void qgpu_mm_paging_end(struct qgpu_bo *bo, struct qgpu_paging *pb,
			int err)
{
	struct dma_resv *resv = bo->base.resv;
	struct dma_fence *f;

	if (err) {
		qgpu_paging_abort(pb);
	} else {
		f = qgpu_paging_submit(pb);
		if (f)
			dma_resv_add_fence(resv, f, DMA_RESV_USAGE_KERNEL);
		dma_fence_put(f);
	}
	dma_resv_unlock(resv);
}

/*
 * I/O coherency ("Allocation Usage Tracking"): on a device that does not
 * snoop the CPU caches, the kernel's own moves of a cached allocation
 * between VRAM and its system pages keep the caches in step, as the
 * user-mode driver's InvalidateCache calls do for its own accesses.
 * Before the device reads the pages, dirty lines are written back; before
 * it writes them, lines are invalidated, and again before the CPU next
 * maps them (@bo->cpu_stale, qgpu_mm_cpu_prepare()), since the CPU may
 * read them speculatively meanwhile. Moves between system memory and the
 * aperture segment copy nothing.
 */
static void qgpu_mm_move_caches(struct qgpu_bo *bo, u32 dst)
{
	bool from_sys = bo->seg == QGPU_SEG_SYSTEM ||
			bo->seg == QGPU_SEG_APERTURE;
	bool to_sys = dst == QGPU_SEG_SYSTEM || dst == QGPU_SEG_APERTURE;

	if (!(bo->flags & QGPU_GEM_CPU_CACHED) || bo->base.import_attach ||
	    !bo->pages || from_sys == to_sys ||
	    qgpu_hw_io_coherent(to_qdev(bo->base.dev)))
		return;
	drm_clflush_pages(bo->pages, bo->npages);
	if (to_sys) {
		bo->cpu_stale = true;
		bo->cpu_stale_moves++;
	}
}

/*
 * Move @bo to segment @dst (QGPU_SEG_SYSTEM for system memory) at
 * @dst_node, which the caller inserted into the destination's drm_mm.
 * @why: an enum qgpu_move_why, for the tracepoint.
 */
int qgpu_mm_move(struct qgpu_bo *bo, u32 dst,
		 struct drm_mm_node *dst_node, u32 why)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	bool discard = qgpu_mm_discards(bo, dst);
	struct qgpu_paging pb;
	int ret;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	if (qgpu_plan_dry(qdev)) {
		/*
		 * The books only: where it goes, nothing paged. The backing
		 * pages are taken now (they are kept anyway), so that the
		 * replay does not fail for want of them.
		 */
		ret = qgpu_bo_backing(bo);
		if (!ret)
			ret = qgpu_plan_save(qdev, bo);
		if (ret)
			return ret;
		qgpu_mm_book_move(bo, dst, dst_node);
		return 0;
	}
	ret = qgpu_bo_backing(bo);
	if (ret)
		return ret;
	qgpu_mm_zap(bo);
	qgpu_mm_move_caches(bo, dst);
	ret = qgpu_mm_paging_begin(bo, &pb);
	if (ret)
		return ret;
	ret = qgpu_mm_build_move(&pb, bo, dst, dst_node);
	qgpu_mm_paging_end(bo, &pb, ret);
	if (ret)
		return ret;
	trace_qgpu_move(bo, bo->seg, dst, (u64)bo->npages << PAGE_SHIFT,
			bo->id, why, dst_node ? dst_node->start : 0,
			(dst == QGPU_SEG_VISIBLE || dst == QGPU_SEG_LOCAL) &&
			bo->pristine);
	if (discard) {
		bo->discarded = true;
		qgpu_stat_add(qdev, qdev->mm_requester,
			      QGPU_STAT(offer_discards), 1);
		qgpu_stat_add(qdev, qdev->mm_requester,
			      QGPU_STAT(offer_discarded_bytes),
			      (u64)bo->npages << PAGE_SHIFT);
	}
	qgpu_mm_book_move(bo, dst, dst_node);
	/* its uses count from its arrival (the gdsf policy's frequency) */
	bo->uses = 0;
	return 0;
}

/*
 * qgpu_mm_move() into @node, a range the caller has just taken in @dst's
 * drm_mm for @bo; when the move fails the range is given back.
 */
int qgpu_mm_move_into(struct qgpu_bo *bo, u32 dst, struct drm_mm_node *node,
		      u32 why)
{
	int ret = qgpu_mm_move(bo, dst, node, why);

	if (ret)
		drm_mm_remove_node(node);
	return ret;
}
