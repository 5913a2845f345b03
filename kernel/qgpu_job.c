// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: jobs and the GPU scheduler (one drm_sched per engine).
 */
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_job.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_trace.h"

static struct qgpu_job *to_qjob(struct drm_sched_job *job)
{
	return container_of(job, struct qgpu_job, base);
}

struct qgpu_job *qgpu_job_alloc(struct qgpu_engine *eng, u32 max_dw)
{
	struct qgpu_job *job;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return NULL;
	job->cmds = kvmalloc_array(max_dw ? max_dw : 1, sizeof(u32),
				   GFP_KERNEL);
	/* run_job cannot fail for want of its fence's memory */
	job->fence_mem = qgpu_fence_prealloc();
	if (!job->cmds || !job->fence_mem) {
		kvfree(job->cmds);
		kfree(job->fence_mem);
		kfree(job);
		return NULL;
	}
	job->eng = eng;
	job->max_dw = max_dw;
	INIT_LIST_HEAD(&job->held);
	return job;
}

/**
 * qgpu_job_credits - the scheduler credits a job takes on its engine
 * @job: a job from qgpu_job_alloc()
 *
 * An engine's %QGPU_SCHED_CREDITS share its ring: a job takes one for
 * every (ring dwords - 1) / %QGPU_SCHED_CREDITS of its commands and fence,
 * so that what the scheduler lets onto an engine always fits in the ring
 * and run_job never waits for room (behind a ring full of another
 * process's blocked jobs, qgpu_engine_emit() would give up after 2 s and
 * the job's context would be lost). A job of at most that many dwords,
 * every job with the device's default slot count, takes one. Paging jobs
 * too: they are built at most QGPU_PAGING_MAX_DW dwords, one credit each,
 * so that a paging job never waits for room behind the paging buffers of
 * the same operation (a skipped one would leave the rest half done).
 *
 * Return: the credits, or 0 for a job larger than the ring
 * (drm_sched_job_init() refuses it).
 */
u32 qgpu_job_credits(const struct qgpu_job *job)
{
	u32 unit = (job->eng->ring_size / 4 - 1) / QGPU_SCHED_CREDITS;
	u32 n = DIV_ROUND_UP(job->max_dw + qgpu_enc_fence(NULL, 0, 0), unit);

	return n <= QGPU_SCHED_CREDITS ? n : 0;
}

static void qgpu_job_release(struct qgpu_job *job)
{
	qgpu_mfence_sigs_done(job->eng->qdev, job->sigs);
	if (job->release)
		job->release(job->release_data);
	dma_fence_put(job->hw_fence);
	if (job->ctx)
		qgpu_ctx_put(job->ctx);
	kvfree(job->cmds);
	kfree(job->fence_mem);
	kfree(job);
}

/* Free a job that was never pushed. */
void qgpu_job_free(struct qgpu_job *job)
{
	if (job->base.s_fence)
		drm_sched_job_cleanup(&job->base);
	qgpu_job_release(job);
}

int qgpu_job_add_dep(struct qgpu_job *job, struct dma_fence *fence)
{
	if (!fence)
		return 0;
	return drm_sched_job_add_dependency(&job->base, dma_fence_get(fence));
}

/*
 * Its scheduled fence signalled without a hardware fence: the job does not
 * run. That is also how a job ends whose entity was killed (its context
 * ended while it still waited) and that never reached run_job: the values
 * it promised are reached before the finished fence that follows.
 */
static void qgpu_job_scheduled(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct qgpu_job *job = container_of(cb, struct qgpu_job, sched_cb);

	if (!job->base.s_fence->parent)
		qgpu_mfence_sigs_reach(job->eng->qdev, job->sigs);
}

/**
 * qgpu_job_push - queue a job on an entity
 * @job: the job, initialised on @entity with drm_sched_job_init()
 * @entity: scheduler entity
 *
 * Return: a reference to the job's finished fence.
 */
struct dma_fence *qgpu_job_push(struct qgpu_job *job,
				struct drm_sched_entity *entity)
{
	struct dma_fence *done;

	drm_sched_job_arm(&job->base);
	if (job->sigs &&
	    dma_fence_add_callback(&job->base.s_fence->scheduled,
				   &job->sched_cb, qgpu_job_scheduled))
		qgpu_job_scheduled(&job->base.s_fence->scheduled,
				   &job->sched_cb);
	done = dma_fence_get(&job->base.s_fence->finished);
	drm_sched_entity_push_job(&job->base);
	return done;
}

