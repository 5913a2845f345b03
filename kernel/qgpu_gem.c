// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: allocations as GEM objects, dumb buffers, Lock2 and CPU mappings.
 * A CPU mapping follows its allocation: every move zaps the PTEs and the
 * next access faults in the pages of the allocation's current medium
 * (BAR2, host aperture or system pages) at the same virtual address.
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

#include "qgpu_drv.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_resv.h"

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

	qgpu_resv_wait_own(qdev, obj->resv);
	mutex_lock(&qdev->mm_lock);
	ret = qgpu_mm_bo_reap(bo);
	mutex_unlock(&qdev->mm_lock);
	if (ret) {
		/* the GART still maps its pages: try again later */
		msleep(20);
		queue_work(qdev->reap_wq, &bo->reap);
		return;
	}
	/* the GART entries of its pages are cleared before they are freed */
	qgpu_resv_wait_own(qdev, obj->resv);

	qgpu_bo_release_backing(bo);
	kvfree(bo->hap_runs);
	if (obj->import_attach)
		drm_prime_gem_destroy(obj, bo->sgt);
	drm_gem_free_mmap_offset(obj);
	drm_gem_object_release(obj);
	kfree(bo);
}

static void qgpu_gem_free(struct drm_gem_object *obj)
{
	struct qgpu_bo *bo = to_qbo(obj);
	struct qgpu_device *qdev = to_qdev(obj->dev);

	mutex_lock(&qdev->mm_lock);
	qgpu_mm_bo_gone(bo);
	/* idle: its range is free at once (the pages, after any GART unmap) */
	if (qgpu_resv_own_idle(qdev, obj->resv))
		qgpu_mm_bo_reap(bo);
	mutex_unlock(&qdev->mm_lock);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocations), -1);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocated_bytes),
		      -(s64)obj->size);
	INIT_WORK(&bo->reap, qgpu_gem_reap);
	queue_work(qdev->reap_wq, &bo->reap);
}

/*
 * Wait for a move in flight (kernel-usage fences) without holding any lock;
 * then fault again. The mapping holds a reference to the object.
 */
