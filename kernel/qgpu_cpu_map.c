// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: CPU access to allocations, Lock2 and Unlock2 ("Allocation Usage
 * Tracking", WDK). A CPU mapping follows its allocation: every move zaps
 * the PTEs and the next access faults in the pages of the allocation's
 * current medium (BAR2, host aperture or system pages) at the same
 * virtual address; a fault waits only for a move in flight. The page
 * protection: cached for a QGPU_GEM_CPU_CACHED allocation's system pages,
 * write-combined for every other mapping. InvalidateCache (the I/O
 * coherency part of "Allocation Usage Tracking") is here too.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <drm/drm_cache.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"

/**
 * qgpu_bo_cpu_caching - the caching of a CPU mapping of @bo
 * @bo: the allocation
 * @path: how the mapping reaches it (QGPU_CPU_PATH_*)
 *
 * Cached only for a QGPU_GEM_CPU_CACHED allocation's own system pages;
 * BAR2 and the host aperture (VRAM) are never mapped cacheable, and the
 * system pages of any other allocation are write-combined.
 *
 * Return: a QGPU_CPU_CACHING_* value.
 */
u32 qgpu_bo_cpu_caching(struct qgpu_bo *bo, u32 path)
{
	if (path == QGPU_CPU_PATH_NONE || bo->base.import_attach)
		return QGPU_CPU_CACHING_NONE;
	if (path == QGPU_CPU_PATH_SYSTEM && bo->flags & QGPU_GEM_CPU_CACHED)
		return QGPU_CPU_CACHING_CACHED;
	return QGPU_CPU_CACHING_WC;
}

/*
 * Wait for a move in flight (kernel-usage fences) without holding any lock
 * of qgpu's, nor the fault's own (mmap_lock or the VMA's) where the fault
 * may be retried, so that the process's other threads map and unmap
 * meanwhile; then fault again.
 */
static vm_fault_t qgpu_gem_fault_wait(struct vm_fault *vmf,
				      struct drm_gem_object *obj)
{
	vm_fault_t retry = VM_FAULT_NOPAGE;
	long t;

	if (fault_flag_allow_retry_first(vmf->flags)) {
		if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
			return VM_FAULT_RETRY;
		/* the mapping's reference may go with the lock */
		drm_gem_object_get(obj);
		release_fault_lock(vmf);
		retry = VM_FAULT_RETRY;
	}
	t = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_KERNEL, true,
				  msecs_to_jiffies(QGPU_JOB_TIMEOUT_MS));
	if (retry == VM_FAULT_RETRY) {
		drm_gem_object_put(obj);
		return VM_FAULT_RETRY;
	}
	/* Interrupted or still moving: the access simply faults again. */
	return t < 0 && t != -ERESTARTSYS ? VM_FAULT_SIGBUS : VM_FAULT_NOPAGE;
}

/* Pages one fault maps (4 MiB) */
#define QGPU_FAULT_PAGES	(SZ_4M >> PAGE_SHIFT)

static vm_fault_t qgpu_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct qgpu_bo *bo = to_qbo(obj);
	struct qgpu_device *qdev = to_qdev(obj->dev);
	unsigned long first = vma->vm_pgoff - drm_vma_node_start(&obj->vma_node);
	unsigned long addr, i, npages = vma_pages(vma);
	vm_fault_t ret = VM_FAULT_NOPAGE;
	bool moving;
	pgprot_t prot;
	u32 path;
	int idx, err;

	if (!drm_dev_enter(obj->dev, &idx))
		return VM_FAULT_SIGBUS;
	qgpu_mm_lock(qdev, NULL);
	/* a lost device's books are not to be trusted (qgpu_lost.c) */
	err = qdev->lost ? -EIO : qgpu_mm_cpu_prepare(bo, &path, &moving);
	trace_qgpu_cpu_fault(bo->id, vmf->flags & FAULT_FLAG_WRITE, err,
			     !err && moving);
	if (err) {
		ret = err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
		goto out;
	}
	if (moving) {
		qgpu_mm_unlock(qdev);
		drm_dev_exit(idx);
		return qgpu_gem_fault_wait(vmf, obj);
	}
	qgpu_mm_touch(bo);
	prot = vm_get_page_prot(vma->vm_flags);
	if (qgpu_bo_cpu_caching(bo, path) != QGPU_CPU_CACHING_CACHED)
		prot = pgprot_writecombine(prot);
	/*
	 * Map the 4 MiB of the VMA around the fault now: one fault per
	 * 4 MiB per move, and a bounded time under mm_lock however large
	 * the allocation.
	 */
	i = ALIGN_DOWN((vmf->address - vma->vm_start) >> PAGE_SHIFT,
		       QGPU_FAULT_PAGES);
	npages = min(npages, i + QGPU_FAULT_PAGES);
	for (addr = vma->vm_start + (i << PAGE_SHIFT); i < npages;
	     i++, addr += PAGE_SIZE) {
		unsigned long pg = first + i, pfn;

		if (pg >= bo->npages)
			break;
		if (path == QGPU_CPU_PATH_BAR)
			pfn = ((qdev->vram_bar + qgpu_bo_gpu_addr(bo)) >>
			       PAGE_SHIFT) + pg;
		else if (path == QGPU_CPU_PATH_HAP)
			pfn = (qdev->hap_bar >> PAGE_SHIFT) +
			      qgpu_hap_page(bo, pg);
		else
			pfn = page_to_pfn(bo->pages[pg]);
		ret = vmf_insert_pfn_prot(vma, addr, pfn, prot);
		if (ret & VM_FAULT_ERROR)
			break;
		ret = VM_FAULT_NOPAGE;
	}
