// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: what the user-mode driver tells the memory manager about its
 * allocations: SetAllocationPriority (the victim policy evicts lower
 * priorities first), OfferAllocations and ReclaimAllocations (an offered
 * allocation's content may be discarded instead of copied out of VRAM;
 * the discard itself is qgpu_migrate.c's).
 */
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"

/*
 * Read @count handles from user pointer @uptr and look every one up.
 * Returns the allocations (a reference each; qgpu_bos_put()), or an
 * ERR_PTR: -EFAULT, -ENOMEM, or -ENOENT for a handle that is not one.
 */
static struct qgpu_bo **qgpu_bos_get(struct drm_file *file, u64 uptr,
				     u32 count)
{
	struct qgpu_bo **bos;
	u32 *handles, i;
	int ret = 0;

	handles = kvmalloc_array(count, sizeof(*handles), GFP_KERNEL);
	bos = kvcalloc(count, sizeof(*bos), GFP_KERNEL);
	if (!handles || !bos) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(handles, u64_to_user_ptr(uptr),
			   (size_t)count * sizeof(*handles))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < count && !ret; i++) {
		bos[i] = qgpu_bo_lookup(file, handles[i]);
		if (!bos[i])
			ret = -ENOENT;
	}
out:
	kvfree(handles);
	if (ret && bos) {
		for (i = 0; i < count; i++)
			if (bos[i])
				drm_gem_object_put(&bos[i]->base);
		kvfree(bos);
	}
	return ret ? ERR_PTR(ret) : bos;
}

static void qgpu_bos_put(struct qgpu_bo **bos, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		drm_gem_object_put(&bos[i]->base);
	kvfree(bos);
}

/**
 * qgpu_gem_set_priority_ioctl - DRM_IOCTL_QGPU_GEM_SET_PRIORITY
 * @drm: device
 * @data: &struct drm_qgpu_gem_set_priority
 * @file: the caller
 *
 * SetAllocationPriority: all or nothing, every entry checked first. The
 * victim policy reads the priorities under mm_lock (qgpu_evict.c).
 */
int qgpu_gem_set_priority_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_set_priority *args = data;
	struct qgpu_bo **bos;
	u32 *prio, i;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags) ||
	    QGPU_IOCTL_DBG(qdev, !args->count ||
			   args->count > QGPU_MAX_PRIORITY_HANDLES))
		return -EINVAL;
	prio = kvmalloc_array(args->count, sizeof(*prio), GFP_KERNEL);
	if (!prio)
		return -ENOMEM;
	if (copy_from_user(prio, u64_to_user_ptr(args->priorities),
			   (size_t)args->count * sizeof(*prio)))
		ret = -EFAULT;
	for (i = 0; i < args->count && !ret; i++)
		if (QGPU_IOCTL_DBG(qdev, prio[i] < QGPU_PRIORITY_MINIMUM ||
				   prio[i] > QGPU_PRIORITY_MAXIMUM))
			ret = -EINVAL;
	if (ret)
		goto out;
	bos = qgpu_bos_get(file, args->handles, args->count);
	if (IS_ERR(bos)) {
		ret = PTR_ERR(bos);
		goto out;
	}
	qgpu_mm_lock(qdev, file->driver_priv);
	for (i = 0; i < args->count; i++) {
		trace_qgpu_mm_req(QGPU_REQ_PRIORITY, bos[i]->id, prio[i]);
		bos[i]->priority = prio[i];
	}
	qgpu_mm_unlock(qdev);
	qgpu_bos_put(bos, args->count);
out:
	kvfree(prio);
	return ret;
}

static int qgpu_cmp_bo(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct qgpu_bo * const *)a;
	uintptr_t y = (uintptr_t)*(struct qgpu_bo * const *)b;

	return x < y ? -1 : x > y;
}

