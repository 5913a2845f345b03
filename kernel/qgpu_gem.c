// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: allocations as GEM objects. Creation (GEM_CREATE, dumb buffers),
 * residency requests (GEM_RESIDE), GEM_INFO, and their destruction, which
 * is deferred until qgpu's work on them is done. CPU mappings and Lock2
 * are in qgpu_cpu_map.c, dma-buf sharing in qgpu_prime.c.
 */
#include <linux/delay.h>
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_resv.h"
#include "qgpu_trace.h"

/*
 * Deferred destruction, second half: runs once the allocation's queued GPU
 * work is done. Waits only in this worker, never under mm_lock.
 */
static void qgpu_gem_reap(struct work_struct *work)
{
	struct qgpu_bo *bo = container_of(work, struct qgpu_bo, reap);
	struct drm_gem_object *obj = &bo->base;
	struct qgpu_device *qdev = to_qdev(obj->dev);
	int ret;

	qgpu_resv_wait_own(qdev, obj->resv, qgpu_bo_skip_client(bo));
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_REAP, bo->id, 0);
	ret = qgpu_mm_bo_reap(bo);
	qgpu_mm_unlock(qdev);
	if (ret) {
		/* the GART still maps its pages: try again later */
		msleep(20);
		queue_work(qdev->reap_wq, &bo->reap);
		return;
	}
	/* the GART entries of its pages are cleared before they are freed */
	qgpu_resv_wait_own(qdev, obj->resv, qgpu_bo_skip_client(bo));

	qgpu_bo_release_backing(bo);
	kvfree(bo->hap_runs);
	if (obj->import_attach)
		drm_prime_gem_destroy(obj, bo->sgt);
	drm_gem_free_mmap_offset(obj);
	drm_gem_object_release(obj);
	qgpu_vidmem_put(bo->owner);
	kfree(bo);
	/* may be the device's last reference (qgpu_reap_wq outlives it) */
	drm_dev_put(&qdev->drm);
}

static void qgpu_gem_free(struct drm_gem_object *obj)
{
	struct qgpu_bo *bo = to_qbo(obj);
	struct qgpu_device *qdev = to_qdev(obj->dev);
	bool idle;

	qgpu_mm_lock(qdev, NULL);
	qgpu_mm_bo_gone(bo);
	idle = qgpu_resv_own_idle(qdev, obj->resv, qgpu_bo_skip_client(bo));
	trace_qgpu_bo_destroy(bo, bo->seg, !idle, bo->id);
	/* idle: its range is free at once (the pages, after any GART unmap) */
	if (idle)
		qgpu_mm_bo_reap(bo);
	qgpu_mm_unlock(qdev);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocations), -1);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocated_bytes),
		      -(s64)obj->size);
	/* a GEM object holds none: the device stays until its reap is done */
	drm_dev_get(&qdev->drm);
	INIT_WORK(&bo->reap, qgpu_gem_reap);
	queue_work(qdev->reap_wq, &bo->reap);
}

/*
 * fdinfo (drm_show_memory_stats()): an allocation committed to a segment
 * (VRAM or the aperture) is resident; one in system memory only is not.
 * Called under the file's table_lock: a racy read of the segment is fine.
 */