out:
	qgpu_mm_unlock(qdev);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct qgpu_gem_vm_ops = {
	.fault = qgpu_gem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

int qgpu_gem_mmap(struct drm_gem_object *obj,
		  struct vm_area_struct *vma)
{
	int ret;

	if (obj->import_attach) {
		/* another device's buffer: its exporter maps it */
		vma->vm_private_data = NULL;
		vma->vm_ops = NULL;
		/*
		 * Not obj->dma_buf: closing the last handle meanwhile clears
		 * it; the attachment holds the dma-buf for the object's life.
		 */
		ret = dma_buf_mmap(obj->import_attach->dmabuf, vma, 0);
		/* the exporter's mapping holds its own reference */
		if (!ret)
			drm_gem_object_put(obj);
		return ret;
	}
	/* PFNs cannot back a copy-on-write mapping (vmf_insert_pfn_prot()) */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &qgpu_gem_vm_ops;
	return 0;
}

/*
 * A file's Lock2s of one allocation: an allocation's lock count is the sum
 * of its files' (&qgpu_file.locks, by allocation id), so that a file
 * unlocks only what it locked and its locks end with its last handle of
 * the allocation (GEM_CLOSE of it, or the file closed): a process that
 * imported a shared allocation and locked it cannot keep it out of VRAM
 * for its creator once it let go of it. A file may hold several handles
 * of one allocation (GEM_OPEN of its flink name): closing one of them
 * ends nothing. The record holds a reference to the allocation, so that
 * the file's close can give its counts back.
 */
struct qgpu_lock_ref {
	u32 count;
	struct qgpu_bo *bo;
};

/* Does a handle of @file still name @obj? (one being deleted does not) */
static bool qgpu_file_names(struct drm_file *file, struct drm_gem_object *obj)
{
	struct drm_gem_object *o;
	bool found = false;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, o, id) {
		if (o == obj) {
			found = true;
			break;
		}
	}
	spin_unlock(&file->table_lock);
	return found;
}

/* Drop a record taken out of &qgpu_file.locks; not under mm_lock */
static void qgpu_lock_ref_free(struct qgpu_lock_ref *ref)
{
	if (!ref)
		return;
	drm_gem_object_put(&ref->bo->base);
	kfree(ref);
}

/**
 * qgpu_gem_close - a file's handle of @obj goes (&drm_gem_object_funcs.close)
 * @obj: the allocation
 * @file: the file
 *
 * With the file's last handle of it, the file's Lock2s of it end. GEM_CLOSE
 * takes the handle out of the file's table before this; when the whole
 * file closes, its handles are all still there, and
 * qgpu_gem_file_locks_fini() ends its locks instead.
 */
void qgpu_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;
	struct qgpu_bo *bo = to_qbo(obj);
	struct qgpu_lock_ref *ref;

	if (!qf || !xa_load(&qf->locks, bo->id) || qgpu_file_names(file, obj))
		return;
	qgpu_mm_lock(qf->qdev, NULL);
	ref = xa_erase(&qf->locks, bo->id);
	if (ref)
		bo->lock_count -= ref->count;
	qgpu_mm_unlock(qf->qdev);
	qgpu_lock_ref_free(ref);
}

