// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: what the memory manager waits for in an allocation's reservation
 * object.
 *
 * Every allocation's GPU work is in its GEM object's dma_resv (shared with
 * its dma-buf): DMA buffers add their fences with write or read usage,
 * paging jobs with kernel usage, and DMA buffers wait for what their usage
 * requires, whoever added it (implicit synchronisation). The memory
 * manager itself (moves, unmaps, destruction) waits only for qgpu's own
 * fences: a fence from elsewhere (an importer's, or a sync_file imported
 * into the dma-buf) holds back the DMA buffers that use the allocation,
 * never the paging engine, which every process shares. This is safe
 * because nothing outside qgpu reaches an allocation's memory through qgpu:
 * a device attached to an exported allocation was given its system pages,
 * and the allocation is never copied while it is attached; an imported
 * allocation is only mapped into the aperture segment, never copied.
 */
#include <drm/gpu_scheduler.h>

#include "qgpu_job.h"
#include "qgpu_resv.h"

/* A fence of one of qgpu's schedulers (a DMA buffer or a paging job)? */
bool qgpu_fence_is_ours(struct qgpu_device *qdev, struct dma_fence *f)
{
	struct drm_sched_fence *sf = to_drm_sched_fence(f);
	unsigned int i;

	if (!sf)
		return false;
	for (i = 0; i < QGPU_NUM_ENGINES; i++)
		if (sf->sched == &qdev->engine[i].sched)
			return true;
	return false;
}

/*
 * A virtual DMA buffer (bookkeeping usage) of client @skip: the one kind of
 * work a destroy with AssumeNotInUse no longer waits for (qgpu_gem.h).
 */
static bool qgpu_resv_skipped(struct dma_resv_iter *cursor,
			      struct dma_fence *f, u64 skip)
{
	struct drm_sched_fence *sf = to_drm_sched_fence(f);

	return skip && sf && sf->drm_client_id == skip &&
	       dma_resv_iter_usage(cursor) == DMA_RESV_USAGE_BOOKKEEP;
}

/**
 * qgpu_resv_own_deps - make @job wait for qgpu's own work in @resv
 * @qdev: the device
 * @job: a paging job, not yet pushed
 * @resv: a reservation object, locked
 * @skip: 0, or a DRM client whose virtual DMA buffers (bookkeeping
 *	usage) are not waited for (qgpu_bo_skip_client())
 *
 * Return: 0 or -ENOMEM.
 */
int qgpu_resv_own_deps(struct qgpu_device *qdev, struct qgpu_job *job,
		       struct dma_resv *resv, u64 skip)
{
	struct dma_resv_iter cursor;
	struct dma_fence *f;
	int ret;

	dma_resv_assert_held(resv);
	dma_resv_for_each_fence(&cursor, resv, DMA_RESV_USAGE_BOOKKEEP, f) {
		if (!qgpu_fence_is_ours(qdev, f) ||
		    qgpu_resv_skipped(&cursor, f, skip))
			continue;
		ret = qgpu_job_add_dep(job, f);
		if (ret)
			return ret;
	}
	return 0;
}

/* One unsignalled fence of qgpu's own in @resv (a reference), or NULL. */
static struct dma_fence *qgpu_resv_own_busy(struct qgpu_device *qdev,
					    struct dma_resv *resv, u64 skip)
{
	struct dma_resv_iter cursor;
	struct dma_fence *f, *busy = NULL;

	dma_resv_lock(resv, NULL);
	dma_resv_for_each_fence(&cursor, resv, DMA_RESV_USAGE_BOOKKEEP, f) {
		if (qgpu_fence_is_ours(qdev, f) &&
		    !qgpu_resv_skipped(&cursor, f, skip) &&
		    !dma_fence_is_signaled(f)) {
			busy = dma_fence_get(f);
			break;
		}
	}
	dma_resv_unlock(resv);
	return busy;
}

/**
 * qgpu_resv_own_idle - is all of qgpu's work in @resv done?
 * @qdev: the device
 * @resv: a reservation object, not locked by the caller
 * @skip: as for qgpu_resv_own_deps()
 */
bool qgpu_resv_own_idle(struct qgpu_device *qdev, struct dma_resv *resv,
			u64 skip)
{
	struct dma_fence *f = qgpu_resv_own_busy(qdev, resv, skip);

	dma_fence_put(f);
	return !f;
}

/**
 * qgpu_resv_wait_own - wait until all of qgpu's work in @resv is done
 * @qdev: the device
 * @resv: a reservation object; the caller holds no lock
 * @skip: as for qgpu_resv_own_deps()
 */
void qgpu_resv_wait_own(struct qgpu_device *qdev, struct dma_resv *resv,
			u64 skip)
{
	struct dma_fence *f;

	while ((f = qgpu_resv_own_busy(qdev, resv, skip))) {
		dma_fence_wait(f, false);
		dma_fence_put(f);
	}
}

/**
 * qgpu_resv_own_now - qgpu's own unfinished work in @resv, as it is now
 * @qdev: the device
 * @resv: a reservation object; the caller holds no lock
 * @out: set to a kmalloc'ed array of fence references (free it with
 *	qgpu_resv_wait_fences()), or NULL when there are none
 * @n: set to their number
 *
 * Unlike qgpu_resv_wait_own(), a wait for what this returns never waits
 * for work queued later.
 * Return: 0 or -ENOMEM.
 */
int qgpu_resv_own_now(struct qgpu_device *qdev, struct dma_resv *resv,
		      struct dma_fence ***out, unsigned int *n)
{
	struct dma_fence **f;
	unsigned int i, k = 0;
	int ret;

	ret = dma_resv_get_fences(resv, DMA_RESV_USAGE_BOOKKEEP, n, &f);
	if (ret)
		return ret;
	for (i = 0; i < *n; i++) {
		if (qgpu_fence_is_ours(qdev, f[i]) &&
		    !dma_fence_is_signaled(f[i]))
			f[k++] = f[i];
		else
			dma_fence_put(f[i]);
	}
	*n = k;
	if (!k) {
		kfree(f);
		f = NULL;
	}
	*out = f;
	return 0;
}

/**
 * qgpu_resv_wait_fences - wait for fences of qgpu_resv_own_now() and free them
 * @f: the array (NULL: none)
 * @n: its length
 */
void qgpu_resv_wait_fences(struct dma_fence **f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dma_fence_wait(f[i], false);
	qgpu_resv_wait_fences_put(f, n);
}

/**
 * qgpu_resv_wait_fences_put - free fences of qgpu_resv_own_now(), not waiting
 * @f: the array (NULL: none)
 * @n: its length
 */
void qgpu_resv_wait_fences_put(struct dma_fence **f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dma_fence_put(f[i]);
	kfree(f);
}
