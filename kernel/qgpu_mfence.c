// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: monitored fences ("context monitoring" in "Allocation Usage
 * Tracking", WDK). A monitored fence is a 64-bit value in a page of system
 * memory that belongs to one DRM file: the render ring's FENCE commands
 * write it when a submission is done, user space reads it through a
 * read-only mapping of the page, waiters sleep on the device's interrupt,
 * and "the value reached V" becomes a dma_fence for syncobjs and for
 * submissions that wait for it.
 */
#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>
#include <qgpu/qgpu_cmd.h>

#include "qgpu_device.h"
#include "qgpu_mfence.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_trace.h"

/**
 * struct qgpu_mfence_page - a page of one file's fence values
 * @ref: the file, and each fence in it
 * @drm: the device it is mapped for (a reference)
 * @page: the page
 * @dma: its bus address
 * @cpu: its kernel address
 * @lock: protects @used
 * @used: slots holding a fence
 */
struct qgpu_mfence_page {
	struct kref ref;
	struct drm_device *drm;
	struct page *page;
	dma_addr_t dma;
	u64 *cpu;
	spinlock_t lock;	/* protects used */
	DECLARE_BITMAP(used, QGPU_MFENCE_PER_PAGE);
};

static void qgpu_mfence_page_release(struct kref *ref)
{
	struct qgpu_mfence_page *p = container_of(ref, typeof(*p), ref);

	dma_unmap_page(p->drm->dev, p->dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	/* user mappings hold their own reference on the page */
	put_page(p->page);
	drm_dev_put(p->drm);
	kfree(p);
}

static struct qgpu_mfence_page *qgpu_mfence_page_new(struct qgpu_device *qdev)
{
	struct qgpu_mfence_page *p;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	p->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!p->page)
		goto err;
	p->dma = dma_map_page(qdev->drm.dev, p->page, 0, PAGE_SIZE,
			      DMA_BIDIRECTIONAL);
	if (dma_mapping_error(qdev->drm.dev, p->dma)) {
		__free_page(p->page);
		goto err;
	}
	p->cpu = page_address(p->page);
	kref_init(&p->ref);
	spin_lock_init(&p->lock);
	drm_dev_get(&qdev->drm);
	p->drm = &qdev->drm;
	return p;
err:
	kfree(p);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The fences                                                                */

static void qgpu_mfence_free_work(struct work_struct *work)
{
	struct qgpu_mfence *mf = container_of(work, typeof(*mf), free_work);
	struct qgpu_mfence_page *p = mf->page;

	spin_lock(&p->lock);
	__clear_bit(mf->cpu - p->cpu, p->used);
	spin_unlock(&p->lock);
	kref_put(&p->ref, qgpu_mfence_page_release);
	kfree(mf);
}

/* The last reference may go in any context (a dma_fence's release). */
static void qgpu_mfence_release(struct kref *ref)
{
	struct qgpu_mfence *mf = container_of(ref, typeof(*mf), ref);

	INIT_WORK(&mf->free_work, qgpu_mfence_free_work);
	/* the module's: its exit drains it (qgpu_fence_free()) */
	queue_work(qgpu_reap_wq, &mf->free_work);
}

struct qgpu_mfence *qgpu_mfence_get(struct qgpu_mfence *mf)
{
	kref_get(&mf->ref);
	return mf;
}

void qgpu_mfence_put(struct qgpu_mfence *mf)
{
	if (mf)
		kref_put(&mf->ref, qgpu_mfence_release);
}

static u64 qgpu_mfence_value(const struct qgpu_mfence *mf)
{
	return READ_ONCE(*mf->cpu);
}

/* Raise the value to at least @value from the CPU (never lower it). */
static void qgpu_mfence_cpu_write(struct qgpu_mfence *mf, u64 value)
{
	u64 old = qgpu_mfence_value(mf);

	while (old < value) {
		u64 seen = cmpxchg64(mf->cpu, old, value);

		if (seen == old)
			break;
		old = seen;
	}
}

void qgpu_mfence_file_init(struct qgpu_mfence_file *mff)
{
	mutex_init(&mff->lock);
	xa_init_flags(&mff->handles, XA_FLAGS_ALLOC1);
}

void qgpu_mfence_file_fini(struct qgpu_mfence_file *mff)
{
	struct qgpu_mfence *mf;
	unsigned long h;
	u32 i;

	xa_for_each(&mff->handles, h, mf)
		qgpu_mfence_put(mf);
	xa_destroy(&mff->handles);
	for (i = 0; i < QGPU_MFENCE_PAGES; i++)
		if (mff->pages[i])
			kref_put(&mff->pages[i]->ref, qgpu_mfence_page_release);
	mutex_destroy(&mff->lock);
}

/* A free slot of @qf's pages (a new page if needed), under mff->lock. */
static int qgpu_mfence_slot(struct qgpu_device *qdev,
			    struct qgpu_mfence_file *mff,
			    struct qgpu_mfence_page **page)
{
	u32 i, slot;

	for (i = 0; i < QGPU_MFENCE_PAGES; i++) {
		struct qgpu_mfence_page *p = mff->pages[i];

		if (!p) {
			p = qgpu_mfence_page_new(qdev);
			if (!p)
				return -ENOMEM;
			mff->pages[i] = p;
		}
		spin_lock(&p->lock);
		slot = find_first_zero_bit(p->used, QGPU_MFENCE_PER_PAGE);
		if (slot < QGPU_MFENCE_PER_PAGE) {
			__set_bit(slot, p->used);
			spin_unlock(&p->lock);
			*page = p;
			return slot;
		}
		spin_unlock(&p->lock);
	}
	return -ENOSPC;
}

/**
 * qgpu_mfence_new - create a monitored fence with a handle in @qf
 * @qdev: device
 * @qf: the file
 * @initial: its first value
 * @handle: returns the handle
 * @out: if not NULL, returns a reference for the caller
 *
 * Return: 0, -ENOSPC (the file has QGPU_MFENCE_MAX) or -ENOMEM.
 */
int qgpu_mfence_new(struct qgpu_device *qdev, struct qgpu_file *qf,
		    u64 initial, u32 *handle, struct qgpu_mfence **out)
{
	struct qgpu_mfence_file *mff = &qf->mfences;
	struct qgpu_mfence_page *p;
	struct qgpu_mfence *mf;
	int slot, ret;

	mf = kzalloc(sizeof(*mf), GFP_KERNEL);
	if (!mf)
		return -ENOMEM;
	mutex_lock(&mff->lock);
	slot = qgpu_mfence_slot(qdev, mff, &p);
	mutex_unlock(&mff->lock);
	if (slot < 0) {
		kfree(mf);
		return slot;
	}
	kref_init(&mf->ref);
	kref_get(&p->ref);
	mf->page = p;
	mf->cpu = p->cpu + slot;
	mf->dev_addr = QGPU_SYS_BIT | (p->dma + slot * sizeof(u64));
	mf->fence_context = dma_fence_context_alloc(1);
	mf->pending = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&mf->active);
	WRITE_ONCE(*mf->cpu, initial);
	atomic64_set(&mf->queued, initial);
	atomic64_set(&mf->done, initial);
	/*
	 * The caller's reference first: once in the handle table the fence
	 * is the table's, and another thread may destroy it at once.
	 */
	if (out)
		*out = qgpu_mfence_get(mf);
	ret = xa_alloc(&mff->handles, handle, mf,
		       XA_LIMIT(1, QGPU_MFENCE_MAX), GFP_KERNEL);
	if (ret) {
		if (out) {
			qgpu_mfence_put(mf);
			*out = NULL;
		}
		qgpu_mfence_put(mf);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	return 0;
}

/* A reference to @qf's fence @handle, or NULL */
struct qgpu_mfence *qgpu_mfence_lookup(struct qgpu_file *qf, u32 handle)
{
	struct qgpu_mfence *mf;

	xa_lock(&qf->mfences.handles);
	mf = xa_load(&qf->mfences.handles, handle);
	if (mf)
		qgpu_mfence_get(mf);
	xa_unlock(&qf->mfences.handles);
	return mf;
}

/* Close @handle if it still names @mf (a context's fence at its destroy). */
void qgpu_mfence_close(struct qgpu_file *qf, u32 handle,
		       struct qgpu_mfence *mf)
{
	if (xa_cmpxchg(&qf->mfences.handles, handle, mf, NULL, 0) == mf)
		qgpu_mfence_put(mf);
}

/* ------------------------------------------------------------------------ */
/* "The value reached V" as a dma_fence                                      */

/**
 * struct qgpu_mfence_dfence - signals when a monitored fence reaches @value
 * @base: the dma_fence (first: dma_fence_free() frees the whole)
 * @lock: its lock
 * @mf: the monitored fence (a reference)
 * @qdev: the device whose interrupts signal it
 * @value: the value
 * @node: in @mf's pending tree while signalling is enabled
 * @done: on the interrupt handler's list of fences to signal
 */
struct qgpu_mfence_dfence {
	struct dma_fence base;
	spinlock_t lock;	/* the dma_fence's lock */
	struct qgpu_mfence *mf;
	struct qgpu_device *qdev;
	u64 value;
	struct rb_node node;
	struct list_head done;
};

static struct qgpu_mfence_dfence *to_dfence(struct dma_fence *f)
{
	return container_of(f, struct qgpu_mfence_dfence, base);
}

static const char *qgpu_dfence_driver_name(struct dma_fence *f)
{
	return QGPU_DRIVER_NAME;
}

static const char *qgpu_dfence_timeline_name(struct dma_fence *f)
{
	return "monitored-fence";
}

static bool qgpu_dfence_signaled(struct dma_fence *f)
{
	struct qgpu_mfence_dfence *df = to_dfence(f);

	return qgpu_mfence_value(df->mf) >= df->value;
}

static bool qgpu_dfence_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct qgpu_mfence_dfence, node)->value <
	       rb_entry(b, struct qgpu_mfence_dfence, node)->value;
}