/* -EINVAL when an allocation is listed twice (by any of its handles) */
static int qgpu_bos_unique(struct qgpu_bo **bos, u32 count)
{
	struct qgpu_bo **s;
	int ret = 0;
	u32 i;

	s = kvmalloc_array(count, sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	memcpy(s, bos, (size_t)count * sizeof(*s));
	sort(s, count, sizeof(*s), qgpu_cmp_bo, NULL);
	for (i = 1; i < count && !ret; i++)
		if (s[i] == s[i - 1])
			ret = -EINVAL;
	kvfree(s);
	return ret;
}

/*
 * -EPERM unless every allocation was created by @file: the fate of an
 * allocation's content (OfferAllocations, ReclaimAllocations) is its
 * creator's to decide, not that of a process it was shared with.
 */
static int qgpu_bos_owned(struct qgpu_device *qdev, struct drm_file *file,
			  struct qgpu_bo **bos, u32 count)
{
	struct qgpu_file *qf = file->driver_priv;
	u32 i;

	for (i = 0; i < count; i++)
		if (QGPU_IOCTL_DBG(qdev, bos[i]->owner != qf->vidmem))
			return -EPERM;
	return 0;
}

/**
 * qgpu_gem_offer_ioctl - DRM_IOCTL_QGPU_GEM_OFFER
 * @drm: device
 * @data: &struct drm_qgpu_gem_offer
 * @file: the caller
 *
 * OfferAllocations: all or nothing. Nothing moves now; the next eviction
 * of an offered allocation out of VRAM discards its content.
 */
int qgpu_gem_offer_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_offer *args = data;
	struct qgpu_bo **bos;
	int ret = 0;
	u32 i;

	if (QGPU_IOCTL_DBG(qdev, args->flags || args->pad) ||
	    QGPU_IOCTL_DBG(qdev, !args->count ||
			   args->count > QGPU_MAX_OFFER_HANDLES) ||
	    QGPU_IOCTL_DBG(qdev, args->priority < QGPU_OFFER_PRIORITY_LOW ||
			   args->priority > QGPU_OFFER_PRIORITY_HIGH))
		return -EINVAL;
	bos = qgpu_bos_get(file, args->handles, args->count);
	if (IS_ERR(bos))
		return PTR_ERR(bos);
	ret = qgpu_bos_unique(bos, args->count);
	/* another device's buffer: its content is not ours to discard */
	for (i = 0; i < args->count && !ret; i++)
		if (QGPU_IOCTL_DBG(qdev, bos[i]->base.import_attach))
			ret = -EINVAL;
	if (!ret)
		ret = qgpu_bos_owned(qdev, file, bos, args->count);
	if (ret)
		goto out;
	qgpu_mm_lock(qdev, file->driver_priv);
	for (i = 0; i < args->count && !ret; i++)
		if (QGPU_IOCTL_DBG(qdev, bos[i]->offered))
			ret = -EINVAL;
	for (i = 0; i < args->count && !ret; i++) {
		trace_qgpu_mm_req(QGPU_REQ_OFFER, bos[i]->id, args->priority);
		bos[i]->offered = true;
		bos[i]->offer_priority = args->priority;
		bos[i]->discarded = false;
	}
	qgpu_mm_unlock(qdev);
out:
	qgpu_bos_put(bos, args->count);
	return ret;
}

/**
 * qgpu_gem_reclaim_ioctl - DRM_IOCTL_QGPU_GEM_RECLAIM
 * @drm: device
 * @data: &struct drm_qgpu_gem_reclaim
 * @file: the caller
 *
 * ReclaimAllocations: all or nothing. The results are written after
 * mm_lock is dropped (a page fault on them may need it), into memory
 * found writable before anything changed.
 */
/* Is every one of @bos offered? (EINVAL if not) */
static int qgpu_bos_offered(struct qgpu_device *qdev, struct drm_file *file,
			    struct qgpu_bo **bos, u32 n)
{
	int ret = 0;
	u32 i;

	qgpu_mm_lock(qdev, file->driver_priv);
	for (i = 0; i < n && !ret; i++)
		if (QGPU_IOCTL_DBG(qdev, !bos[i]->offered))
			ret = -EINVAL;
	qgpu_mm_unlock(qdev);
	return ret;
}

int qgpu_gem_reclaim_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_gem_reclaim *args = data;
	void __user *uresults = u64_to_user_ptr(args->results);
	size_t rsize = (size_t)args->count * sizeof(u32);
	struct qgpu_bo **bos;
	u32 *results, i, n = 0;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags || args->pad) ||
	    QGPU_IOCTL_DBG(qdev, !args->count ||
			   args->count > QGPU_MAX_OFFER_HANDLES))
		return -EINVAL;
	args->discarded = 0;
	results = kvcalloc(args->count, sizeof(*results), GFP_KERNEL);
	if (!results)
		return -ENOMEM;
	bos = qgpu_bos_get(file, args->handles, args->count);
	if (IS_ERR(bos)) {
		ret = PTR_ERR(bos);
		goto out_free;
	}
	ret = qgpu_bos_unique(bos, args->count);
	if (!ret)
		ret = qgpu_bos_owned(qdev, file, bos, args->count);
	if (!ret)
		ret = qgpu_bos_offered(qdev, file, bos, args->count);
	/*
	 * Then @results is checked to be writable (by writing it; not under
	 * mm_lock), so that nothing is reclaimed whose result cannot be told.
	 * Another thread may reclaim meanwhile: checked again below.
	 */
	if (!ret && args->results && copy_to_user(uresults, results, rsize))
		ret = -EFAULT;
	if (ret)
		goto out;
	qgpu_mm_lock(qdev, file->driver_priv);
	for (i = 0; i < args->count && !ret; i++)
		if (QGPU_IOCTL_DBG(qdev, !bos[i]->offered))
			ret = -EINVAL;
	for (i = 0; i < args->count && !ret; i++) {
		trace_qgpu_mm_req(QGPU_REQ_RECLAIM, bos[i]->id, 0);
		results[i] = bos[i]->discarded ? QGPU_RECLAIM_DISCARDED :
			     QGPU_RECLAIM_OK;
		n += bos[i]->discarded;
		bos[i]->offered = false;
		bos[i]->discarded = false;
	}
	qgpu_mm_unlock(qdev);
	if (!ret) {
		args->discarded = n;
		if (args->results && copy_to_user(uresults, results, rsize))
			ret = -EFAULT;
	}
out:
	qgpu_bos_put(bos, args->count);
out_free:
	kvfree(results);
	return ret;
}
