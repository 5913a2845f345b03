// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the video memory manager. Segments, residency, eviction and moves.
 * All content moves through paging buffers on the paging engine; the CPU
 * never copies VRAM. Everything here runs under qdev->mm_lock.
 */
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_drv.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_paging.h"
#include "qgpu_plan.h"
#include "qgpu_policy.h"

#define QGPU_WAIT_MS	10000

static struct qgpu_segment *qgpu_seg(struct qgpu_device *qdev, u32 id)
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
	if (!(qdev->caps & QGPU_CAP_PAGING) || !(qdev->caps & QGPU_CAP_GART) ||
	    qdev->gart_size < 2 * QGPU_PBUF_SIZE || qdev->visible_size < SZ_1M) {
		drm_err(&qdev->drm, "device lacks paging engine, GART or VRAM\n");
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

/* Acquire and DMA-map the system-memory backing store. */
int qgpu_bo_backing(struct qgpu_bo *bo)
{
	struct device *dev = bo->base.dev->dev;
	struct page **pages;
	u32 i;

	if (bo->pages)
		return 0;
	pages = drm_gem_get_pages(&bo->base);
	if (IS_ERR(pages))
		return PTR_ERR(pages);
	bo->dma = kvmalloc_array(bo->npages, sizeof(*bo->dma), GFP_KERNEL);
	if (!bo->dma)
		goto err_put;
	for (i = 0; i < bo->npages; i++) {
		bo->dma[i] = dma_map_page(dev, pages[i], 0, PAGE_SIZE,
					  DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dev, bo->dma[i]))
			goto err_unmap;
	}
	bo->pages = pages;
	return 0;

err_unmap:
	while (i--)
		dma_unmap_page(dev, bo->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	kvfree(bo->dma);
	bo->dma = NULL;
err_put:
	drm_gem_put_pages(&bo->base, pages, false, false);
	return -ENOMEM;
}

void qgpu_bo_release_backing(struct qgpu_bo *bo)
{
	struct device *dev = bo->base.dev->dev;
	u32 i;

	if (!bo->pages)
		return;
	if (bo->sgt) {
		/* the exporter's pages: only our arrays are ours */
		kvfree(bo->dma);
		kvfree(bo->pages);
		bo->dma = NULL;
		bo->pages = NULL;
		return;
	}
	for (i = 0; i < bo->npages; i++)
		dma_unmap_page(dev, bo->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	kvfree(bo->dma);
	bo->dma = NULL;
	drm_gem_put_pages(&bo->base, bo->pages, true, true);
	bo->pages = NULL;
}

/* Drop every CPU mapping of @bo; the next access faults and re-resolves. */
void qgpu_mm_zap(struct qgpu_bo *bo)
{
	drm_vma_node_unmap(&bo->base.vma_node,
			   bo->base.dev->anon_inode->i_mapping);
	qgpu_hap_unmap(bo);
}

void qgpu_mm_touch(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	bo->lru_tick = ++qdev->lru_tick;
	if (bo->seg != QGPU_SEG_SYSTEM)
		list_move_tail(&bo->lru, &qdev->seg[bo->seg].lru);
}

static void qgpu_seg_account(struct qgpu_device *qdev, struct qgpu_bo *bo,
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

	if (dst_vram && bo->pristine) {
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
		qgpu_stat_add(qdev, qdev->mm_owner, stat, size);

	/* Out of the aperture: clear the GART entries. */
	if (src == QGPU_SEG_APERTURE)
		ret = qgpu_paging_unmap_aperture(pb, bo->node.start >> PAGE_SHIFT,
						 bo->npages);
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
static void qgpu_mm_book_move(struct qgpu_bo *bo, u32 dst,
			      struct drm_mm_node *dst_node)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

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

/**
 * qgpu_mm_restore - put @bo's books back where a plan's dry run found them
 * @bo: the allocation
 * @seg: segment id (QGPU_SEG_SYSTEM: not resident)
 * @start: node start in @seg
 * @size: node size
 *
 * The rollback undoes moves last first, so the range is free again.
 */
void qgpu_mm_restore(struct qgpu_bo *bo, u32 seg, u64 start, u64 size)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);

	if (bo->seg != QGPU_SEG_SYSTEM) {
		qgpu_seg_account(qdev, bo, false);
		if (drm_mm_node_allocated(&bo->node))
			drm_mm_remove_node(&bo->node);
	}
	bo->seg = seg;
	if (seg == QGPU_SEG_SYSTEM)
		return;
	memset(&bo->node, 0, sizeof(bo->node));
	bo->node.start = start;
	bo->node.size = size;
	if (drm_WARN_ON(&qdev->drm,
			drm_mm_reserve_node(&qdev->seg[seg].mm, &bo->node))) {
		bo->seg = QGPU_SEG_SYSTEM;
		return;
	}
	qgpu_seg_account(qdev, bo, true);
}

/*
 * Insert @node for @size bytes into @mm: a placement decision. The dry run
 * of a plan records it, the replay makes the same one.
 */
static int qgpu_mm_insert(struct qgpu_device *qdev, struct drm_mm *mm,
			  struct drm_mm_node *node, u64 size,
			  enum drm_mm_insert_mode mode)
{
	struct qgpu_plan_choice *c;
	int ret;

	if (qgpu_plan_replay(qdev)) {
		c = qgpu_plan_follow(qdev);
		if (!c || c->count)
			return -EIO;
		if (c->ret)
			return c->ret;
		node->start = c->start;
		node->size = size;
		return drm_mm_reserve_node(mm, node);
	}
	ret = drm_mm_insert_node_generic(mm, node, size, PAGE_SIZE, 0, mode);
	if (qgpu_plan_dry(qdev)) {
		int err = qgpu_plan_record(qdev, ret, ret ? 0 : node->start,
					   NULL, 0);

		if (err) {
			if (!ret)
				drm_mm_remove_node(node);
			return err;
		}
	}
	return ret;
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
static int qgpu_mm_paging_begin(struct qgpu_bo *bo, struct qgpu_paging *pb)
{
	struct dma_resv *resv = bo->base.resv;
	int ret;

	dma_resv_lock(resv, NULL);
	ret = dma_resv_reserve_fences(resv, 1);
	if (!ret)
		ret = qgpu_paging_begin(to_qdev(bo->base.dev), pb);
	if (!ret) {
		ret = qgpu_paging_resv_deps(pb, resv);
		if (ret)
			qgpu_paging_abort(pb);
	}
	if (ret)
		dma_resv_unlock(resv);
	return ret;
}

/* Queue (or, on @err, drop) the paging job qgpu_mm_paging_begin() began. */
static void qgpu_mm_paging_end(struct qgpu_bo *bo, struct qgpu_paging *pb,
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
 * Move @bo to segment @dst (QGPU_SEG_SYSTEM for system memory) at
 * @dst_node, which the caller inserted into the destination's drm_mm.
 */
static int qgpu_mm_move(struct qgpu_bo *bo, u32 dst,
			struct drm_mm_node *dst_node)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct qgpu_paging pb;
	int ret;

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
	ret = qgpu_mm_paging_begin(bo, &pb);
	if (ret)
		return ret;
	ret = qgpu_mm_build_move(&pb, bo, dst, dst_node);
	qgpu_mm_paging_end(bo, &pb, ret);
	if (ret)
		return ret;
	qgpu_mm_book_move(bo, dst, dst_node);
	return 0;
}

/* May @bo be committed to segment @id now? */
static int qgpu_mm_allowed(struct qgpu_bo *bo, u32 id)
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

static int qgpu_mm_evict_one(struct qgpu_bo *bo, bool to_system);
static int qgpu_mm_drop(struct qgpu_bo *bo);

/*
 * Choose the allocations to evict from @seg so that @size bytes fit: the
 * victim policy orders the unpinned ones, drm_mm's eviction scan says when
 * enough of them are chosen. Returns the victims in @out (*@n of them), or
 * -ENOSPC when evicting everything evictable would not help.
 */
static int qgpu_mm_pick_victims(struct qgpu_device *qdev,
				struct qgpu_segment *seg, u64 size,
				struct qgpu_bo *self, struct qgpu_bo ***out,
				u32 *n)
{
	struct qgpu_bo *bo, **victims;
	struct qgpu_victim *v;
	struct drm_mm_scan scan;
	u32 cand = 0, added, i;
	bool found = false;

	list_for_each_entry(bo, &seg->lru, lru)
		cand++;
	v = kvmalloc_array(cand ? cand : 1, sizeof(*v), GFP_KERNEL);
	victims = kvmalloc_array(cand ? cand : 1, sizeof(*victims), GFP_KERNEL);
	if (!v || !victims) {
		kvfree(v);
		kvfree(victims);
		return -ENOMEM;
	}
	cand = 0;
	list_for_each_entry(bo, &seg->lru, lru) {
		if (bo == self || bo->pin_count)
			continue;
		v[cand].size = bo->node.size;
		v[cand].last_use = bo->lru_tick;
		v[cand].offset = bo->node.start;
		v[cand].cookie = bo;
		cand++;
	}
	qgpu_policy_order(qdev->policy, v, cand);

	drm_mm_scan_init(&scan, &seg->mm, size, PAGE_SIZE, 0, 0);
	for (added = 0; added < cand && !found; added++)
		found = drm_mm_scan_add_block(&scan, &((struct qgpu_bo *)
						       v[added].cookie)->node);
	/* Every added block is removed again, last first. */
	*n = 0;
	for (i = added; i--;) {
		bo = v[i].cookie;
		if (drm_mm_scan_remove_block(&scan, &bo->node) && found)
			victims[(*n)++] = bo;
	}
	kvfree(v);
	if (!found) {
		kvfree(victims);
		return -ENOSPC;
	}
	*out = victims;
	return 0;
}

/*
 * Find room for @size bytes in @seg, evicting unpinned allocations chosen
 * by the victim policy. @self is never evicted.
 */
static int qgpu_mm_find_space(struct qgpu_device *qdev, struct qgpu_segment *seg,
			      u64 size, struct drm_mm_node *node,
			      struct qgpu_bo *self)
{
	struct qgpu_plan_choice *c;
	struct qgpu_bo **victims = NULL;
	u32 n = 0, i;
	int ret;

	ret = qgpu_mm_insert(qdev, &seg->mm, node, size, DRM_MM_INSERT_BEST);
	if (ret != -ENOSPC)
		return ret;
	if (size > seg->size - seg->reserved)
		return -ENOSPC;

	if (qgpu_plan_replay(qdev)) {
		c = qgpu_plan_follow(qdev);
		if (!c)
			return -EIO;
		ret = c->ret;
		if (!ret) {
			victims = qdev->plan->victims + c->first;
			n = c->count;
		}
	} else {
		ret = qgpu_mm_pick_victims(qdev, seg, size, self, &victims, &n);
		if (ret && ret != -ENOSPC)
			return ret;
		if (qgpu_plan_dry(qdev)) {
			int err = qgpu_plan_record(qdev, ret, 0, victims, n);

			if (err)
				ret = err;
		}
	}
	for (i = 0; !ret && i < n; i++)
		ret = qgpu_mm_evict_one(victims[i], false);
	if (!qgpu_plan_replay(qdev))
		kvfree(victims);
	if (ret)
		return ret;
	return qgpu_mm_insert(qdev, &seg->mm, node, size, DRM_MM_INSERT_EVICT);
}

/*
 * Evict @bo out of its VRAM segment: to the aperture segment when it
 * supports one and there is room, else to system memory.
 */
static int qgpu_mm_evict_one(struct qgpu_bo *bo, bool to_system)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct drm_mm_node node = {};
	u64 size = (u64)bo->npages << PAGE_SHIFT;
	int ret;

	if (bo->seg == QGPU_SEG_SYSTEM)
		return 0;
	if (bo->dead)
		return qgpu_mm_drop(bo);
	if (!to_system && bo->seg != QGPU_SEG_APERTURE &&
	    !qgpu_mm_allowed(bo, QGPU_SEG_APERTURE) &&
	    !qgpu_mm_insert(qdev, &qdev->seg[QGPU_SEG_APERTURE].mm, &node,
			    size, DRM_MM_INSERT_BEST)) {
		ret = qgpu_mm_move(bo, QGPU_SEG_APERTURE, &node);
		if (ret)
			drm_mm_remove_node(&node);
	} else {
		ret = qgpu_mm_move(bo, QGPU_SEG_SYSTEM, NULL);
	}
	if (!ret && !qgpu_plan_dry(qdev))
		qgpu_stat_add(qdev, qdev->mm_owner, QGPU_STAT(evictions), 1);
	return ret;
}

int qgpu_mm_evict(struct qgpu_bo *bo, bool to_system)
{
	if (bo->pin_count)
		return -EBUSY;
	if (bo->seg == QGPU_SEG_APERTURE && !to_system)
		return 0;
	return qgpu_mm_evict_one(bo, to_system);
}

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
	ret = qgpu_mm_move(bo, id, &node);
	if (ret)
		drm_mm_remove_node(&node);
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
	u32 order[QGPU_SEG_MAX + 4];
	unsigned int n = 0, i;
	int ret = -ENOSPC, r;

	if (seg)
		return qgpu_mm_place(bo, seg);
	if (bo->seg != QGPU_SEG_SYSTEM)
		return 0;
	for (i = 0; i < ARRAY_SIZE(bo->preferred) && bo->preferred[i]; i++)
		order[n++] = bo->preferred[i];
	for (i = QGPU_SEG_VISIBLE; i <= QGPU_SEG_MAX; i++)
		if (bo->segment_mask & BIT(i))
			order[n++] = i;
	for (i = 0; i < n; i++) {
		r = qgpu_mm_place(bo, order[i]);
		if (!r)
			return 0;
		if (r != -ENOSPC && r != -EBUSY && r != -EINVAL)
			return r;
		if (r == -EBUSY)
			ret = r;
	}
	return ret;
}

/*
 * Give back the segment range of a destroyed allocation. The range is
 * reused only behind the allocation's last GPU work: a paging job that
 * waits for it (and clears the GART entries of an aperture range) is
 * queued first, and the paging engine runs jobs in order, so whatever is
 * placed there next is written only after that work is done. Nothing here
 * waits. The backing pages are freed by the caller once every fence in the
 * allocation's reservation object (that job's among them) has signalled.
 */
static int qgpu_mm_drop(struct qgpu_bo *bo)
{
	struct qgpu_device *qdev = to_qdev(bo->base.dev);
	struct qgpu_paging pb;
	int idx, ret = 0;

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
 * without CPU access is never mapped onto VRAM; it is first moved to the
 * aperture segment or system memory. A CPU-accessible allocation maps
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
	if (vram && !(bo->flags & QGPU_GEM_CPU_ACCESS)) {
		if (bo->pin_count)
			return -EBUSY;
		ret = qgpu_mm_evict_one(bo, false);
		if (ret)
			return ret;
	} else if (bo->seg == QGPU_SEG_LOCAL && qgpu_hap_map(bo)) {
		ret = qgpu_mm_evict_one(bo, false);
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
		break;
	}
	bo->pristine = false;
	return 0;
}

void qgpu_mm_segment_stats(struct qgpu_device *qdev,
			   struct drm_qgpu_segment_stats *st, u32 *n)
{
	u32 id;

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