/*
 * Called with f->lock held: into its monitored fence's pending tree, by
 * value (qgpu_mfence_sigs_written() takes it from there when a job writes
 * the fence), and the monitored fence onto the device's active list (the
 * device's removal ends what is on it).
 */
static bool qgpu_dfence_enable_signaling(struct dma_fence *f)
{
	struct qgpu_mfence_dfence *df = to_dfence(f);
	struct qgpu_device *qdev = df->qdev;
	unsigned long flags;
	bool pending = true;

	/*
	 * Checked and listed under mfence_lock: a value written after the
	 * check is followed by an interrupt whose pass finds it listed.
	 */
	spin_lock_irqsave(&qdev->mfence_lock, flags);
	if (qdev->mfence_dead) {
		dma_fence_set_error(f, -ENODEV);
		pending = false;
	} else if (qgpu_dfence_signaled(f)) {
		pending = false;
	} else {
		dma_fence_get(f);
		rb_add_cached(&df->node, &df->mf->pending, qgpu_dfence_less);
		if (list_empty(&df->mf->active))
			list_add_tail(&df->mf->active, &qdev->mfence_active);
	}
	spin_unlock_irqrestore(&qdev->mfence_lock, flags);
	return pending;
}

static void qgpu_dfence_release(struct dma_fence *f)
{
	struct qgpu_mfence_dfence *df = to_dfence(f);

	qgpu_mfence_put(df->mf);
	qgpu_fence_free(f);
}

