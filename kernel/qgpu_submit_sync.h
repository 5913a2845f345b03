/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_SUBMIT_SYNC_H
#define QGPU_SUBMIT_SYNC_H

#include <linux/types.h>

struct dma_fence;
struct dma_fence_chain;
struct drm_file;
struct drm_syncobj;
struct qgpu_device;
struct qgpu_mfence;

/**
 * struct qgpu_in_syncs - the fences a submission waits for
 * @fence: one per in-sync entry (a reference each)
 * @n: number of fences
 */
struct qgpu_in_syncs {
	struct dma_fence **fence;
	u32 n;
};

/**
 * struct qgpu_out_syncs - the syncobjs a submission signals
 * @obj: one per out-sync entry (a reference each)
 * @chain: for a timeline point, its preallocated chain node
 * @point: the timeline point (0: replace the fence), as read at check time
 * @n: number of entries
 * @sigs: the monitored fence values the submission writes (its monitored
 *	entries, @obj NULL for those, and the context's own fence); taken by
 *	the job of the last portion
 */
struct qgpu_out_syncs {
	struct drm_syncobj **obj;
	struct dma_fence_chain **chain;
	u64 *point;
	u32 n;
	struct qgpu_mfence_sigs *sigs;
};

int qgpu_in_syncs_get(struct qgpu_device *qdev, struct drm_file *file,
		      u64 entries, u32 n, struct qgpu_in_syncs *in);
void qgpu_in_syncs_put(struct qgpu_in_syncs *in);
int qgpu_out_syncs_get(struct qgpu_device *qdev, struct drm_file *file,
		       u64 entries, u32 n, struct qgpu_out_syncs *out);
void qgpu_out_syncs_signal(struct qgpu_out_syncs *out,
			   struct dma_fence *fence);
void qgpu_out_syncs_put(struct qgpu_out_syncs *out);
int qgpu_out_sync_next(struct qgpu_device *qdev, struct qgpu_out_syncs *out,
		       struct qgpu_mfence *mf, u64 *value);

#endif /* QGPU_SUBMIT_SYNC_H */
