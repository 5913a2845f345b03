// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: MakeResident and Evict in the virtual addressing model, "Making an
 * allocation resident" of "GpuMmu Example Scenarios" (WDK).
 *
 * In the caller's thread, under the process's address-space lock: the
 * list is checked, the allocations' system pages are taken (pinned for as
 * long as the allocation lives), each allocation is committed to VRAM (or
 * evicted), which updates the process's page-table entries and flushes its
 * TLB and, for an allocation new in VRAM, fills it with zeros
 * (qgpu_migrate.c, qgpu_pagetable.c); then a new paging fence value is
 * taken from the process's paging-fence timeline, and it signals once the
 * paging engine has run all that was queued; the ioctl returns without
 * waiting. A DMA buffer of the process waits for its latest paging fence.
 *
 * The fence is published only once what it waits for is queued. A fence
 * published earlier could be made a DMA buffer's dependency (an in-sync,
 * or a sync_file imported into a dma-buf) before its own paging was
 * queued; a move of an allocation that DMA buffer uses, queued meanwhile,
 * waits for the DMA buffer, and the fence would then wait for the move: a
 * cycle that stops the paging engine, which every process shares. Now
 * nothing queued after the fence exists is among what it waits for.
 */
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "qgpu_device.h"
#include "qgpu_gem.h"
#include "qgpu_mm.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

/**
 * struct qgpu_paging_fence - a process's paging fence value
 * @base: the fence (seqno = the value)
 * @lock: its lock
 * @root: the process's address space, for tracing
 * @cb: signals @base when the paging it waits for is done
 * @error: the request's error, given to @base when it signals
 */
struct qgpu_paging_fence {
	struct dma_fence base;
	spinlock_t lock;		/* the fence's */
	u64 root;
	struct dma_fence_cb cb;
	int error;
};

/**
 * struct qgpu_residency_req - one MakeResident or Evict
 * @vm: the process's address space (a reference)
 * @bos: the allocations (a reference each)
 * @count: how many
 * @evict: Evict rather than MakeResident
 */
struct qgpu_residency_req {
	struct qgpu_vm *vm;
	struct qgpu_bo **bos;
	u32 count;
	bool evict;
};

static const char *qgpu_pf_driver_name(struct dma_fence *f)
{
	return QGPU_DRIVER_NAME;
}

static const char *qgpu_pf_timeline_name(struct dma_fence *f)
{
	return "paging-fence";
}

static const struct dma_fence_ops qgpu_paging_fence_ops = {
	.get_driver_name = qgpu_pf_driver_name,
	.get_timeline_name = qgpu_pf_timeline_name,
	.release = qgpu_fence_free,
};

static void qgpu_pf_signal(struct qgpu_paging_fence *pf, int error)
{
	if (error)
		dma_fence_set_error(&pf->base, error);
	trace_qgpu_paging_signal(pf->root, pf->base.seqno, true, error);
	dma_fence_signal(&pf->base);
	dma_fence_put(&pf->base);
}

static void qgpu_pf_done(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct qgpu_paging_fence *pf = container_of(cb, typeof(*pf), cb);

	qgpu_pf_signal(pf, pf->error ?: f->error);
}

static void qgpu_req_free(struct qgpu_residency_req *req)
{
	u32 i;

	for (i = 0; i < req->count; i++)
		if (req->bos[i])
			drm_gem_object_put(&req->bos[i]->base);
	kvfree(req->bos);
	qgpu_vm_put(req->vm);
	kfree(req);
}

/* Everything queued on the paging engine so far (a reference), or NULL */
static struct dma_fence *qgpu_paging_tail(struct qgpu_device *qdev)
{
	lockdep_assert_held(&qdev->mm_lock);
	return dma_fence_get(qdev->pbuf_last);
}

/*
 * Commit or evict each allocation; returns what the paging fence waits
 * for (everything queued on the paging engine so far: a reference, or
 * NULL) and the first error in @err.
 */
static struct dma_fence *qgpu_residency_do(struct qgpu_residency_req *req,
					   int *err)
{
	struct qgpu_device *qdev = req->vm->qdev;
	struct dma_fence *tail;
	int ret = 0, r;
	u32 i;

	qgpu_mm_lock(qdev, NULL);
	for (i = 0; i < req->count; i++) {
		trace_qgpu_mm_req(QGPU_REQ_MAKE_RESIDENT, req->bos[i]->id,
				  req->evict);
		r = req->evict ? qgpu_mm_evict(req->bos[i], true,
					       QGPU_WHY_REQUEST) :
		    qgpu_mm_use_resident(req->bos[i]);
		/* a use for the reuse-interval policy (it ticks no clock) */
		if (!r && !req->evict)
			qgpu_mm_note_use(req->bos[i], qdev->lru_tick);
		if (r && !ret)
			ret = r;
	}
	tail = qgpu_paging_tail(qdev);
	qgpu_mm_unlock(qdev);
	*err = ret;
	return tail;
}

/* Look up, check and pin the system pages of the listed allocations. */
static int qgpu_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The index of the first entry of @handles that repeats an earlier one, or
 * @n: sorted (handle, index) pairs, so the cost stays n log n for the
 * largest lists.
 */
static u32 qgpu_first_duplicate(const u32 *handles, u32 n)
{
	u64 *key = kvmalloc_array(n, sizeof(*key), GFP_KERNEL);
	u32 i, first = n;

	if (!key)
		return U32_MAX;
	for (i = 0; i < n; i++)
		key[i] = (u64)handles[i] << 32 | i;
	sort(key, n, sizeof(*key), qgpu_cmp_u64, NULL);
	for (i = 1; i < n; i++)
		if (key[i] >> 32 == key[i - 1] >> 32 &&
		    (u32)key[i] < first)
			first = (u32)key[i];
	kvfree(key);
	return first;
}

