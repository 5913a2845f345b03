// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the video memory manager, set up and taken down. The segments
 * described from the device's sizes ("Initializing Use of Memory
 * Segments", WDK), the CPU host aperture, the paging buffer and the
 * deferred-destruction workqueue. Its parts, in layers: docs/driver.md.
 */
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_mm_priv.h"
#include "qgpu_hw.h"
#include "qgpu_paging.h"
#include "qgpu_vm.h"

int qgpu_mm_init(struct qgpu_device *qdev)
{
	struct qgpu_segment *ap;
	int ret;

	mutex_init(&qdev->mm_lock);
	qdev->policy = qgpu_mm_default_policy();
	qdev->budget_pct = qgpu_mm_default_budget();
	/*
	 * The module's, not the device's: its work may drop the last
	 * reference to the DRM device (an address space's, after unplug),
	 * whose release must not destroy the workqueue it runs on.
	 */
	qdev->reap_wq = qgpu_reap_wq;
	/* qgpu_hw_identify() made sure of the paging engine and the GART */
	if (qdev->gart_size < 2 * QGPU_PBUF_SIZE || qdev->visible_size < SZ_1M) {
		drm_err(&qdev->drm, "device lacks GART range or VRAM\n");
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
	/*
	 * The aperture segment is snooped (CacheCoherent) only when the device
	 * says it is I/O coherent; VRAM segments never are.
	 */
	qgpu_seg_setup(qdev, QGPU_SEG_APERTURE, QGPU_GART_BASE, qdev->gart_size,
		       QGPU_SEGF_APERTURE | QGPU_SEGF_CPU_VISIBLE |
		       (qgpu_hw_io_coherent(qdev) ?
			QGPU_SEGF_CACHE_COHERENT : 0) |
		       QGPU_SEGF_POPULATED_FROM_SYS |
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
	/* GPU virtual addressing: the paging process, if there is an MMU */
	qdev->has_mmu = qgpu_hw_has_mmu(qdev);
	if (!ret)
		ret = qgpu_pp_init(qdev);
	if (ret)
		qgpu_mm_fini(qdev);
	return ret;
}

void qgpu_mm_fini(struct qgpu_device *qdev)
{
	u32 id;

	/* allocations already destroyed give back their ranges first */
	flush_workqueue(qdev->reap_wq);
	qgpu_pp_fini(qdev);
	qgpu_paging_fini(qdev);
	/*
	 * Under mm_lock: DRM core's ioctls (GEM_CLOSE, a file's close) may
	 * still free allocations, which leave the aperture and the segments
	 * under it.
	 */
	mutex_lock(&qdev->mm_lock);
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
	mutex_unlock(&qdev->mm_lock);
}
