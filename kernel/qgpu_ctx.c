// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: GPU contexts. A context owns a drm_sched entity on the render
 * engine and one hardware slot table (its id). Contexts are per file; ids
 * are global because the device's slot tables are.
 */
#include <linux/slab.h>
#include <drm/drm_drv.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_vm.h"

/* How long a destroyed context's queued work may still take to finish */
#define QGPU_CTX_GRACE_MS	(4 * QGPU_JOB_TIMEOUT_MS)

/* Give @ctx's id (its slot table on the device) back, if it still has it. */
static void qgpu_usage_release(struct kref *ref)
{
	kfree(container_of(ref, struct qgpu_usage, ref));
}

void qgpu_usage_put(struct qgpu_usage *usage)
{
	kref_put(&usage->ref, qgpu_usage_release);
}

/*
 * Context ids are the device's hardware contexts, which every process
 * needs to use the GPU at all: one user (the real uid that opened the
 * file; files opened with CAP_SYS_ADMIN are not counted) holds at most a
 * quarter of them, so that neither a process nor a user with many files
 * takes every other's. Under ctx_lock.
 */
static u32 qgpu_ctx_user_max(struct qgpu_device *qdev)
{
	return max(1u, (qdev->max_contexts - 1) / 4);
}

static unsigned long qgpu_ctx_user_ids(struct qgpu_device *qdev, s64 uid)
{
	void *v = xa_load(&qdev->ctx_users, uid);

	return v ? xa_to_value(v) : 0;
}

/* Count @ctx's id for its user: 0, -ENOSPC (the user's share) or -ENOMEM */
static int qgpu_ctx_user_take(struct qgpu_ctx *ctx)
{
	struct qgpu_device *qdev = ctx->qdev;
	unsigned long n;

	lockdep_assert_held(&qdev->ctx_lock);
	if (ctx->user < 0)
		return 0;
	n = qgpu_ctx_user_ids(qdev, ctx->user);
	if (n >= qgpu_ctx_user_max(qdev))
		return -ENOSPC;
	return xa_err(xa_store(&qdev->ctx_users, ctx->user,
			       xa_mk_value(n + 1), GFP_KERNEL));
}

static void qgpu_ctx_user_give(struct qgpu_ctx *ctx)
{
	struct qgpu_device *qdev = ctx->qdev;
	unsigned long n;

	lockdep_assert_held(&qdev->ctx_lock);
	if (ctx->user < 0)
		return;
	n = qgpu_ctx_user_ids(qdev, ctx->user);
	/* replacing a present entry allocates nothing */
	if (n > 1)
		xa_store(&qdev->ctx_users, ctx->user, xa_mk_value(n - 1),
			 GFP_NOWAIT);
	else
		xa_erase(&qdev->ctx_users, ctx->user);
}

static void qgpu_ctx_free_id(struct qgpu_ctx *ctx)
{
	struct qgpu_device *qdev = ctx->qdev;

	mutex_lock(&qdev->ctx_lock);
	if (ctx->id && xa_load(&qdev->contexts, ctx->id) == ctx) {
		xa_erase(&qdev->contexts, ctx->id);
		qgpu_ctx_user_give(ctx);
	}
	mutex_unlock(&qdev->ctx_lock);
}

static void qgpu_ctx_release(struct kref *ref)
{
	struct qgpu_ctx *ctx = container_of(ref, struct qgpu_ctx, ref);

	qgpu_ctx_free_id(ctx);
	qgpu_usage_put(ctx->usage);
	/* none of its jobs is left to walk the VM's page tables */
	if (ctx->vm)
		qgpu_vm_tables_put(ctx->vm);
	qgpu_vm_put(ctx->vm);
	qgpu_mfence_put(ctx->mfence);
	kfree_rcu(ctx, rcu);
}

void qgpu_ctx_put(struct qgpu_ctx *ctx)
{
	kref_put(&ctx->ref, qgpu_ctx_release);
}

/*
 * End @ctx's entity, once (whoever comes first: the teardown worker after a
 * destroy or close, or the device's removal), under submit_lock so that a
 * second caller returns only after the entity is gone. Closes the context
 * to new work too. Jobs still queued are dropped (signalled with an error).
 */
static void qgpu_ctx_end_entity(struct qgpu_ctx *ctx)
{
	mutex_lock(&ctx->submit_lock);
	ctx->closed = true;
	if (!ctx->ended) {
		/* from now on run_job sends none of its jobs to the device */
		WRITE_ONCE(ctx->ended, true);
		smp_mb();	/* pairs with qgpu_ctx_hw_begin() */
		drm_sched_entity_fini(&ctx->entity);
	}
	mutex_unlock(&ctx->submit_lock);
}