static int qgpu_req_fill(struct drm_file *file, struct qgpu_residency_req *req,
			 const u32 *handles)
{
	struct qgpu_device *qdev = to_qdev(file->minor->dev);
	u32 i, dup = qgpu_first_duplicate(handles, req->count);
	int ret = 0;

	if (dup == U32_MAX)
		return -ENOMEM;
	/* entry by entry: a duplicate is EINVAL, an unknown handle ENOENT */
	for (i = 0; i < req->count; i++) {
		if (QGPU_IOCTL_DBG(qdev, i == dup))
			return -EINVAL;
		req->bos[i] = qgpu_bo_lookup(file, handles[i]);
		if (!req->bos[i])
			return -ENOENT;
	}
	qgpu_mm_lock(qdev, file->driver_priv);
	for (i = 0; i < req->count && !ret; i++) {
		struct qgpu_bo *bo = req->bos[i];

		/* OfferAllocations: an offered one is reclaimed first */
		if (!req->evict && QGPU_IOCTL_DBG(qdev, bo->offered)) {
			ret = -EINVAL;
			continue;
		}
		/* what may not go to VRAM now: imported, attached, Lock2 */
		if (!req->evict &&
		    QGPU_IOCTL_DBG(qdev, bo->sgt || bo->attachments ||
				   (bo->lock_count &&
				    qgpu_bo_lock_outside_vram(bo))))
			ret = -EBUSY;
		else
			ret = qgpu_bo_backing(bo);
	}
	qgpu_mm_unlock(qdev);
	return ret;
}

/*
 * A new paging fence value, on the process's timeline, waiting for @tail,
 * the device's last paging job when the request was done (paging jobs run
 * in order: everything the request queued, and everything an earlier
 * value waits for, is done then), with @err when the request failed part
 * way; under vm->lock. The error waits for the tail too: the values of one
 * timeline signal in order. Returns the value.
 */
static u64 qgpu_pf_publish(struct qgpu_vm *vm, struct qgpu_paging_fence *pf,
			   struct dma_fence_chain *chain,
			   struct dma_fence *tail, int err)
{
	u64 value = ++vm->paging_seqno;

	lockdep_assert_held(&vm->lock);
	pf->error = err;
	spin_lock_init(&pf->lock);
	pf->root = qgpu_vm_root_desc(vm);
	dma_fence_init(&pf->base, &qgpu_paging_fence_ops, &pf->lock,
		       vm->fence_context, value);
	qgpu_fence_count_new();
	drm_syncobj_add_point(vm->syncobj, chain, &pf->base, value);
	qgpu_vm_set_fence(vm, &vm->paging_fence, &pf->base);
	trace_qgpu_paging_signal(pf->root, value, false, 0);
	/* SignalSynchronizationObject: once the paging engine ran it all */
	if (!tail || dma_fence_add_callback(tail, &pf->cb, qgpu_pf_done))
		qgpu_pf_signal(pf, err ?: tail ? tail->error : 0);
	return value;
}

int qgpu_make_resident_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_make_resident *args = data;
	struct qgpu_paging_fence *pf = NULL;
	struct dma_fence_chain *chain = NULL;
	struct qgpu_residency_req *req;
	struct dma_fence *tail;
	u32 *handles = NULL;
	int ret, err;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_MAKE_RESIDENT_FLAGS) ||
	    QGPU_IOCTL_DBG(qdev, !args->count ||
			   args->count > QGPU_MAX_RESIDENT))
		return -EINVAL;
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	req->evict = args->flags & QGPU_MAKE_RESIDENT_EVICT;
	req->vm = qgpu_vm_get(file);
	if (IS_ERR(req->vm)) {
		ret = PTR_ERR(req->vm);
		req->vm = NULL;
		goto out;
	}
	req->bos = kvcalloc(args->count, sizeof(*req->bos), GFP_KERNEL);
	handles = kvmalloc_array(args->count, sizeof(*handles), GFP_KERNEL);
	ret = !req->bos || !handles ? -ENOMEM : 0;
	if (!ret && copy_from_user(handles, u64_to_user_ptr(args->handles),
				   args->count * sizeof(*handles)))
		ret = -EFAULT;
	req->count = req->bos ? args->count : 0;
	if (!ret)
		ret = qgpu_req_fill(file, req, handles);
	/* the process's tables exist before its first paging fence */
	if (!ret)
		ret = qgpu_vm_ready(req->vm);
	if (!ret) {
		pf = kzalloc(sizeof(*pf), GFP_KERNEL);
		chain = dma_fence_chain_alloc();
		if (!pf || !chain)
			ret = -ENOMEM;
	}
	if (ret) {
		kfree(pf);
		dma_fence_chain_free(chain);
		goto out;
	}
	/* in request order on the timeline; the fence after its work */
	mutex_lock(&req->vm->lock);
	tail = qgpu_residency_do(req, &err);
	args->paging_fence = qgpu_pf_publish(req->vm, pf, chain, tail, err);
	mutex_unlock(&req->vm->lock);
	dma_fence_put(tail);
	atomic64_inc(&qdev->mmu_stats.make_resident_calls);
out:
	kvfree(handles);
	qgpu_req_free(req);
	return ret;
}