static vm_fault_t qgpu_gem_fault_wait(struct drm_gem_object *obj)
{
	long t = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_KERNEL, true,
				       msecs_to_jiffies(QGPU_JOB_TIMEOUT_MS));

	/* Interrupted or still moving: the access simply faults again. */
	return t < 0 && t != -ERESTARTSYS ? VM_FAULT_SIGBUS : VM_FAULT_NOPAGE;
}

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
	mutex_lock(&qdev->mm_lock);
	err = qgpu_mm_cpu_prepare(bo, &path, &moving);
	if (err) {
		ret = err == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
		goto out;
	}
	if (moving) {
		mutex_unlock(&qdev->mm_lock);
		drm_dev_exit(idx);
		return qgpu_gem_fault_wait(obj);
	}
	qgpu_mm_touch(bo);
	prot = vm_get_page_prot(vma->vm_flags);
	if (path != QGPU_CPU_PATH_SYSTEM)
		prot = pgprot_writecombine(prot);
	/* Map the whole VMA now: one fault per mapping per move. */
	for (i = 0, addr = vma->vm_start; i < npages; i++, addr += PAGE_SIZE) {
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
	mutex_unlock(&qdev->mm_lock);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct qgpu_gem_vm_ops = {
	.fault = qgpu_gem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static int qgpu_gem_mmap(struct drm_gem_object *obj,
			 struct vm_area_struct *vma)
{
	int ret;

	if (obj->import_attach) {
		/* another device's buffer: its exporter maps it */
		vma->vm_private_data = NULL;
		vma->vm_ops = NULL;
		ret = dma_buf_mmap(obj->dma_buf, vma, 0);
		/* the exporter's mapping holds its own reference */
		if (!ret)
			drm_gem_object_put(obj);
		return ret;
	}
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &qgpu_gem_vm_ops;
	return 0;
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

/*
 * PRIME. An exported allocation is shared through its dma-buf: its
 * reservation object is the dma-buf's (implicit synchronisation), and
 * CPU mappings made through the dma-buf live in the DRM device's address
 * space (drm_gem_dmabuf_export() points the dma-buf file there), so every
 * move zaps them like any other mapping. A device that attaches is given
 * the allocation's system pages: while any device is attached, the
 * allocation stays in system memory or the aperture segment (which maps
 * those same pages), so the attached device always sees the content.
 */
static int qgpu_dmabuf_attach(struct dma_buf *dma_buf,
			      struct dma_buf_attachment *attach)
{
	struct drm_gem_object *obj = dma_buf->priv;
	struct qgpu_bo *bo = to_qbo(obj);
	struct qgpu_device *qdev = to_qdev(obj->dev);
	long t;
	int idx, ret;

	if (!(bo->segment_mask & BIT(QGPU_SEG_APERTURE)))
		return -EINVAL;
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	mutex_lock(&qdev->mm_lock);
	ret = qgpu_bo_backing(bo);
	if (!ret && bo->seg != QGPU_SEG_SYSTEM &&
	    bo->seg != QGPU_SEG_APERTURE)
		ret = qgpu_mm_evict(bo, false);
	if (!ret)
		bo->attachments++;
	mutex_unlock(&qdev->mm_lock);
	drm_dev_exit(idx);
	if (ret)
		return ret;
	/* the content is in the pages once the move out of VRAM is done */
	t = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_KERNEL, true,
				  msecs_to_jiffies(QGPU_JOB_TIMEOUT_MS));
	if (t > 0)
		return 0;
	mutex_lock(&qdev->mm_lock);
	bo->attachments--;
	mutex_unlock(&qdev->mm_lock);
	return t ? t : -ETIMEDOUT;
}

static void qgpu_dmabuf_detach(struct dma_buf *dma_buf,
			       struct dma_buf_attachment *attach)
{
	struct drm_gem_object *obj = dma_buf->priv;
	struct qgpu_device *qdev = to_qdev(obj->dev);

	mutex_lock(&qdev->mm_lock);
	to_qbo(obj)->attachments--;
	mutex_unlock(&qdev->mm_lock);
}

/* Only for an attached device: the pages stay while it is attached. */
static struct sg_table *qgpu_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct qgpu_bo *bo = to_qbo(obj);

	if (!READ_ONCE(bo->attachments) || !bo->pages)
		return ERR_PTR(-EINVAL);
	return drm_prime_pages_to_sg(obj->dev, bo->pages, bo->npages);
}

static const struct dma_buf_ops qgpu_dmabuf_ops = {
	.attach = qgpu_dmabuf_attach,
	.detach = qgpu_dmabuf_detach,
	.map_dma_buf = drm_gem_map_dma_buf,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.mmap = drm_gem_dmabuf_mmap,
	.release = drm_gem_dmabuf_release,
};

static struct dma_buf *qgpu_gem_prime_export(struct drm_gem_object *obj,
					     int flags)
{
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &qgpu_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};

	if (obj->import_attach)
		return ERR_PTR(-EOPNOTSUPP);
	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

struct drm_gem_object *qgpu_gem_prime_import(struct drm_device *drm,
					     struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj = dma_buf->priv;

	if (dma_buf->ops == &qgpu_dmabuf_ops && obj->dev == drm) {
		/* our own allocation coming back: the same object */
		drm_gem_object_get(obj);
		return obj;
	}
	return drm_gem_prime_import(drm, dma_buf);
}

static const struct drm_gem_object_funcs qgpu_gem_funcs = {
	.free = qgpu_gem_free,
	.mmap = qgpu_gem_mmap,
	.status = qgpu_gem_status,
	.export = qgpu_gem_prime_export,
	.get_sg_table = qgpu_gem_get_sg_table,
};

/*
 * A new allocation; @shmem: backed by a shmem file of its own (else the
 * caller gives it pages, as an import does).
 */
static struct qgpu_bo *qgpu_bo_create(struct qgpu_device *qdev, u64 size,
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
	bo->segment_mask = mask;
	bo->flags = flags;
	for (i = 0; i < ARRAY_SIZE(bo->preferred); i++)
		bo->preferred[i] = (preferred >> (8 * i)) & 0xff;
	bo->npages = size >> PAGE_SHIFT;
	bo->seg = QGPU_SEG_SYSTEM;
	bo->pristine = true;
	INIT_LIST_HEAD(&bo->lru);
	INIT_LIST_HEAD(&bo->hap_link);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocations), 1);
	qgpu_stat_add(qdev, NULL, QGPU_STAT(allocated_bytes), size);
	return bo;
}

