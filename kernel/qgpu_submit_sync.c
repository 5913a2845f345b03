// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: a submission's syncobjs. The in-syncs' fences are looked up
 * before anything is planned; every out-syncobj (and the chain node of a
 * timeline point) is looked up and allocated then too, and the points are
 * read once, so that a bad entry or a user write racing the ioctl changes
 * nothing: the out-syncobjs get the last portion's fence only after
 * something was queued.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>

#include "qgpu_device.h"
#include "qgpu_submit_sync.h"

/* Entry @i of the user's array at @entries; its flags must be 0. */
static int qgpu_sync_entry(struct qgpu_device *qdev, u64 entries, u32 i,
			   struct drm_qgpu_sync_entry *e)
{
	if (copy_from_user(e, u64_to_user_ptr(entries) + i * sizeof(*e),
			   sizeof(*e)))
		return -EFAULT;
	if (QGPU_IOCTL_DBG(qdev, e->flags))
		return -EINVAL;
	return 0;
}

int qgpu_in_syncs_get(struct qgpu_device *qdev, struct drm_file *file,
		      u64 entries, u32 n, struct qgpu_in_syncs *in)
{
	struct drm_qgpu_sync_entry e;
	u32 i;
	int ret;

	in->n = 0;
	in->fence = kcalloc(n + 1, sizeof(*in->fence), GFP_KERNEL);
	if (!in->fence)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = qgpu_sync_entry(qdev, entries, i, &e);
		if (ret)
			return ret;
		ret = drm_syncobj_find_fence(file, e.handle, e.point, 0,
					     &in->fence[i]);
		if (ret) {
			drm_dbg(&qdev->drm, "submit: in-sync %u: %d\n", i, ret);
			return ret;
		}
		in->n++;
	}
	return 0;
}

void qgpu_in_syncs_put(struct qgpu_in_syncs *in)
{
	u32 i;

	for (i = 0; i < in->n; i++)
		dma_fence_put(in->fence[i]);
	kfree(in->fence);
	in->fence = NULL;
	in->n = 0;
}

int qgpu_out_syncs_get(struct qgpu_device *qdev, struct drm_file *file,
		       u64 entries, u32 n, struct qgpu_out_syncs *out)
{
	struct drm_qgpu_sync_entry e;
	u32 i;
	int ret;

	out->n = 0;
	out->obj = kcalloc(n + 1, sizeof(*out->obj), GFP_KERNEL);
	out->chain = kcalloc(n + 1, sizeof(*out->chain), GFP_KERNEL);
	out->point = kcalloc(n + 1, sizeof(*out->point), GFP_KERNEL);
	if (!out->obj || !out->chain || !out->point)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = qgpu_sync_entry(qdev, entries, i, &e);
		if (ret)
			return ret;
		out->obj[i] = drm_syncobj_find(file, e.handle);
		if (!out->obj[i]) {
			drm_dbg(&qdev->drm, "submit: out-sync %u handle %u\n",
				i, e.handle);
			return -ENOENT;
		}
		out->n++;
		out->point[i] = e.point;
		if (e.point) {
			out->chain[i] = dma_fence_chain_alloc();
			if (!out->chain[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/* Every out-syncobj gets @fence (at its timeline point, if it has one). */
void qgpu_out_syncs_signal(struct qgpu_out_syncs *out, struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < out->n; i++) {
		if (out->chain[i]) {
			drm_syncobj_add_point(out->obj[i], out->chain[i], fence,
					      out->point[i]);
			out->chain[i] = NULL;
		} else {
			drm_syncobj_replace_fence(out->obj[i], fence);
		}
	}
}

void qgpu_out_syncs_put(struct qgpu_out_syncs *out)
{
	u32 i;

	for (i = 0; out->obj && i < out->n; i++)
		drm_syncobj_put(out->obj[i]);
	for (i = 0; out->chain && i < out->n; i++)
		dma_fence_chain_free(out->chain[i]);
	kfree(out->obj);
	kfree(out->chain);
	kfree(out->point);
	memset(out, 0, sizeof(*out));
}