/*
 * Sequence numbers are the fence's 64-bit values: compared as 64-bit
 * numbers (dma_fence_is_later(), sync file merges), not by their low 32
 * bits.
 */
static const struct dma_fence_ops qgpu_dfence_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = qgpu_dfence_driver_name,
	.get_timeline_name = qgpu_dfence_timeline_name,
	.enable_signaling = qgpu_dfence_enable_signaling,
	.signaled = qgpu_dfence_signaled,
	.release = qgpu_dfence_release,
};

/**
 * qgpu_mfence_fence - a dma_fence that signals when @mf reaches @value
 * @qdev: device
 * @mf: the monitored fence
 * @value: the value; the caller has checked that it is queued
 *
 * Return: a new fence reference, or NULL (no memory).
 */
struct dma_fence *qgpu_mfence_fence(struct qgpu_device *qdev,
				    struct qgpu_mfence *mf, u64 value)
{
	struct qgpu_mfence_dfence *df;

	df = kzalloc(sizeof(*df), GFP_KERNEL_ACCOUNT);
	if (!df)
		return NULL;
	spin_lock_init(&df->lock);
	RB_CLEAR_NODE(&df->node);
	INIT_LIST_HEAD(&df->done);
	df->mf = qgpu_mfence_get(mf);
	df->qdev = qdev;
	df->value = value;
	dma_fence_init(&df->base, &qgpu_dfence_ops, &df->lock,
		       mf->fence_context, value);
	qgpu_fence_count_new();
	return &df->base;
}