static int qgpu_bo_create_handle(struct drm_file *file, struct qgpu_bo *bo,
				 u32 *handle)
{
	int ret = drm_gem_handle_create(file, &bo->base, handle);

	/* The handle holds the reference now (or the object is freed). */
	drm_gem_object_put(&bo->base);
	return ret;
}

/* Largest allocation: what the device could ever hold, capped. */
static u64 qgpu_max_alloc(struct qgpu_device *qdev)
{
	return min_t(u64, max(qdev->vram_size, qdev->gart_size), SZ_4G);
}

/**
 * qgpu_gem_prime_import_sg_table - an allocation over another device's buffer
 * @drm: the device
 * @attach: qgpu's attachment to the dma-buf
 * @sgt: the exporter's pages, mapped for qgpu
 *
 * The exporter owns the memory: the allocation is only ever mapped into
 * the aperture segment (GART entries for those pages) and never copied
 * into VRAM or into pages of its own, so nothing is ever evicted into
 * memory the exporter does not own. Its reservation object is the
 * dma-buf's, so qgpu's work and the exporter's wait for each other.
 *
 * Return: the object, or an ERR_PTR (-EINVAL: no aperture segment, a size
 * the aperture cannot hold, or a scatter list without pages).
 */
struct drm_gem_object *
qgpu_gem_prime_import_sg_table(struct drm_device *drm,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt)
{
	struct qgpu_device *qdev = to_qdev(drm);
	size_t size = attach->dmabuf->size;
	struct qgpu_bo *bo;
	int ret;

	if (!qgpu_mm_seg_present(qdev, QGPU_SEG_APERTURE) || !size ||
	    !PAGE_ALIGNED(size) || size > qgpu_max_alloc(qdev))
		return ERR_PTR(-EINVAL);
	bo = qgpu_bo_create(qdev, size, BIT(QGPU_SEG_APERTURE),
			    QGPU_GEM_CPU_ACCESS, QGPU_SEG_APERTURE, false);
	if (IS_ERR(bo))
		return ERR_CAST(bo);
	bo->pristine = false;
	bo->pages = kvmalloc_array(bo->npages, sizeof(*bo->pages), GFP_KERNEL);
	bo->dma = kvmalloc_array(bo->npages, sizeof(*bo->dma), GFP_KERNEL);
	ret = bo->pages && bo->dma ? 0 : -ENOMEM;
	if (!ret)
		ret = drm_prime_sg_to_page_array(sgt, bo->pages, bo->npages);
	if (!ret)
		ret = drm_prime_sg_to_dma_addr_array(sgt, bo->dma, bo->npages);
	if (ret) {
		kvfree(bo->pages);
		kvfree(bo->dma);
		bo->pages = NULL;
		bo->dma = NULL;
		/* not imported yet: freed as an allocation without pages */
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	bo->sgt = sgt;
	return &bo->base;
}

int qgpu_gem_dumb_create(struct drm_file *file, struct drm_device *drm,
			 struct drm_mode_create_dumb *args)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_bo *bo;
	u64 pitch, size;

	if (!args->width || !args->height || !args->bpp || args->flags)
		return -EINVAL;
	pitch = ALIGN((u64)args->width * DIV_ROUND_UP(args->bpp, 8), 64);
	size = PAGE_ALIGN(pitch * args->height);
	if (pitch > U32_MAX || !size || size > qgpu_max_alloc(qdev))
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

	if (args->flags & ~QGPU_GEM_CREATE_FLAGS || args->handle)
		return -EINVAL;
	if (!args->size || args->size > qgpu_max_alloc(qdev))
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	if (!mask || mask & ~QGPU_SEG_MASK_ALL)
		return -EINVAL;
	for (id = QGPU_SEG_VISIBLE; id <= QGPU_SEG_MAX; id++)
		if (mask & BIT(id) && !qgpu_mm_seg_present(qdev, id))
			return -EINVAL;
	for (i = 0; i < 4; i++) {
		id = (pref >> (8 * i)) & 0xff;
		if (!id) {
			ended = true;
			continue;
		}
		/* no ids after the terminator; each in the supported set */
		if (ended || id > QGPU_SEG_MAX || !(mask & BIT(id)))
			return -EINVAL;
	}
	/*
	 * "Allocation Usage Tracking": a CPU-accessible allocation that may live in
	 * non-CPU-visible VRAM must have the aperture segment in its set.
	 */
	if (args->flags & QGPU_GEM_CPU_ACCESS && mask & BIT(QGPU_SEG_LOCAL) &&
	    !(mask & BIT(QGPU_SEG_APERTURE)))
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

int qgpu_gem_lock_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_lock *args = data;
	struct qgpu_bo *bo;
	int ret = 0;

	if (args->flags)
		return -EINVAL;	/* Lock2: reserved flag bits must be 0 */
	bo = qgpu_bo_lookup(file, args->handle);
	if (!bo)
		return -ENOENT;
	mutex_lock(&qdev->mm_lock);
	/*
	 * "Allocation Usage Tracking": a non-CPU-accessible allocation is
	 * locked through the aperture segment or while in system memory.
	 */
	if (!(bo->flags & QGPU_GEM_CPU_ACCESS) &&
	    (bo->seg == QGPU_SEG_VISIBLE || bo->seg == QGPU_SEG_LOCAL)) {
		if (bo->segment_mask & BIT(QGPU_SEG_APERTURE))
			ret = qgpu_mm_evict(bo, false);
		else
			ret = -EBUSY;
	}
	if (!ret && bo->lock_count == U32_MAX)
		ret = -EOVERFLOW;
	if (!ret) {
		bo->lock_count++;
		args->offset = drm_vma_node_offset_addr(&bo->base.vma_node);
	}
	mutex_unlock(&qdev->mm_lock);
	drm_gem_object_put(&bo->base);
	return ret;
}