/**
 * qgpu_ctx_hw_begin - may a job of @ctx go to the device?
 * @ctx: the job's context
 *
 * Called by run_job. Counts the job as on the device unless the context's
 * entity has ended: then the job must not run (it is cancelled), so that
 * once its jobs already on the device are done the context's id can be
 * reused. Every true return is paired with a qgpu_ctx_hw_end() when the
 * job's hardware fence signals (or the emit fails).
 */
bool qgpu_ctx_hw_begin(struct qgpu_ctx *ctx)
{
	atomic_inc(&ctx->hw_jobs);
	smp_mb__after_atomic();	/* pairs with qgpu_ctx_end_entity() */
	if (READ_ONCE(ctx->ended)) {
		qgpu_ctx_hw_end(ctx);
		return false;
	}
	return true;
}

/* A job of @ctx left the device (any context, even a fence callback's). */
void qgpu_ctx_hw_end(struct qgpu_ctx *ctx)
{
	if (atomic_dec_and_test(&ctx->hw_jobs))
		wake_up_all(&ctx->hw_idle);
}

/* A virtual context runs in its file's address space, initialised now. */
static int qgpu_ctx_vm(struct qgpu_ctx *ctx, struct drm_file *file)
{
	struct qgpu_vm *vm = qgpu_vm_get(file);
	int ret;

	if (IS_ERR(vm))
		return PTR_ERR(vm);
	ret = qgpu_vm_ready(vm);
	if (ret) {
		qgpu_vm_put(vm);
		return ret;
	}
	qgpu_vm_tables_get(vm);
	ctx->vm = vm;
	return 0;
}

/*
 * The commands that start a context's first DMA buffer: an empty slot
 * table and no fault (CTX_CLEAR), and, with an MMU, the addressing model:
 * the file's address space for a virtual context, physical for the others
 * (a hardware context keeps its binding from one user to the next).
 * Writing them (@cmds not NULL) marks the context started.
 */
u32 qgpu_ctx_enc_first(struct qgpu_ctx *ctx, u32 *cmds)
{
	u32 n;

	n = qgpu_enc_ctx_clear(cmds, ctx->id);
	if (ctx->qdev->has_mmu)
		n += qgpu_enc_ctx_set_vm(cmds ? cmds + n : NULL, ctx->id,
					 ctx->vm ? qgpu_vm_root_desc(ctx->vm) :
					 0);
	if (cmds)
		ctx->cleared = true;
	return n;
}

int qgpu_ctx_create_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct qgpu_device *qdev = to_qdev(drm);
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_ctx_create *args = data;
	struct drm_gpu_scheduler *sched;
	struct qgpu_ctx *ctx;
	u32 id;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->flags & ~QGPU_CTX_CREATE_FLAGS))
		return -EINVAL;
	if (QGPU_IOCTL_DBG(qdev, qdev->max_contexts < 2))
		return -ENODEV;
	if (QGPU_IOCTL_DBG(qdev, qgpu_device_is_lost(qdev)))
		return -EIO;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	if (args->flags & QGPU_CTX_CREATE_VIRTUAL) {
		ret = qgpu_ctx_vm(ctx, file);
		if (ret) {
			kfree(ctx);
			return ret;
		}
	}
	kref_init(&ctx->ref);
	ctx->qdev = qdev;
	ctx->usage = qf->usage;
	kref_get(&ctx->usage->ref);
	mutex_init(&ctx->submit_lock);
	init_waitqueue_head(&ctx->hw_idle);
	ret = qgpu_mfence_new(qdev, qf, 0, &ctx->mfence_handle, &ctx->mfence);
	if (ret)
		goto err_free;
	sched = &qdev->engine[QGPU_ENGINE_RENDER].sched;
	ret = drm_sched_entity_init(&ctx->entity, DRM_SCHED_PRIORITY_NORMAL,
				    &sched, 1, NULL);
	if (ret)
		goto err_free;

	/*
	 * Ids in turn, not the lowest free one: a fault the device recorded
	 * for a context just destroyed is then not taken for a new context
	 * of another process that got its id (1: wrapped, not an error).
	 */
	ctx->user = -1;
	if (!file_ns_capable(file->filp, &init_user_ns, CAP_SYS_ADMIN))
		ctx->user = from_kuid(&init_user_ns, file->filp->f_cred->uid);
	mutex_lock(&qdev->ctx_lock);
	ret = qgpu_ctx_user_take(ctx);
	if (!ret) {
		ret = xa_alloc_cyclic(&qdev->contexts, &id, ctx,
				      XA_LIMIT(1, qdev->max_contexts - 1),
				      &qdev->next_ctx, GFP_KERNEL);
		if (ret < 0)
			qgpu_ctx_user_give(ctx);
	}
	mutex_unlock(&qdev->ctx_lock);
	if (ret > 0)
		ret = 0;
	if (ret) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_entity;
	}
	ctx->id = id;
	/*
	 * The answer first: once in the file's table, the context is the
	 * table's, and another thread may destroy it at once.
	 */
	args->ctx = id;
	args->mfence = ctx->mfence_handle;
	qgpu_mfence_where(qf, ctx->mfence, &args->mfence_mmap_offset,
			  &args->mfence_offset);
	ret = xa_insert(&qf->contexts, id, ctx, GFP_KERNEL);
	if (ret) {
		args->ctx = 0;
		args->mfence = 0;
		args->mfence_mmap_offset = 0;
		args->mfence_offset = 0;
		qgpu_mfence_close(qf, ctx->mfence_handle, ctx->mfence);
		qgpu_ctx_end_entity(ctx);
		qgpu_ctx_put(ctx);
		return ret;
	}
	return 0;

