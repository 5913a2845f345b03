// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: hardware fences. Each engine's FENCE command writes a seqno to the
 * engine's slot in the fence page and raises an interrupt; the interrupt
 * handler signals every pending fence at or below that seqno.
 */
#include <linux/slab.h>

#include "qgpu_device.h"

struct qgpu_fence {
	struct dma_fence base;
	struct qgpu_engine *eng;
	struct list_head node;
	spinlock_t lock;		/* the dma_fence's lock */
};

static struct qgpu_fence *to_qfence(struct dma_fence *f)
{
	return container_of(f, struct qgpu_fence, base);
}

static const char *qgpu_fence_driver_name(struct dma_fence *f)
{
	return QGPU_DRIVER_NAME;
}

static const char *qgpu_fence_timeline_name(struct dma_fence *f)
{
	return to_qfence(f)->eng->name;
}

static bool qgpu_fence_signaled(struct dma_fence *f)
{
	struct qgpu_fence *qf = to_qfence(f);

	return READ_ONCE(*qf->eng->fence_val) >= f->seqno;
}

/*
 * A dma_fence can outlive every file of the device and the device itself
 * (in a sync file, in another driver's reservation object), and its ops
 * are this module's code and data: the module must not go while one of
 * its fences is alive. Holding a module reference per fence would also
 * refuse the unload of a bound, idle device (which keeps its last paging
 * job's fence), so the module counts its live fences instead and its exit
 * waits, once every device is removed, for those held elsewhere.
 */
static atomic_t qgpu_live_fences = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(qgpu_fences_wq);

/**
 * qgpu_fence_count_new - a new qgpu dma_fence is alive
 *
 * Called by every qgpu fence type after dma_fence_init(); its .release
 * ends in qgpu_fence_free().
 */
void qgpu_fence_count_new(void)
{
	atomic_inc(&qgpu_live_fences);
}

/**
 * qgpu_fence_free - release a qgpu dma_fence
 * @f: the fence, the first member of its allocation
 *
 * Work its release queued (a monitored fence's freeing) is on
 * qgpu_reap_wq already, which the module's exit drains after
 * qgpu_fences_wait_all().
 */
void qgpu_fence_free(struct dma_fence *f)
{
	dma_fence_free(f);
	if (atomic_dec_and_test(&qgpu_live_fences))
		wake_up_all(&qgpu_fences_wq);
}

/**
 * qgpu_fences_wait_all - wait until no qgpu fence is alive
 *
 * From the module's exit, once every device is removed: what is left is
 * held outside the driver (sync files, syncobjs of other drivers). The
 * unload waits for it, saying so every 10 s.
 */
void qgpu_fences_wait_all(void)
{
	while (!wait_event_timeout(qgpu_fences_wq,
				   !atomic_read(&qgpu_live_fences), 10 * HZ))
		pr_info("qgpu: unloading waits for %d fences held outside the driver (sync files, other drivers)\n",
			atomic_read(&qgpu_live_fences));
}

static const struct dma_fence_ops qgpu_fence_ops = {
	.get_driver_name = qgpu_fence_driver_name,
	.get_timeline_name = qgpu_fence_timeline_name,
	.signaled = qgpu_fence_signaled,
	.release = qgpu_fence_free,
};

/* Memory for a hardware fence, taken before the job can run */
void *qgpu_fence_prealloc(void)
{
	return kzalloc(sizeof(struct qgpu_fence), GFP_KERNEL);
}

/**
 * qgpu_fence_create - the hardware fence of a job written to the ring
 * @eng: the engine
 * @seqno: the value its FENCE command writes
 * @mem: from qgpu_fence_prealloc() (taken: set to NULL), or pointing at
 *	NULL to allocate now (a job run again after a reset)
 *
 * Return: the fence, or NULL without memory.
 */
struct dma_fence *qgpu_fence_create(struct qgpu_engine *eng, u64 seqno,
				    void **mem)
{
	struct qgpu_fence *qf = *mem;
	unsigned long flags;

	*mem = NULL;
	if (!qf)
		qf = kzalloc(sizeof(*qf), GFP_KERNEL);
	if (!qf)
		return NULL;
	qf->eng = eng;
	spin_lock_init(&qf->lock);
	dma_fence_init(&qf->base, &qgpu_fence_ops, &qf->lock,
		       eng->fence_context, seqno);
	qgpu_fence_count_new();
	dma_fence_get(&qf->base);	/* reference held by the pending list */
	spin_lock_irqsave(&eng->fence_lock, flags);
	list_add_tail(&qf->node, &eng->pending);
	spin_unlock_irqrestore(&eng->fence_lock, flags);
	return &qf->base;
}

/**
 * qgpu_fence_process - signal completed fences of an engine
 * @eng: the engine
 * @error: 0 to signal what the device completed; a negative errno to
 *	signal every pending fence with that error (engine reset, unplug)
 */
void qgpu_fence_process(struct qgpu_engine *eng, int error)
{
	struct qgpu_fence *qf, *tmp;
	unsigned long flags;
	u64 done = READ_ONCE(*eng->fence_val);

	spin_lock_irqsave(&eng->fence_lock, flags);
	list_for_each_entry_safe(qf, tmp, &eng->pending, node) {
		if (!error && qf->base.seqno > done)
			break;
		list_del(&qf->node);
		if (error && qf->base.seqno > done)
			dma_fence_set_error(&qf->base, error);
		dma_fence_signal(&qf->base);
		dma_fence_put(&qf->base);
	}
	spin_unlock_irqrestore(&eng->fence_lock, flags);
}