/* Take @mf's waiting dma_fences whose value is reached (all: @all) */
static void qgpu_mfence_take_reached(struct qgpu_mfence *mf, bool all,
				     struct list_head *done)
{
	struct qgpu_mfence_dfence *df;
	struct rb_node *first;
	u64 value = qgpu_mfence_value(mf);

	while ((first = rb_first_cached(&mf->pending))) {
		df = rb_entry(first, struct qgpu_mfence_dfence, node);
		if (df->value > value && !all)
			break;
		rb_erase_cached(first, &mf->pending);
		RB_CLEAR_NODE(first);
		list_add_tail(&df->done, done);
	}
	if (RB_EMPTY_ROOT(&mf->pending.rb_root))
		list_del_init(&mf->active);
}

/* Signal what qgpu_mfence_take_reached() took, outside mfence_lock */
static void qgpu_mfence_signal_taken(struct list_head *done)
{
	struct qgpu_mfence_dfence *df, *tmp;

	/* enable_signaling nests the other way */
	list_for_each_entry_safe(df, tmp, done, done) {
		list_del_init(&df->done);
		if (!qgpu_dfence_signaled(&df->base))
			dma_fence_set_error(&df->base, -ENODEV);
		dma_fence_signal(&df->base);
		dma_fence_put(&df->base);
	}
}

/**
 * qgpu_mfence_sigs_written - the values of @sigs were written
 * @qdev: device
 * @sigs: the values a job writes (by the device, its FENCE commands before
 *	the job's own fence) or the kernel wrote for it
 *
 * Signals the "value reached" dma_fences of those monitored fences whose
 * value is there. Only what a job or the kernel writes moves a monitored
 * fence (user space maps its page read-only), so looking at the fences a
 * job wrote is looking at every fence that moved: the cost, in the
 * interrupt handler, is the job's own values (at most %QGPU_MAX_SYNCS)
 * plus what it signals, whatever other processes export.
 */
void qgpu_mfence_sigs_written(struct qgpu_device *qdev,
			      const struct qgpu_mfence_sigs *sigs)
{
	unsigned long flags;
	LIST_HEAD(done);
	u32 i;

	if (!sigs)
		return;
	spin_lock_irqsave(&qdev->mfence_lock, flags);
	for (i = 0; i < sigs->n; i++)
		if (!list_empty(&sigs->s[i].mf->active))
			qgpu_mfence_take_reached(sigs->s[i].mf,
						 qdev->mfence_dead, &done);
	spin_unlock_irqrestore(&qdev->mfence_lock, flags);
	qgpu_mfence_signal_taken(&done);
}

/**
 * qgpu_mfence_irq - monitored fences may have advanced
 * @qdev: device
 *
 * From the interrupt handler after every render-engine interrupt (a FENCE
 * that writes a monitored fence is always followed on its ring by the
 * job's interrupting FENCE): wakes the MFENCE_WAIT sleepers, which look at
 * their own values. The dma_fences are signalled per job
 * (qgpu_mfence_sigs_written()).
 */
void qgpu_mfence_irq(struct qgpu_device *qdev)
{
	wake_up_all(&qdev->mfence_wq);
}

/* The device is gone: what still waits is ended with an error. */
void qgpu_mfence_device_fini(struct qgpu_device *qdev)
{
	struct qgpu_mfence *mf, *next;
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&qdev->mfence_lock, flags);
	qdev->mfence_dead = true;
	list_for_each_entry_safe(mf, next, &qdev->mfence_active, active)
		qgpu_mfence_take_reached(mf, true, &done);
	spin_unlock_irqrestore(&qdev->mfence_lock, flags);
	qgpu_mfence_signal_taken(&done);
	qgpu_mfence_irq(qdev);
}