/* The file is closed: the locks its handles held end */
void qgpu_gem_file_locks_fini(struct qgpu_file *qf)
{
	struct qgpu_lock_ref *ref;
	unsigned long id;

	qgpu_mm_lock(qf->qdev, NULL);
	xa_for_each(&qf->locks, id, ref)
		ref->bo->lock_count -= ref->count;
	qgpu_mm_unlock(qf->qdev);
	xa_for_each(&qf->locks, id, ref)
		qgpu_lock_ref_free(ref);
	xa_destroy(&qf->locks);
}

/* Does @handle still name @bo in @file? (its .close comes after) */
static bool qgpu_handle_is(struct drm_file *file, u32 handle,
			   struct qgpu_bo *bo)
{
	bool same;

	spin_lock(&file->table_lock);
	same = idr_find(&file->object_idr, handle) == &bo->base;
	spin_unlock(&file->table_lock);
	return same;
}

/* The file's lock record of @bo, made if @create; under mm_lock */
static struct qgpu_lock_ref *qgpu_lock_ref(struct qgpu_file *qf,
					   struct qgpu_bo *bo, bool create)
{
	struct qgpu_lock_ref *ref = xa_load(&qf->locks, bo->id);

	if (ref || !create)
		return ref;
	ref = kzalloc(sizeof(*ref), GFP_KERNEL);
	if (!ref)
		return NULL;
	if (xa_err(xa_store(&qf->locks, bo->id, ref, GFP_KERNEL))) {
		kfree(ref);
		return NULL;
	}
	/* not the last reference: the caller holds its lookup's */
	drm_gem_object_get(&bo->base);
	ref->bo = bo;
	return ref;
}

int qgpu_gem_lock_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_lock *args = data;
	struct qgpu_lock_ref *ref = NULL;
	struct qgpu_bo *bo;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags))
		return -EINVAL;	/* Lock2: reserved flag bits must be 0 */
	bo = qgpu_bo_lookup(file, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !bo))
		return -ENOENT;
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_LOCK, bo->id, 0);
	/*
	 * "Allocation Usage Tracking": a non-CPU-accessible allocation is
	 * locked through the aperture segment or while in system memory; a
	 * cached CPU-accessible one only in the aperture segment or when not
	 * resident (unless all of VRAM is CPU-visible): it is moved out of
	 * VRAM, to the aperture segment if its set has it, else to system
	 * memory (CPU access guarantees it may go there).
	 * OfferAllocations: an offered allocation is reclaimed first.
	 */
	if (QGPU_IOCTL_DBG(qdev, bo->offered))
		ret = -EINVAL;
	if (!ret && qgpu_bo_lock_outside_vram(bo) &&
	    (bo->seg == QGPU_SEG_VISIBLE || bo->seg == QGPU_SEG_LOCAL)) {
		if (bo->segment_mask & BIT(QGPU_SEG_APERTURE) ||
		    bo->flags & QGPU_GEM_CPU_ACCESS)
			ret = qgpu_mm_evict(bo, false, QGPU_WHY_CPU);
		else
			ret = -EBUSY;
	}
	if (!ret && bo->lock_count == U32_MAX)
		ret = -EOVERFLOW;
	/* a GEM_CLOSE meanwhile ended the file's locks of it: none now */
	if (!ret && !qgpu_handle_is(file, args->handle, bo))
		ret = -ENOENT;
	if (!ret) {
		ref = qgpu_lock_ref(file->driver_priv, bo, true);
		if (!ref)
			ret = -ENOMEM;
	}
	if (!ret) {
		ref->count++;
		bo->lock_count++;
		args->offset = drm_vma_node_offset_addr(&bo->base.vma_node);
	}
	qgpu_mm_unlock(qdev);
	drm_gem_object_put(&bo->base);
	return ret;
}

int qgpu_gem_unlock_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_unlock *args = data;
	struct qgpu_file *qf = file->driver_priv;
	struct qgpu_lock_ref *ref;
	struct qgpu_bo *bo;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags))
		return -EINVAL;
	bo = qgpu_bo_lookup(file, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !bo))
		return -ENOENT;
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_UNLOCK, bo->id, 0);
	/* only what this file locked */
	ref = qgpu_lock_ref(qf, bo, false);
	if (QGPU_IOCTL_DBG(qdev, !ref)) {
		ret = -EINVAL;
	} else {
		ref->count--;
		bo->lock_count--;
		if (!ref->count)
			xa_erase(&qf->locks, bo->id);
		else
			ref = NULL;
	}
	qgpu_mm_unlock(qdev);
	qgpu_lock_ref_free(ref);
	drm_gem_object_put(&bo->base);
	return ret;
}