err_entity:
	drm_sched_entity_destroy(&ctx->entity);
err_free:
	if (ctx->mfence)
		qgpu_mfence_close(qf, ctx->mfence_handle, ctx->mfence);
	qgpu_mfence_put(ctx->mfence);
	qgpu_usage_put(ctx->usage);
	if (ctx->vm)
		qgpu_vm_tables_put(ctx->vm);
	qgpu_vm_put(ctx->vm);
	kfree(ctx);
	return ret;
}

/*
 * A context being torn down gains no new work: submits queue jobs only
 * between qgpu_ctx_begin_submit() and qgpu_ctx_end_submit(), under
 * submit_lock, and only while the context is not closed. Once closed is set
 * under the same lock no job can reach the entity any more, so destroying
 * it cannot race with a push.
 */
int qgpu_ctx_begin_submit(struct qgpu_ctx *ctx)
{
	int ret = mutex_lock_interruptible(&ctx->submit_lock);

	if (ret)
		return ret;
	if (ctx->closed) {
		mutex_unlock(&ctx->submit_lock);
		return -ENOENT;
	}
	return 0;
}

void qgpu_ctx_end_submit(struct qgpu_ctx *ctx)
{
	mutex_unlock(&ctx->submit_lock);
}

/* Called under submit_lock with the finished fence of a job just queued. */
void qgpu_ctx_queued(struct qgpu_ctx *ctx, struct dma_fence *fence)
{
	lockdep_assert_held(&ctx->submit_lock);
	dma_fence_put(ctx->last);
	ctx->last = dma_fence_get(fence);
}

/*
 * A destroyed context's queued work gets a grace period to complete; what
 * has not even started by then (a job still waiting for its dependencies)
 * is cancelled with its fences signalled in error. Runs in a worker so
 * that CTX_DESTROY and close() never wait for the GPU.
 */
static void qgpu_ctx_teardown(struct work_struct *work)
{
	struct qgpu_ctx *ctx = container_of(work, struct qgpu_ctx, teardown);
	unsigned int waited = 0;

	/* in slices: after an unplug nothing queued will run any more */
	while (ctx->last && waited < QGPU_CTX_GRACE_MS &&
	       !drm_dev_is_unplugged(&ctx->qdev->drm) &&
	       !dma_fence_wait_timeout(ctx->last, false,
				       msecs_to_jiffies(100)))
		waited += 100;
	qgpu_ctx_end_entity(ctx);
	/*
	 * None of its jobs runs any more; once those on the device are done
	 * (a hang is reset within the job timeout), the id is free again,
	 * even while jobs the entity dropped still wait for their
	 * dependencies before they are freed (and hold the context).
	 */
	if (wait_event_timeout(ctx->hw_idle, !atomic_read(&ctx->hw_jobs),
			       msecs_to_jiffies(QGPU_CTX_GRACE_MS)))
		qgpu_ctx_free_id(ctx);
	dma_fence_put(ctx->last);
	qgpu_ctx_put(ctx);
}