static void qgpu_job_hw_done(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct qgpu_job *job = container_of(cb, struct qgpu_job, hw_cb);
	struct qgpu_engine *eng = job->eng;
	u64 now = ktime_get_ns();

	trace_qgpu_job_done(eng->id, job->ctx ? job->ctx->id : 0, fence->seqno);
	/*
	 * The engine runs its ring in order: a job's time starts when it was
	 * written to the ring or when the job before it ended, if later.
	 * (Fences signal in order; a job found done already at run_job is
	 * counted from there, a race that only blurs the accounting.)
	 */
	if (job->ctx)
		atomic64_add(now - max(job->emit_ns, eng->last_done_ns),
			     &job->ctx->usage->busy_ns);
	eng->last_done_ns = now;
	/* its FENCE commands wrote its monitored values before its fence */
	qgpu_mfence_sigs_written(eng->qdev, job->sigs);
	if (job->ctx)
		qgpu_ctx_hw_end(job->ctx);
	/*
	 * The device is gone: what it did not write nobody will (a reset's
	 * -ECANCELED is different: the job may run again).
	 */
	if (fence->error == -ENODEV)
		qgpu_mfence_sigs_reach(eng->qdev, job->sigs);
}

/*
 * run_job does not send @job to the device (@ret: NULL or an error):
 * drm_sched signals its finished fence on return, so the values it
 * promised are reached first.
 */
static struct dma_fence *qgpu_job_skip(struct qgpu_job *job,
				       struct dma_fence *ret)
{
	qgpu_mfence_sigs_reach(job->eng->qdev, job->sigs);
	return ret;
}

static struct dma_fence *qgpu_run_job(struct drm_sched_job *sched_job)
{
	struct qgpu_job *job = to_qjob(sched_job);
	struct qgpu_device *qdev = job->eng->qdev;
	struct dma_fence *fence;
	int ret, idx;

	if (sched_job->s_fence->finished.error) {
		/*
		 * Cancelled. If it carried its context's first commands
		 * (CTX_CLEAR and the address-space binding), no later job
		 * may run: they do not repeat them, and a hardware context
		 * keeps its previous user's binding. A paging job is the
		 * memory manager's word: without it the device is lost.
		 */
		if (job->ctx && job->ctx_first)
			qgpu_ctx_mark_lost(job->ctx, QGPU_CTX_LOST_HANG);
		else if (!job->ctx)
			qgpu_device_lose(qdev, "a paging job was cancelled");
		return qgpu_job_skip(job, NULL);
	}
	if (job->ctx && qgpu_ctx_is_lost(job->ctx)) {
		dma_fence_set_error(&sched_job->s_fence->finished, -ECANCELED);
		return qgpu_job_skip(job, NULL);
	}
	if (!drm_dev_enter(&qdev->drm, &idx))
		return qgpu_job_skip(job, ERR_PTR(-ENODEV));
	/* nothing reaches a lost device (qgpu_lost.c) */
	if (qgpu_device_is_lost(qdev)) {
		drm_dev_exit(idx);
		if (job->ctx)
			qgpu_ctx_mark_lost(job->ctx, QGPU_CTX_LOST_DEVICE);
		return qgpu_job_skip(job, ERR_PTR(-EIO));
	}
	/* a context torn down runs nothing more (its id may be reused) */
	if (job->ctx && !qgpu_ctx_hw_begin(job->ctx)) {
		drm_dev_exit(idx);
		dma_fence_set_error(&sched_job->s_fence->finished, -ECANCELED);
		return qgpu_job_skip(job, NULL);
	}
	job->emit_ns = ktime_get_ns();
	ret = qgpu_engine_emit(job->eng, job->cmds, job->ndw, &job->fence_mem,
			       &fence);
	drm_dev_exit(idx);
	if (ret) {
		/*
		 * Never reached the ring (no memory, or a ring that took
		 * nothing for seconds): the context cannot go on, since this
		 * job may have carried its first commands (CTX_CLEAR and the
		 * address-space binding that its later jobs rely on; a
		 * hardware context keeps the previous user's otherwise).
		 */
		if (job->ctx) {
			qgpu_ctx_mark_lost(job->ctx, QGPU_CTX_LOST_HANG);
			qgpu_ctx_hw_end(job->ctx);
			drm_info(&qdev->drm,
				 "context %u lost: a job was not written to the %s ring (%d)\n",
				 job->ctx->id, job->eng->name, ret);
		} else if (ret != -ENODEV) {
			/* a paging job dropped: the books are wrong */
			qgpu_device_lose(qdev, "a paging job was not written to the ring");
		}
		return qgpu_job_skip(job, ERR_PTR(ret));
	}
	trace_qgpu_job_run(job->eng->id, job->ctx ? job->ctx->id : 0,
			   fence->seqno);
	if (dma_fence_add_callback(fence, &job->hw_cb, qgpu_job_hw_done))
		qgpu_job_hw_done(fence, &job->hw_cb);	/* already done */
	dma_fence_put(job->hw_fence);
	job->hw_fence = dma_fence_get(fence);
	return fence;
}