/* Pages InvalidateCache flushes per hold of mm_lock (4 MiB) */
#define QGPU_FLUSH_PAGES	1024u

/*
 * Whether the system pages of @bo hold its content now and CPU mappings of
 * them are cacheable (what InvalidateCache has to flush). Under mm_lock.
 */
static bool qgpu_bo_flushable(struct qgpu_bo *bo)
{
	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
	return (bo->flags & QGPU_GEM_CPU_CACHED) && !bo->base.import_attach &&
	       bo->pages &&
	       (bo->seg == QGPU_SEG_SYSTEM || bo->seg == QGPU_SEG_APERTURE);
}

/**
 * qgpu_invalidate_cache_ioctl - InvalidateCache ("Allocation Usage
 *	Tracking", I/O coherency)
 * @drm: the DRM device
 * @data: &struct drm_qgpu_invalidate_cache
 * @file: the caller's file
 *
 * Writes back and invalidates the CPU cache lines of a range of a cached
 * allocation's system pages, once a move of it in flight is done. What
 * there is nothing to do for (write-combined, in VRAM, imported, no pages
 * yet) returns 0 and counts nothing. The range is flushed in pieces of
 * %QGPU_FLUSH_PAGES, each under mm_lock after any move begun meanwhile,
 * so that a flush of gigabytes never holds the memory manager's lock for
 * longer than one piece.
 *
 * Return: 0, -EINVAL, -ENOENT, -EINTR, -ENODEV.
 */
int qgpu_invalidate_cache_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_invalidate_cache *args = data;
	struct qgpu_bo *bo;
	u64 end, bytes = 0;
	u32 first, left, n, moves = 0;
	bool whole;
	long t;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags))
		return -EINVAL;
	if (QGPU_IOCTL_DBG(qdev, !args->size || !PAGE_ALIGNED(args->offset) ||
			   !PAGE_ALIGNED(args->size) ||
			   check_add_overflow(args->offset, args->size, &end)))
		return -EINVAL;
	bo = qgpu_bo_lookup(file, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !bo))
		return -ENOENT;
	if (QGPU_IOCTL_DBG(qdev, end > bo->base.size)) {
		ret = -EINVAL;
		goto out;
	}
	first = args->offset >> PAGE_SHIFT;
	left = args->size >> PAGE_SHIFT;
	whole = !first && left == bo->npages;
next:
	for (;;) {
		/*
		 * A move in flight writes the pages: flush after it. In
		 * slices: a removal of the device waits for this ioctl (it
		 * runs inside drm_dev_enter()) before it ends what the move
		 * may still wait for.
		 */
		t = dma_resv_wait_timeout(bo->base.resv, DMA_RESV_USAGE_KERNEL,
					  true, msecs_to_jiffies(100));
		if (t < 0) {
			ret = t == -ERESTARTSYS ? -EINTR : t;
			goto count;
		}
		if (!t) {
			if (drm_dev_is_unplugged(drm)) {
				ret = -ENODEV;
				goto count;
			}
			continue;
		}
		qgpu_mm_lock(qdev, NULL);
		if (dma_resv_test_signaled(bo->base.resv,
					   DMA_RESV_USAGE_KERNEL))
			break;
		qgpu_mm_unlock(qdev);
	}
	if (!qgpu_bo_flushable(bo)) {
		left = 0;
	} else {
		if (!bytes)
			moves = bo->cpu_stale_moves;
		n = min(left, QGPU_FLUSH_PAGES);
		/* through the kernel's mapping of each page (kmap_local) */
		drm_clflush_pages(bo->pages + first, n);
		bytes += (u64)n << PAGE_SHIFT;
		first += n;
		left -= n;
		/*
		 * The whole allocation, with no move out of VRAM since the
		 * first piece: what a move wrote behind the caches is
		 * flushed (a call that ends early clears nothing)
		 */
		if (!left && whole && moves == bo->cpu_stale_moves)
			bo->cpu_stale = false;
	}
	if (left) {
		qgpu_mm_unlock(qdev);
		cond_resched();
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto count;
		}
		goto next;
	}
	trace_qgpu_invalidate_cache(bo, bo->seg, args->offset, args->size,
				    bytes);
	qgpu_mm_unlock(qdev);
count:
	if (bytes) {
		qgpu_stat_add(qdev, file->driver_priv,
			      QGPU_STAT(cache_invalidations), 1);
		qgpu_stat_add(qdev, file->driver_priv,
			      QGPU_STAT(cache_invalidated_bytes), bytes);
	}
out:
	drm_gem_object_put(&bo->base);
	return ret;
}
