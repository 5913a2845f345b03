// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: an allocation's system-memory backing store: its shmem pages,
 * acquired on first need and kept, and their DMA addresses (what the GART
 * maps and page-list transfers address). An imported allocation's pages
 * are the exporter's. The pages of an allocation created without
 * QGPU_GEM_CPU_CACHED are write-combined in every mapping, the kernel's
 * linear one included, as x86's PAT requires of a page that user space
 * maps write-combined (it keeps one memory type per page).
 */
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>
#ifdef CONFIG_X86
#include <asm/set_memory.h>
#endif

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"

/* Give @pages the memory type CPU mappings of @bo use: WC, or back to WB */
static int qgpu_bo_pages_caching(struct qgpu_bo *bo, struct page **pages,
				 bool wc)
{
#ifdef CONFIG_X86
	if (bo->flags & QGPU_GEM_CPU_CACHED)
		return 0;
	return wc ? set_pages_array_wc(pages, bo->npages) :
		    set_pages_array_wb(pages, bo->npages);
#else
	return 0;
#endif
}

/* Acquire and DMA-map the system-memory backing store. */
int qgpu_bo_backing(struct qgpu_bo *bo)
{
	struct device *dev = bo->base.dev->dev;
	struct page **pages;
	u32 i;

	lockdep_assert_held(&to_qdev(bo->base.dev)->mm_lock);
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
	if (qgpu_bo_pages_caching(bo, pages, true))
		goto err_unmap;
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
	/* shmem gets its pages back write-back, as it gave them */
	qgpu_bo_pages_caching(bo, bo->pages, false);
	drm_gem_put_pages(&bo->base, bo->pages, true, true);
	bo->pages = NULL;
}
