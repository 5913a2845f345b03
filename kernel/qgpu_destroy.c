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
#include "qgpu_resv.h"
#include "qgpu_vm.h"

/*
 * Give back the segment range of a destroyed allocation. The range is
 * reused only behind the allocation's last GPU work: a paging job that
 * waits for it (and clears the GART entries of an aperture range) is
 * queued first, and the paging engine runs jobs in order, so whatever is
 * placed there next is written only after that work is done. Nothing here
 * waits. The backing pages are freed by the caller once every fence in the
 * allocation's reservation object (that job's among them) has signalled.
 *
 * With @discard, a VRAM range is also given back to the host: that job
 * DISCARDs it (docs/hw-spec.md section 19). Whatever is placed there next
 * gets its content by a later paging job (a new allocation is zero-filled,
 * which costs the host nothing on discarded pages; a move copies), so the
 * discard never loses data. An eviction of a dead allocation does not
 * discard: the range is taken at once by what needed the room.
 */
static bool qgpu_drop_vram(struct qgpu_bo *bo)
{
	return bo->seg == QGPU_SEG_VISIBLE || bo->seg == QGPU_SEG_LOCAL;
}

static int qgpu_mm_drop_range(struct qgpu_bo *bo, bool discard)
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
			else if (discard && qgpu_drop_vram(bo))
				ret = qgpu_paging_discard(&pb, bo->node.size,
							  qgpu_bo_gpu_addr(bo));
			if (!ret)
				ret = qgpu_paging_nop(&pb);
			qgpu_mm_paging_end(bo, &pb, ret);
		}
		drm_dev_exit(idx);
		if (ret)
			return ret;
		if (discard && qgpu_drop_vram(bo)) {
			qgpu_stat_add(qdev, NULL, QGPU_STAT(vram_discards), 1);
			qgpu_stat_add(qdev, NULL, QGPU_STAT(vram_discarded_bytes),
				      bo->node.size);
		}
	}
	qgpu_seg_account(qdev, bo, false);
	if (drm_mm_node_allocated(&bo->node))
		drm_mm_remove_node(&bo->node);
	bo->seg = QGPU_SEG_SYSTEM;
	return 0;
}

/* An eviction of a dead allocation: the range is reused at once. */
int qgpu_mm_drop(struct qgpu_bo *bo)
{
	return qgpu_mm_drop_range(bo, false);
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
	return qgpu_mm_drop_range(bo, true);
}

/**
 * struct qgpu_destroy_unmap - a destroyed allocation's mappings, unmapped
 *	once the work queued before the destroy is done
 * @work: on the reap workqueue
 * @vm: the destroying file's address space (a reference)
 * @obj: the allocation (a reference: its memory stays while mapped)
 * @seq: the last VM_MAP before the destroy: a mapping made after it (the
 *	allocation got back through its dma-buf) is not the destroy's
 * @fences: qgpu's own work in the allocation at the destroy (references)
 * @nfences: their number
 * @vm_fences: the address space's DMA buffers not done at the destroy
 *	(references): one queued before the allocation was mapped reaches it
 *	through the mapping, and its fence is not in the allocation
 * @nvm_fences: their number
 *
 * Only the work queued before the destroy is waited for: a DMA buffer
 * queued later in the address space (where the allocation is still
 * mapped) adds its fence too, and a worker that waited for those as well
 * could be kept from unmapping, and from freeing, for as long as the
 * process kept submitting.
 */
struct qgpu_destroy_unmap {
	struct work_struct work;
	struct qgpu_vm *vm;
	struct drm_gem_object *obj;
	u64 seq;
	struct dma_fence **fences;
	unsigned int nfences;
	struct dma_fence **vm_fences;
	unsigned int nvm_fences;
};

static void qgpu_destroy_unmap_work(struct work_struct *work)
{
	struct qgpu_destroy_unmap *d = container_of(work, typeof(*d), work);
	struct qgpu_device *qdev = d->vm->qdev;

	/* outside every lock: the DMA buffers queued on it until the destroy */
	qgpu_resv_wait_fences(d->fences, d->nfences);
	qgpu_resv_wait_fences(d->vm_fences, d->nvm_fences);
	/* out of memory: the mappings stay until the file is closed */
	if (qgpu_vm_unmap_bo(d->vm, d->obj, d->seq))
		drm_dbg(&qdev->drm, "destroy: deferred unmap incomplete\n");
	drm_gem_object_put(d->obj);
	qgpu_vm_put(d->vm);
	kfree(d);
}

/*
 * The destroying file's mappings of @obj: with @assume_not_in_use unmapped
 * now, else once the work queued so far is done (never waited for here).
 */
static int qgpu_destroy_mappings(struct qgpu_file *qf,
				 struct drm_gem_object *obj,
				 bool assume_not_in_use)
{
	struct qgpu_vm *vm = qgpu_vm_peek(qf);
	struct qgpu_destroy_unmap *d;
	int ret;

	if (!vm)
		return 0;
	if (assume_not_in_use) {
		ret = qgpu_vm_unmap_bo(vm, obj, U64_MAX);
		qgpu_vm_put(vm);
		return ret;
	}
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	ret = d ? qgpu_resv_own_now(qf->qdev, obj->resv, &d->fences,
				    &d->nfences) : -ENOMEM;
	if (!ret) {
		ret = qgpu_resv_own_now(qf->qdev, drm_gpuvm_resv(&vm->gpuvm),
					&d->vm_fences, &d->nvm_fences);
		if (ret)
			qgpu_resv_wait_fences_put(d->fences, d->nfences);
	}
	if (ret) {
		kfree(d);
		qgpu_vm_put(vm);
		return ret;
	}
	drm_gem_object_get(obj);
	d->obj = obj;
	d->vm = vm;
	d->seq = qgpu_vm_map_seq(vm);
	INIT_WORK(&d->work, qgpu_destroy_unmap_work);
	queue_work(qf->qdev->reap_wq, &d->work);
	return 0;
}

/**
 * qgpu_gem_destroy_ioctl - DRM_IOCTL_QGPU_GEM_DESTROY
 * @drm: device
 * @data: &struct drm_qgpu_gem_destroy
 * @file: the caller
 *
 * DestroyAllocation2 ("Allocation Usage Tracking", WDK): returns at once.
 * The handle goes; the allocation's mappings in the caller's address space
 * go behind the work queued before the destroy, or at once with
 * AssumeNotInUse; the memory is released after the work that may still
 * reach it (qgpu_bo_wait_usage()).
 */
int qgpu_gem_destroy_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_destroy *args = data;
	bool assume = args->flags & QGPU_GEM_DESTROY_ASSUME_NOT_IN_USE;
	struct drm_gem_object *obj;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_GEM_DESTROY_FLAGS))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !obj))
		return -ENOENT;
	/*
	 * Before the unmap: a VM_MAP that comes after it, even before the
	 * handle goes, clears it again (qgpu_vm_insert()).
	 */
	if (assume)
		WRITE_ONCE(to_qbo(obj)->assume_client, file->client_id);
	ret = qgpu_destroy_mappings(file->driver_priv, obj, assume);
	if (!ret)
		ret = drm_gem_handle_delete(file, args->handle);
	/* mappings may be left: nothing may be skipped */
	if (ret && assume)
		WRITE_ONCE(to_qbo(obj)->assume_client, 0);
	drm_gem_object_put(obj);
	return ret;
}
