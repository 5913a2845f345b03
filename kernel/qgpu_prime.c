// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: PRIME. Exporting allocations as dma-bufs (to other processes, to
 * qgpu itself and to other devices) and importing other devices' dma-bufs
 * as allocations. docs/security-model.md says what each may reach.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"

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
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_ATTACH, bo->id, 0);
	ret = qgpu_bo_backing(bo);
	if (!ret && bo->seg != QGPU_SEG_SYSTEM &&
	    bo->seg != QGPU_SEG_APERTURE)
		ret = qgpu_mm_evict(bo, false, QGPU_WHY_REQUEST);
	if (!ret)
		bo->attachments++;
	/* the other device may write the pages: their content is not known */
	if (!ret && bo->pristine) {
		bo->pristine = false;
		trace_qgpu_mm_req(QGPU_REQ_GPU_WRITE, bo->id, 0);
	}
	qgpu_mm_unlock(qdev);
	drm_dev_exit(idx);
	if (ret)
		return ret;
	/* the content is in the pages once the move out of VRAM is done */
	t = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_KERNEL, true,
				  msecs_to_jiffies(QGPU_JOB_TIMEOUT_MS));
	if (t > 0)
		return 0;
	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_DETACH, bo->id, 0);
	bo->attachments--;
	qgpu_mm_unlock(qdev);
	return t ? t : -ETIMEDOUT;
}

static void qgpu_dmabuf_detach(struct dma_buf *dma_buf,
			       struct dma_buf_attachment *attach)
{
	struct drm_gem_object *obj = dma_buf->priv;
	struct qgpu_device *qdev = to_qdev(obj->dev);

	qgpu_mm_lock(qdev, NULL);
	trace_qgpu_mm_req(QGPU_REQ_DETACH, to_qbo(obj)->id, 0);
	to_qbo(obj)->attachments--;
	qgpu_mm_unlock(qdev);
}

/* Only for an attached device: the pages stay while it is attached. */
struct sg_table *qgpu_gem_get_sg_table(struct drm_gem_object *obj)
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

struct dma_buf *qgpu_gem_prime_export(struct drm_gem_object *obj,
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

/*
 * The exporter's scatter list holds exactly @npages pages, by CPU page and
 * by DMA address: a shorter one would leave entries of the allocation's
 * arrays unset (and the aperture would map them), a longer one trips the
 * DRM helpers' WARN.
 */
static bool qgpu_sgt_covers(struct sg_table *sgt, u32 npages)
{
	struct sg_dma_page_iter dma_iter;
	struct sg_page_iter page_iter;
	u64 pages = 0, dma = 0;

	for_each_sgtable_page(sgt, &page_iter, 0)
		pages++;
	for_each_sgtable_dma_page(sgt, &dma_iter, 0)
		dma++;
	return pages == npages && dma == npages;
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
 * above the largest allocation (qgpu_max_alloc(); one the aperture segment
 * cannot hold fails when it is placed, ENOSPC), or a scatter list without
 * pages or that does not cover the dma-buf page for page).
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
	    !PAGE_ALIGNED(size) || size > qgpu_max_alloc(qdev) ||
	    !qgpu_sgt_covers(sgt, size >> PAGE_SHIFT))
		return ERR_PTR(-EINVAL);
	bo = qgpu_bo_create(qdev, size, BIT(QGPU_SEG_APERTURE),
			    QGPU_GEM_CPU_ACCESS, QGPU_SEG_APERTURE, false);
	if (IS_ERR(bo))
		return ERR_CAST(bo);
	bo->pristine = false;
	bo->pages = kvcalloc(bo->npages, sizeof(*bo->pages), GFP_KERNEL);
	bo->dma = kvcalloc(bo->npages, sizeof(*bo->dma), GFP_KERNEL);
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