/* ------------------------------------------------------------------------ */
/* The values a job writes                                                   */

struct qgpu_mfence_sigs *qgpu_mfence_sigs_alloc(u32 n)
{
	struct qgpu_mfence_sigs *sigs;

	sigs = kzalloc(struct_size(sigs, s, n), GFP_KERNEL);
	if (sigs)
		sigs->max = n;
	return sigs;
}

/* Add @mf (takes a reference) := @value. */
void qgpu_mfence_sigs_add(struct qgpu_mfence_sigs *sigs,
			  struct qgpu_mfence *mf, u64 value)
{
	if (WARN_ON_ONCE(sigs->n >= sigs->max))
		return;
	sigs->s[sigs->n].mf = qgpu_mfence_get(mf);
	sigs->s[sigs->n].value = value;
	sigs->n++;
}

/* Free values that were never queued (nothing is written). */
void qgpu_mfence_sigs_free(struct qgpu_mfence_sigs *sigs)
{
	u32 i;

	for (i = 0; sigs && i < sigs->n; i++)
		qgpu_mfence_put(sigs->s[i].mf);
	kfree(sigs);
}

/* The ring commands that write them (@cmds NULL: their length). */
u32 qgpu_mfence_sigs_emit(const struct qgpu_mfence_sigs *sigs, u32 *cmds)
{
	u32 i, n = 0;

	for (i = 0; sigs && i < sigs->n; i++)
		n += qgpu_enc_fence_write(cmds ? cmds + n : NULL,
					  sigs->s[i].mf->dev_addr,
					  sigs->s[i].value);
	return n;
}

/* Raise @v to at least @value; returns what it holds then. */
static u64 qgpu_mfence_max(atomic64_t *v, u64 value)
{
	s64 old = atomic64_read(v);

	while ((u64)old < value)
		if (atomic64_try_cmpxchg(v, &old, value))
			return value;
	return old;
}

/* The values are queued now: later ones must be higher. */
void qgpu_mfence_sigs_queued(const struct qgpu_mfence_sigs *sigs)
{
	u32 i;

	for (i = 0; sigs && i < sigs->n; i++) {
		struct qgpu_mfence *mf = sigs->s[i].mf;

		qgpu_mfence_max(&mf->queued, sigs->s[i].value);
		trace_qgpu_mfence_queued(mf->dev_addr, sigs->s[i].value);
	}
}

/**
 * qgpu_mfence_sigs_reach - every value of @sigs is reached now
 * @qdev: device
 * @sigs: the values (may be NULL)
 *
 * What the device did not write, the kernel writes, and the waiters are
 * woken. For a job that will not run (this time or any more), before
 * drm_sched signals its finished fence, so that whoever that fence wakes
 * reads the values. Any context, a fence callback's included.
 *
 * A job of another context that wrote a higher value to the same fence
 * earlier may have been overtaken by this one's lower value (the fence
 * stepped back): the highest value of a job that is done is written
 * again, so that a value once reached is reached again in finite time and
 * what waits for it (an exported dma_fence included) ends.
 */
void qgpu_mfence_sigs_reach(struct qgpu_device *qdev,
			    const struct qgpu_mfence_sigs *sigs)
{
	bool wrote = false;
	u32 i;

	for (i = 0; sigs && i < sigs->n; i++) {
		struct qgpu_mfence *mf = sigs->s[i].mf;
		u64 top = qgpu_mfence_max(&mf->done, sigs->s[i].value);

		if (qgpu_mfence_value(mf) < top) {
			qgpu_mfence_cpu_write(mf, top);
			wrote = true;
		}
	}
	if (wrote) {
		qgpu_mfence_sigs_written(qdev, sigs);
		qgpu_mfence_irq(qdev);
	}
}

