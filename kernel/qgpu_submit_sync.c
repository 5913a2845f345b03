// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: a submission's syncobjs. The in-syncs' fences are looked up
 * before anything is planned; every out-syncobj (and the chain node of a
 * timeline point) is looked up and allocated then too, and the points are
 * read once, so that a bad entry or a user write racing the ioctl changes
 * nothing: the out-syncobjs get the last portion's fence only after
 * something was queued. Monitored fence entries (QGPU_SYNC_MONITORED) are
 * checked then too: an in-sync becomes the fence "the value was reached",
 * an out-sync a value the last portion writes (qgpu_mfence.c).
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>

#include "qgpu_device.h"
#include "qgpu_submit_sync.h"

/* Entry @i of the user's array at @entries; only known flags. */
static int qgpu_sync_entry(struct qgpu_device *qdev, u64 entries, u32 i,
			   struct drm_qgpu_sync_entry *e)
{
	if (copy_from_user(e, u64_to_user_ptr(entries) + i * sizeof(*e),
			   sizeof(*e)))
		return -EFAULT;
	if (QGPU_IOCTL_DBG(qdev, e->flags & ~QGPU_SYNC_FLAGS))
		return -EINVAL;
	return 0;
}

/* A monitored in-sync: the fence "@e's fence reached @e's value". */
static int qgpu_in_sync_monitored(struct qgpu_device *qdev,
				  struct drm_file *file,
				  const struct drm_qgpu_sync_entry *e,
				  struct dma_fence **fence)
{
	struct qgpu_mfence *mf = qgpu_mfence_lookup(file->driver_priv,
						    e->handle);
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, !mf))
		return -ENOENT;
	/* the kernel does not wait for a submit: the value must be queued */
	if (QGPU_IOCTL_DBG(qdev, e->point > atomic64_read(&mf->queued)))
		ret = -EINVAL;
	else
		*fence = qgpu_mfence_fence(qdev, mf, e->point);
	if (!ret && !*fence)
		ret = -ENOMEM;
	qgpu_mfence_put(mf);
	return ret;
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
		if (e.flags & QGPU_SYNC_MONITORED)
			ret = qgpu_in_sync_monitored(qdev, file, &e,
						     &in->fence[i]);
		else
			ret = drm_syncobj_find_fence(file, e.handle, e.point,
						     0, &in->fence[i]);
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

/*
 * The next value of @mf for this submission: above what is queued and
 * above what the submission writes to it already.
 */
static u64 qgpu_out_sync_floor(const struct qgpu_mfence_sigs *sigs,
			       struct qgpu_mfence *mf)
{
	u64 v = atomic64_read(&mf->queued);
	u32 i;

	for (i = 0; i < sigs->n; i++)
		if (sigs->s[i].mf == mf && sigs->s[i].value > v)
			v = sigs->s[i].value;
	return v;
}

/* A monitored out-sync: a value the submission's last portion writes. */
static int qgpu_out_sync_monitored(struct qgpu_device *qdev,
				   struct drm_file *file,
				   const struct drm_qgpu_sync_entry *e,
				   struct qgpu_mfence_sigs *sigs)
{
	struct qgpu_mfence *mf = qgpu_mfence_lookup(file->driver_priv,
						    e->handle);
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, !mf))
		return -ENOENT;
	if (QGPU_IOCTL_DBG(qdev, e->point <= qgpu_out_sync_floor(sigs, mf)))
		ret = -EINVAL;
	else
		qgpu_mfence_sigs_add(sigs, mf, e->point);
	qgpu_mfence_put(mf);
	return ret;
}

/**
 * qgpu_out_sync_next - add "@mf advances by one" to a submission's values
 * @qdev: device
 * @out: the submission's out-syncs (their values come first)
 * @mf: the context's monitored fence
 * @value: returns the value @mf reaches when the submission is done
 *
 * Return: 0, or -EINVAL when @mf is at its largest value already (queued,
 * or written by one of the submission's out-syncs): one more would wrap
 * to 0, and the device would write the fence back.
 */
int qgpu_out_sync_next(struct qgpu_device *qdev, struct qgpu_out_syncs *out,
		       struct qgpu_mfence *mf, u64 *value)
{
	u64 v = qgpu_out_sync_floor(out->sigs, mf);

	if (QGPU_IOCTL_DBG(qdev, v == U64_MAX))
		return -EINVAL;
	qgpu_mfence_sigs_add(out->sigs, mf, v + 1);
	*value = v + 1;
	return 0;
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
	/* one more value: the context's own monitored fence */
	out->sigs = qgpu_mfence_sigs_alloc(n + 1);
	if (!out->obj || !out->chain || !out->point || !out->sigs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = qgpu_sync_entry(qdev, entries, i, &e);
		if (ret)
			return ret;
		if (e.flags & QGPU_SYNC_MONITORED) {
			ret = qgpu_out_sync_monitored(qdev, file, &e,
						      out->sigs);
			if (ret)
				return ret;
			out->n++;
			continue;
		}
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
		if (!out->obj[i])
			continue;	/* a monitored fence: the job writes it */
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
		if (out->obj[i])
			drm_syncobj_put(out->obj[i]);
	for (i = 0; out->chain && i < out->n; i++)
		dma_fence_chain_free(out->chain[i]);
	kfree(out->obj);
	kfree(out->chain);
	kfree(out->point);
	qgpu_mfence_sigs_free(out->sigs);
	memset(out, 0, sizeof(*out));
}