static void qgpu_ctx_close(struct qgpu_ctx *ctx)
{
	bool idle;

	mutex_lock(&ctx->submit_lock);
	ctx->closed = true;
	/*
	 * Its last job done, and none on the device: a job skipped (device
	 * lost) or never written to the ring signals at once, while one
	 * queued before it may still run.
	 */
	idle = (!ctx->last || dma_fence_is_signaled(ctx->last)) &&
	       !atomic_read(&ctx->hw_jobs);
	mutex_unlock(&ctx->submit_lock);
	/*
	 * No submit can reach the entity any more. With all its work done
	 * nothing waits: tear it down now, so that its id is free when this
	 * returns; else aside.
	 */
	INIT_WORK(&ctx->teardown, qgpu_ctx_teardown);
	if (idle)
		qgpu_ctx_teardown(&ctx->teardown);
	else
		queue_work(ctx->qdev->reap_wq, &ctx->teardown);
}

/**
 * qgpu_ctx_device_fini - end every context's entity before the schedulers
 * @qdev: the device being removed (already unplugged: no new contexts)
 *
 * drm_sched_fini() frees the scheduler's run queues, so no entity may be
 * left on them. Contexts of files still open stay (closed) until those
 * files are closed.
 */
void qgpu_ctx_device_fini(struct qgpu_device *qdev)
{
	struct qgpu_ctx *ctx;
	unsigned long id;

	mutex_lock(&qdev->ctx_lock);
	xa_for_each(&qdev->contexts, id, ctx) {
		if (!kref_get_unless_zero(&ctx->ref))
			continue;
		mutex_unlock(&qdev->ctx_lock);
		qgpu_ctx_end_entity(ctx);
		qgpu_ctx_put(ctx);
		mutex_lock(&qdev->ctx_lock);
	}
	mutex_unlock(&qdev->ctx_lock);
}

int qgpu_ctx_destroy_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct qgpu_file *qf = file->driver_priv;
	struct drm_qgpu_ctx_destroy *args = data;
	struct qgpu_ctx *ctx;

	if (QGPU_IOCTL_DBG(qf->qdev, args->pad))
		return -EINVAL;
	ctx = xa_erase(&qf->contexts, args->ctx);
	if (QGPU_IOCTL_DBG(qf->qdev, !ctx))
		return -ENOENT;
	qgpu_mfence_close(qf, ctx->mfence_handle, ctx->mfence);
	qgpu_ctx_close(ctx);
	return 0;
}

/* Returns a reference, or NULL when @id is not a context of this file. */
struct qgpu_ctx *qgpu_ctx_lookup(struct qgpu_file *qf, u32 id)
{
	struct qgpu_ctx *ctx;

	xa_lock(&qf->contexts);
	ctx = xa_load(&qf->contexts, id);
	if (ctx)
		kref_get(&ctx->ref);
	xa_unlock(&qf->contexts);
	return ctx;
}

bool qgpu_ctx_is_lost(struct qgpu_ctx *ctx)
{
	return atomic_read(&ctx->state) != QGPU_CTX_OK;
}

void qgpu_ctx_mark_lost(struct qgpu_ctx *ctx, u32 why)
{
	atomic_cmpxchg(&ctx->state, QGPU_CTX_OK, why);
}

/*
 * Called from the interrupt handler with the device's fault record. The
 * context is only read under RCU: it is freed with kfree_rcu() after it
 * left the id table.
 */
void qgpu_ctx_hw_fault(struct qgpu_device *qdev, u32 id, u32 reason,
		       u32 offset, u64 addr)
{
	struct qgpu_ctx *ctx;

	rcu_read_lock();
	ctx = xa_load(&qdev->contexts, id);
	if (ctx && atomic_cmpxchg(&ctx->state, QGPU_CTX_OK,
				  QGPU_CTX_LOST_FAULT) == QGPU_CTX_OK) {
		ctx->fault_reason = reason;
		ctx->fault_offset = offset;
		ctx->fault_addr = addr;
	}
	rcu_read_unlock();
}

int qgpu_ctx_status(struct qgpu_file *qf, u32 id,
		    struct drm_qgpu_context_status *st)
{
	struct qgpu_ctx *ctx = qgpu_ctx_lookup(qf, id);

	if (QGPU_IOCTL_DBG(qf->qdev, !ctx))
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->state = atomic_read(&ctx->state);
	st->fault_reason = ctx->fault_reason;
	st->fault_offset = ctx->fault_offset;
	st->fault_addr = ctx->fault_addr;
	st->submissions = atomic64_read(&ctx->submissions);
	st->portions = atomic64_read(&ctx->portions);
	qgpu_ctx_put(ctx);
	return 0;
}

void qgpu_ctx_file_fini(struct qgpu_file *qf)
{
	struct qgpu_ctx *ctx;
	unsigned long id;

	xa_for_each(&qf->contexts, id, ctx) {
		xa_erase(&qf->contexts, id);
		qgpu_ctx_close(ctx);
	}
}