/*
 * drm_sched takes a timed-out job off its pending list before calling
 * timedout_job. When there is no reset, put it back (at the head, where it
 * was), so that it is freed like any finished job.
 */
static void qgpu_job_requeue(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
}

/*
 * A job times out when its engine made no progress in a whole timeout
 * period: no command completed and no byte moved (the engine's CMDS and
 * BYTES counters did not change since the last look). A job that is still
 * moving bytes gets another period, QGPU_JOB_MAX_EXTENSIONS at most, so
 * that no submission holds an engine for ever. The first look after a quiet
 * spell may see older work as progress: a hang is found after one or two
 * periods.
 */
static bool qgpu_job_progressing(struct qgpu_job *job)
{
	struct qgpu_engine *eng = job->eng;
	u64 mark = qgpu_engine_progress(eng);
	bool moved = mark != eng->progress_mark;

	/*
	 * Nothing moved: look once more a little later. The whole guest may
	 * have stood still (its host busy or paused), and its timers fire
	 * at once when it runs again, before the device thread had a turn.
	 */
	if (!moved) {
		msleep(QGPU_JOB_SECOND_LOOK_MS);
		mark = qgpu_engine_progress(eng);
		moved = mark != eng->progress_mark;
	}
	eng->progress_mark = mark;
	if (!moved || job->extensions >= QGPU_JOB_MAX_EXTENSIONS)
		return false;
	job->extensions++;
	trace_qgpu_job_extend(eng->id, job->ctx ? job->ctx->id : 0,
			      job->hw_fence ? job->hw_fence->seqno : 0,
			      job->extensions);
	return true;
}

static void qgpu_free_job(struct drm_sched_job *sched_job)
{
	struct qgpu_job *job = to_qjob(sched_job);

	drm_sched_job_cleanup(sched_job);
	qgpu_job_release(job);
}

static enum drm_gpu_sched_stat qgpu_timedout_job(struct drm_sched_job *sched_job)
{
	struct qgpu_job *job = to_qjob(sched_job);
	struct qgpu_engine *eng = job->eng;
	struct qgpu_device *qdev = eng->qdev;
	int idx;

	/*
	 * Unplugged: no reset. The engine is disabled, what it held fails
	 * (stop detaches the hardware fences, start ends their jobs), and
	 * nothing more reaches it (qgpu_run_job()).
	 */
	if (!drm_dev_enter(&qdev->drm, &idx)) {
		drm_sched_stop(&eng->sched, sched_job);
		/* the engine stops before its fences say its work is done */
		qgpu_engine_stop(eng);
		drm_sched_start(&eng->sched);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}
	/*
	 * The job may have finished while the timeout fired; or it is long
	 * (a paging move of a gigabyte into VRAM the host has not committed
	 * yet) and the engine is still working on it.
	 */
	if ((job->hw_fence && dma_fence_is_signaled(job->hw_fence)) ||
	    qgpu_job_progressing(job)) {
		qgpu_job_requeue(sched_job);
		drm_dev_exit(idx);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}