int qgpu_gem_unlock_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_unlock *args = data;
	struct qgpu_bo *bo;
	int ret = 0;

	if (args->flags)
		return -EINVAL;
	bo = qgpu_bo_lookup(file, args->handle);
	if (!bo)
		return -ENOENT;
	mutex_lock(&qdev->mm_lock);
	if (bo->lock_count)
		bo->lock_count--;
	else
		ret = -EINVAL;
	mutex_unlock(&qdev->mm_lock);
	drm_gem_object_put(&bo->base);
	return ret;
}

int qgpu_gem_reside_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_reside *args = data;
	struct qgpu_bo *bo;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (args->op == QGPU_RESIDE_MAKE_RESIDENT) {
		if (args->segment > QGPU_SEG_MAX ||
		    (args->segment && !qgpu_mm_seg_present(qdev, args->segment)))
			return -EINVAL;
	} else if (args->op == QGPU_RESIDE_EVICT ||
		   args->op == QGPU_RESIDE_EVICT_SYSTEM) {
		if (args->segment)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	bo = qgpu_bo_lookup(file, args->handle);
	if (!bo)
		return -ENOENT;
	mutex_lock(&qdev->mm_lock);
	qdev->mm_owner = file->driver_priv;
	if (args->op == QGPU_RESIDE_MAKE_RESIDENT)
		ret = qgpu_mm_make_resident(bo, args->segment);
	else
		ret = qgpu_mm_evict(bo, args->op == QGPU_RESIDE_EVICT_SYSTEM);
	if (!ret) {
		qgpu_mm_touch(bo);
		args->segment = bo->seg;
	}
	qdev->mm_owner = NULL;
	mutex_unlock(&qdev->mm_lock);
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
	if (!bo)
		return -ENOENT;
	memset(args, 0, sizeof(*args));
	args->handle = handle;
	mutex_lock(&qdev->mm_lock);
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
	mutex_unlock(&qdev->mm_lock);
	drm_gem_object_put(&bo->base);
	return 0;
}