/**
 * qgpu_mfence_sigs_done - the job that writes @sigs is finished with
 * @qdev: device
 * @sigs: the values (freed here; may be NULL)
 *
 * Whether the job ran, was abandoned or never reached the device, every
 * value it promised is reached now (a job that ran wrote them before its
 * own fence; one that did not run had them written before its finished
 * fence, qgpu_mfence_sigs_reach()).
 */
void qgpu_mfence_sigs_done(struct qgpu_device *qdev,
			   struct qgpu_mfence_sigs *sigs)
{
	qgpu_mfence_sigs_reach(qdev, sigs);
	qgpu_mfence_sigs_free(sigs);
}

/* ------------------------------------------------------------------------ */
/* The read-only mapping                                                     */

/**
 * qgpu_mfence_mmap - map one of the file's fence pages, read-only
 * @file: the DRM file
 * @vma: a one-page mapping at QGPU_MFENCE_MMAP_PGOFF + page index
 *
 * Return: 0, -EINVAL (not one page, no such page) or -EACCES (writable).
 */
int qgpu_mfence_mmap(struct drm_file *file, struct vm_area_struct *vma)
{
	struct qgpu_file *qf = file->driver_priv;
	struct qgpu_mfence_file *mff = &qf->mfences;
	unsigned long idx = vma->vm_pgoff - QGPU_MFENCE_MMAP_PGOFF;
	struct page *page = NULL;

	if (vma->vm_pgoff < QGPU_MFENCE_MMAP_PGOFF ||
	    idx >= QGPU_MFENCE_PAGES || vma_pages(vma) != 1)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	mutex_lock(&mff->lock);
	if (mff->pages[idx])
		page = mff->pages[idx]->page;
	mutex_unlock(&mff->lock);
	if (!page)
		return -EINVAL;
	vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
	/* the mapping takes its own reference on the page */
	return vm_insert_page(vma, vma->vm_start, page);
}

/* ------------------------------------------------------------------------ */
/* Ioctls                                                                    */

/**
 * qgpu_mfence_where - where user space reads @mf
 * @qf: its file
 * @mf: the fence
 * @mmap_offset: returns the mmap() offset of its page
 * @offset: returns the byte offset of its value in the page
 */
void qgpu_mfence_where(struct qgpu_file *qf, struct qgpu_mfence *mf,
		       u64 *mmap_offset, u32 *offset)
{
	struct qgpu_mfence_page *p = mf->page;
	u32 i;

	mutex_lock(&qf->mfences.lock);
	for (i = 0; i < QGPU_MFENCE_PAGES; i++)
		if (qf->mfences.pages[i] == p)
			break;
	mutex_unlock(&qf->mfences.lock);
	*mmap_offset = (u64)(QGPU_MFENCE_MMAP_PGOFF + i) << PAGE_SHIFT;
	*offset = (mf->cpu - p->cpu) * sizeof(u64);
}

int qgpu_mfence_create_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_mfence_create *args = data;
	struct qgpu_mfence *mf;
	u32 handle;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->flags || args->pad))
		return -EINVAL;
	ret = qgpu_mfence_new(qdev, qf, args->initial_value, &handle, &mf);
	if (ret)
		return ret;
	args->handle = handle;
	qgpu_mfence_where(qf, mf, &args->mmap_offset, &args->offset);
	qgpu_mfence_put(mf);
	return 0;
}

int qgpu_mfence_destroy_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_mfence_destroy *args = data;
	struct qgpu_mfence *mf;

	if (QGPU_IOCTL_DBG(qf->qdev, args->pad))
		return -EINVAL;
	mf = xa_erase(&qf->mfences.handles, args->handle);
	if (QGPU_IOCTL_DBG(qf->qdev, !mf))
		return -ENOENT;
	qgpu_mfence_put(mf);
	return 0;
}

/* Are the fences at their values (all, or with @any one of them)? */
static bool qgpu_mfence_reached(struct qgpu_mfence **mf, const u64 *values,
				u32 n, bool any, u32 *first)
{
	u32 i;

	for (i = 0; i < n; i++) {
		bool r = qgpu_mfence_value(mf[i]) >= values[i];

		if (any && r) {
			*first = i;
			return true;
		}
		if (!any && !r)
			return false;
	}
	return !any;
}