static enum drm_gem_object_status qgpu_gem_status(struct drm_gem_object *obj)
{
	return READ_ONCE(to_qbo(obj)->seg) != QGPU_SEG_SYSTEM ?
	       DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs qgpu_gem_funcs = {
	.free = qgpu_gem_free,
	.close = qgpu_gem_close,
	.mmap = qgpu_gem_mmap,
	.status = qgpu_gem_status,
	.export = qgpu_gem_prime_export,
	.get_sg_table = qgpu_gem_get_sg_table,
};

/*
 * A new allocation; @shmem: backed by a shmem file of its own (else the
 * caller gives it pages, as an import does).
 */
struct qgpu_bo *qgpu_bo_create(struct qgpu_device *qdev, u64 size,
			       u32 mask, u32 flags, u32 preferred,
			       bool shmem)
{
	struct qgpu_bo *bo;
	unsigned int i;
	int ret = 0;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.funcs = &qgpu_gem_funcs;
	if (shmem)
		ret = drm_gem_object_init(&qdev->drm, &bo->base, size);
	else
		drm_gem_private_object_init(&qdev->drm, &bo->base, size);
	if (ret) {
		kfree(bo);
		return ERR_PTR(ret);
	}
	ret = drm_gem_create_mmap_offset(&bo->base);
	if (ret) {
		drm_gem_object_release(&bo->base);
		kfree(bo);
		return ERR_PTR(ret);
	}
	bo->id = atomic64_inc_return(&qdev->bo_ids);
	bo->segment_mask = mask;
	bo->flags = flags;
	for (i = 0; i < ARRAY_SIZE(bo->preferred); i++)
		bo->preferred[i] = (preferred >> (8 * i)) & 0xff;
	bo->npages = size >> PAGE_SHIFT;
	bo->seg = QGPU_SEG_SYSTEM;
	bo->pristine = true;
	bo->priority = QGPU_PRIORITY_NORMAL;
	INIT_LIST_HEAD(&bo->lru);
	INIT_LIST_HEAD(&bo->hap_link);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocations), 1);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocated_bytes), size);
	trace_qgpu_bo_create(bo, size, mask, flags, bo->id, preferred);
	return bo;
}

static int qgpu_bo_create_handle(struct drm_file *file, struct qgpu_bo *bo,
				 u32 *handle)
{
	struct qgpu_file *qf = file->driver_priv;
	int ret;

	/* its creator's: resident, it counts in that process's usage */
	bo->owner = qgpu_vidmem_get(qf->vidmem);
	trace_qgpu_mm_req(QGPU_REQ_OWNER, bo->id, bo->owner->id);
	ret = drm_gem_handle_create(file, &bo->base, handle);

	/* The handle holds the reference now (or the object is freed). */
	drm_gem_object_put(&bo->base);
	return ret;
}

/* Largest allocation: what the device could ever hold, capped. */
u64 qgpu_max_alloc(struct qgpu_device *qdev)
{
	return min_t(u64, max(qdev->vram_size, qdev->gart_size), SZ_4G);
}

int qgpu_gem_dumb_create(struct drm_file *file, struct drm_device *drm,
			 struct drm_mode_create_dumb *args)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_bo *bo;
	u64 pitch, size;

	if (QGPU_IOCTL_DBG(qdev, !args->width || !args->height || !args->bpp || args->flags))
		return -EINVAL;
	pitch = ALIGN((u64)args->width * DIV_ROUND_UP(args->bpp, 8), 64);
	size = PAGE_ALIGN(pitch * args->height);
	if (QGPU_IOCTL_DBG(qdev, pitch > U32_MAX || !size || size > qgpu_max_alloc(qdev)))
		return -EINVAL;
	bo = qgpu_bo_create(qdev, size, QGPU_SEG_MASK_ALL &
			    ~(qgpu_mm_seg_present(qdev, QGPU_SEG_LOCAL) ? 0 :
			      BIT(QGPU_SEG_LOCAL)), QGPU_GEM_CPU_ACCESS, 0, true);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	args->pitch = pitch;
	args->size = size;
	return qgpu_bo_create_handle(file, bo, &args->handle);
}

int qgpu_gem_create_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_create *args = data;
	struct qgpu_bo *bo;
	u32 mask = args->segment_mask, pref = args->preferred;
	unsigned int i;
	bool ended = false;
	u64 size;
	u32 id;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_GEM_CREATE_FLAGS || args->handle))
		return -EINVAL;
	if (QGPU_IOCTL_DBG(qdev, !args->size || args->size > qgpu_max_alloc(qdev)))
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	if (QGPU_IOCTL_DBG(qdev, !mask || mask & ~QGPU_SEG_MASK_ALL))
		return -EINVAL;
	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++)
		if (QGPU_IOCTL_DBG(qdev, mask & BIT(id) && !qgpu_mm_seg_present(qdev, id)))
			return -EINVAL;
	for (i = 0; i < 4; i++) {
		id = (pref >> (8 * i)) & 0xff;
		if (!id) {
			ended = true;
			continue;
		}
		/* no ids after the terminator; each in the supported set */
		if (QGPU_IOCTL_DBG(qdev, ended || id > QGPU_SEG_MAX || !(mask & BIT(id))))
			return -EINVAL;
	}
	/*
	 * "Allocation Usage Tracking": a CPU-accessible allocation that may live in
	 * non-CPU-visible VRAM must have the aperture segment in its set.
	 */
	if (args->flags & QGPU_GEM_CPU_ACCESS && mask & BIT(QGPU_SEG_LOCAL) &&
	    !(mask & BIT(QGPU_SEG_APERTURE)))
		return -EINVAL;
	/*
	 * "Mapping Virtual Addresses to a Memory Segment": a CPU-accessible
	 * allocation located in an aperture-space segment cannot be swizzled.
	 * A CPU-accessible allocation may always be evicted to the aperture
	 * segment or system memory, where the application reads its bytes as
	 * they are, so it is never a tiled one; and tiled allocations need a
	 * device that can tile.
	 */
	if (args->flags & QGPU_GEM_TILED &&
	    QGPU_IOCTL_DBG(qdev, args->flags & QGPU_GEM_CPU_ACCESS ||
			   !(qdev->caps & QGPU_INFO_CAP_TILING)))
		return -EINVAL;

	bo = qgpu_bo_create(qdev, size, mask, args->flags, pref, true);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	return qgpu_bo_create_handle(file, bo, &args->handle);
}

