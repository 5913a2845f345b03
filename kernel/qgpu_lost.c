// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: the device lost.
 *
 * The memory manager's books say where every allocation's content is only
 * as long as the paging engine does what it is told, in order. A paging
 * job that never completes (its engine hangs and is reset, or the job
 * cannot be written to the ring) leaves the books and the device's memory
 * apart: a move whose copy was dropped leaves its allocation in a place
 * that holds somebody else's old bytes, an unmap or a GART clear that was
 * dropped leaves the device a way to pages the kernel frees. Running the
 * rest of the paging queue, or the jobs that waited for it, would act on
 * that. So a paging-engine failure loses the device, as a WDDM adapter
 * whose paging engine cannot be recovered is lost: every context is lost
 * (%QGPU_CTX_LOST_DEVICE), no job reaches the device any more, CPU
 * mappings of allocations fault (SIGBUS), new contexts are refused (EIO).
 * What the engines already run goes on; the rest of the driver stays
 * (queries, closing, freeing). Unbinding the device and binding it again
 * starts afresh.
 */
#include <linux/mm.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"

/**
 * qgpu_device_lose - the device is lost
 * @qdev: the device
 * @why: what failed, for the kernel log
 *
 * Called where a paging job failed (the job timeout, run_job), before the
 * jobs behind it are run or cancelled: they see the device lost.
 */
void qgpu_device_lose(struct qgpu_device *qdev, const char *why)
{
	struct qgpu_ctx *ctx;
	unsigned long id;

	/* under mm_lock: a CPU fault inserts nothing once it is set */
	qgpu_mm_lock(qdev, NULL);
	if (qdev->lost) {
		qgpu_mm_unlock(qdev);
		return;
	}
	WRITE_ONCE(qdev->lost, true);
	qgpu_mm_unlock(qdev);
	drm_err(&qdev->drm,
		"device lost: %s; every context is lost, unbind and bind the device to recover\n",
		why);
	xa_lock(&qdev->contexts);
	xa_for_each(&qdev->contexts, id, ctx)
		qgpu_ctx_mark_lost(ctx, QGPU_CTX_LOST_DEVICE);
	xa_unlock(&qdev->contexts);
	/* allocations' mappings (monitored-fence pages, below them, stay) */
	unmap_mapping_range(qdev->drm.anon_inode->i_mapping,
			    (loff_t)DRM_FILE_PAGE_OFFSET_START << PAGE_SHIFT,
			    0, 1);
}

/**
 * qgpu_device_is_lost - whether qgpu_device_lose() was called
 * @qdev: the device
 *
 * Return: true once the device is lost; it stays so until it is removed.
 */
bool qgpu_device_is_lost(struct qgpu_device *qdev)
{
	return READ_ONCE(qdev->lost);
}