/* A sleeping MFENCE_WAIT: what it waits for */
struct qgpu_mfence_waiter {
	struct qgpu_device *qdev;
	struct qgpu_mfence **mf;
	const u64 *values;
	u32 n;
	bool any;
	u32 first;
};

static bool qgpu_mfence_wake(struct qgpu_mfence_waiter *w)
{
	return qgpu_mfence_reached(w->mf, w->values, w->n, w->any,
				   &w->first) ||
	       drm_dev_is_unplugged(&w->qdev->drm);
}

int qgpu_mfence_wait_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_mfence_wait *args = data;
	bool any = args->flags & QGPU_MFENCE_WAIT_ANY;
	struct qgpu_mfence *mf[QGPU_MFENCE_WAIT_MAX] = {};
	u32 handles[QGPU_MFENCE_WAIT_MAX], first = 0, i, n = args->count;
	struct qgpu_mfence_waiter w;
	u64 *values;
	long timeout;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_MFENCE_WAIT_FLAGS) ||
	    QGPU_IOCTL_DBG(qdev, args->pad) ||
	    QGPU_IOCTL_DBG(qdev, !n || n > QGPU_MFENCE_WAIT_MAX))
		return -EINVAL;
	values = kmalloc_array(n, sizeof(*values), GFP_KERNEL);
	if (!values)
		return -ENOMEM;
	if (copy_from_user(handles, u64_to_user_ptr(args->handles),
			   n * sizeof(u32)) ||
	    copy_from_user(values, u64_to_user_ptr(args->values),
			   n * sizeof(u64))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < n; i++) {
		mf[i] = qgpu_mfence_lookup(qf, handles[i]);
		if (QGPU_IOCTL_DBG(qdev, !mf[i])) {
			ret = -ENOENT;
			goto out;
		}
	}
	timeout = drm_timeout_abs_to_jiffies(args->timeout_ns);
	/* no polling: every render engine interrupt wakes mfence_wq */
	w = (struct qgpu_mfence_waiter){ qdev, mf, values, n, any, 0 };
	while (timeout > 0 && !qgpu_mfence_wake(&w))
		timeout = wait_event_interruptible_timeout(qdev->mfence_wq,
							   qgpu_mfence_wake(&w),
							   timeout);
	if (timeout < 0)
		ret = timeout;
	else if (qgpu_mfence_reached(mf, values, n, any, &first))
		ret = 0;
	else if (drm_dev_is_unplugged(drm))
		ret = -ENODEV;
	else
		ret = -ETIME;
	if (!ret)
		args->first = any ? first : 0;
out:
	for (i = 0; i < n; i++)
		qgpu_mfence_put(mf[i]);
	kfree(values);
	return ret;
}

int qgpu_mfence_export_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct drm_qgpu_mfence_export *args = data;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *syncobj;
	struct dma_fence *fence;
	struct qgpu_mfence *mf;
	int ret = 0;

	if (QGPU_IOCTL_DBG(qdev, args->flags || args->pad))
		return -EINVAL;
	mf = qgpu_mfence_lookup(file->driver_priv, args->handle);
	if (QGPU_IOCTL_DBG(qdev, !mf))
		return -ENOENT;
	if (QGPU_IOCTL_DBG(qdev, args->value > atomic64_read(&mf->queued))) {
		qgpu_mfence_put(mf);
		return -EINVAL;
	}
	syncobj = drm_syncobj_find(file, args->syncobj);
	if (QGPU_IOCTL_DBG(qdev, !syncobj)) {
		qgpu_mfence_put(mf);
		return -ENOENT;
	}
	fence = qgpu_mfence_fence(qdev, mf, args->value);
	if (args->point)
		chain = dma_fence_chain_alloc();
	if (!fence || (args->point && !chain))
		ret = -ENOMEM;
	else if (chain)
		drm_syncobj_add_point(syncobj, chain, fence, args->point);
	else
		drm_syncobj_replace_fence(syncobj, fence);
	if (ret)
		dma_fence_chain_free(chain);
	dma_fence_put(fence);
	drm_syncobj_put(syncobj);
	qgpu_mfence_put(mf);
	return ret;
}