struct qgpu_bo *qgpu_bo_lookup(struct drm_file *file, u32 handle)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);

	return obj ? to_qbo(obj) : NULL;
}

int qgpu_gem_reside_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_reside *args = data;
	struct qgpu_bo *bo;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->flags))
		return -EINVAL;
	if (args->op == QGPU_RESIDE_MAKE_RESIDENT) {
		if (args->segment > QGPU_SEG_MAX ||
		    (args->segment && !qgpu_mm_seg_present(qdev, args->segment)))
			return -EINVAL;
	} else if (args->op == QGPU_RESIDE_EVICT ||
		   args->op == QGPU_RESIDE_EVICT_SYSTEM) {
		if (QGPU_IOCTL_DBG(qdev, args->segment))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	bo = qgpu_bo_lookup(file, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !bo))
		return -ENOENT;
	qgpu_mm_lock(qdev, file->driver_priv);
	if (args->op == QGPU_RESIDE_MAKE_RESIDENT) {
		trace_qgpu_mm_req(QGPU_REQ_RESIDE, bo->id, args->segment);
		/* OfferAllocations: reclaim it first */
		ret = QGPU_IOCTL_DBG(qdev, bo->offered) ? -EINVAL :
		      qgpu_mm_make_resident(bo, args->segment);
	} else {
		trace_qgpu_mm_req(QGPU_REQ_EVICT, bo->id,
				  args->op == QGPU_RESIDE_EVICT_SYSTEM);
		ret = qgpu_mm_evict(bo, args->op == QGPU_RESIDE_EVICT_SYSTEM,
				    QGPU_WHY_REQUEST);
	}
	if (!ret) {
		qgpu_mm_touch(bo);
		args->segment = bo->seg;
	}
	qgpu_mm_unlock(qdev);
	drm_gem_object_put(&bo->base);
	return ret;
}

int qgpu_gem_info_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_info *args = data;
	struct qgpu_bo *bo;
	u32 handle = args->handle;

	bo = qgpu_bo_lookup(file, handle);
	if (QGPU_IOCTL_DBG(qdev, !bo))
		return -ENOENT;
	memset(args, 0, sizeof(*args));
	args->handle = handle;
	qgpu_mm_lock(qdev, NULL);
	args->segment = bo->seg;
	args->size = bo->base.size;
	args->gpu_addr = qgpu_bo_gpu_addr(bo);
	args->segment_mask = bo->segment_mask;
	args->lock_count = bo->lock_count;
	args->flags = bo->flags;
	if (bo->seg == QGPU_SEG_VISIBLE)
		args->cpu_path = QGPU_CPU_PATH_BAR;
	else if (bo->seg == QGPU_SEG_LOCAL)
		args->cpu_path = bo->hap_nruns ?
				 QGPU_CPU_PATH_HAP : QGPU_CPU_PATH_NONE;
	else
		args->cpu_path = QGPU_CPU_PATH_SYSTEM;
	args->cpu_caching = qgpu_bo_cpu_caching(bo, args->cpu_path);
	qgpu_mm_unlock(qdev);
	drm_gem_object_put(&bo->base);
	return 0;
}