	drm_info(&qdev->drm, "%s engine hang: resetting (context %u)\n",
		 eng->name, job->ctx ? job->ctx->id : 0);
	/* before the jobs behind it run again: they see it lost */
	if (!job->ctx)
		qgpu_device_lose(qdev, "a paging job made no progress");
	trace_qgpu_job_timeout(eng->id, job->ctx ? job->ctx->id : 0,
			       job->hw_fence ? job->hw_fence->seqno : 0);
	/*
	 * The 6.12 recovery sequence: stop (puts the job back and detaches
	 * the hardware fences), reset, run the innocent jobs again (the
	 * guilty one and those of a lost context are cancelled, see
	 * qgpu_run_job()), start (reattaches their new fences).
	 */
	drm_sched_stop(&eng->sched, sched_job);
	drm_sched_increase_karma(sched_job);
	if (job->ctx)
		qgpu_ctx_mark_lost(job->ctx, QGPU_CTX_LOST_HANG);
	qgpu_engine_reset(eng);
	trace_qgpu_reset(eng->id);
	atomic64_inc(&qdev->stats.c[QGPU_STAT(resets)]);
	drm_sched_resubmit_jobs(&eng->sched);
	drm_sched_start(&eng->sched);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static const struct drm_sched_backend_ops qgpu_sched_ops = {
	.run_job = qgpu_run_job,
	.timedout_job = qgpu_timedout_job,
	.free_job = qgpu_free_job,
};

int qgpu_sched_init(struct qgpu_device *qdev)
{
	struct drm_gpu_scheduler *paging_sched;
	unsigned int i;
	int ret;

	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		struct qgpu_engine *eng = &qdev->engine[i];
		/*
		 * A run queue per priority (the paging entity is KERNEL,
		 * contexts NORMAL); an ordered submit workqueue and the
		 * system workqueue for timeouts, both the scheduler's own.
		 * Render jobs' credits share the ring (qgpu_job_credits()):
		 * at most 16 jobs on it, fewer when they are large.
		 */
		struct drm_sched_init_args args = {
			.ops = &qgpu_sched_ops,
			.num_rqs = DRM_SCHED_PRIORITY_COUNT,
			.credit_limit = QGPU_SCHED_CREDITS,
			.hang_limit = 0,
			.timeout = msecs_to_jiffies(QGPU_JOB_TIMEOUT_MS),
			.name = eng->name,
			.dev = qdev->drm.dev,
		};

		ret = drm_sched_init(&eng->sched, &args);
		if (ret) {
			qgpu_sched_fini(qdev);
			return ret;
		}
		eng->sched_ready = true;
	}
	paging_sched = &qdev->engine[QGPU_ENGINE_PAGING].sched;
	ret = drm_sched_entity_init(&qdev->paging_entity,
				    DRM_SCHED_PRIORITY_KERNEL, &paging_sched,
				    1, NULL);
	if (ret)
		qgpu_sched_fini(qdev);
	return ret;
}

/**
 * qgpu_sched_free_pending - free the jobs drm_sched_fini() left behind
 * @qdev: a device being removed: schedulers finished (qgpu_sched_fini()),
 *	engines halted (qgpu_hw_reset())
 *
 * drm_sched_fini() (6.12) stops the scheduler's workers and leaves its
 * pending list as it is, so the jobs the device still had at removal
 * (their hardware fences signalled with -ENODEV by qgpu_sched_fini()), and
 * those whose free_job had not run yet, were never freed: their DMA-buffer
 * copies, contexts and fences leaked, and a fence now holds the module
 * (qgpu_fence_hold_module()). With the engines halted nothing reads their
 * commands any more: they are freed here, as free_job would have.
 */
void qgpu_sched_free_pending(struct qgpu_device *qdev)
{
	struct drm_sched_job *sched_job, *tmp;
	unsigned int i;
	LIST_HEAD(jobs);

	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		struct drm_gpu_scheduler *sched = &qdev->engine[i].sched;

		spin_lock(&sched->job_list_lock);
		list_splice_init(&sched->pending_list, &jobs);
		spin_unlock(&sched->job_list_lock);
	}
	list_for_each_entry_safe(sched_job, tmp, &jobs, list) {
		list_del_init(&sched_job->list);
		qgpu_free_job(sched_job);
	}
}

void qgpu_sched_fini(struct qgpu_device *qdev)
{
	unsigned int i;

	if (qdev->paging_entity.rq)
		drm_sched_entity_destroy(&qdev->paging_entity);
	for (i = 0; i < QGPU_NUM_ENGINES; i++) {
		struct qgpu_engine *eng = &qdev->engine[i];

		if (!eng->sched_ready)
			continue;
		eng->sched_ready = false;
		/*
		 * No timeout handler from here on: one already running waits
		 * to end, and its drm_sched_start() would restart a scheduler
		 * whose run queues drm_sched_fini() frees (6.12 cancels the
		 * timeout work only after freeing them).
		 */
		disable_delayed_work_sync(&eng->sched.work_tdr);
		drm_sched_fini(&eng->sched);
		qgpu_fence_process(eng, -ENODEV);
	}
}
