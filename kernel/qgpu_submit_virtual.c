// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: DMA-buffer submission on a virtual context (GpuMmu). The buffer's
 * commands carry GPU virtual addresses of the file's address space; there
 * is no allocation list, no patch-location list and no split: residency
 * is the process's job (MakeResident). The kernel still parses every
 * command (virtual commands only) and runs its own copy of the buffer.
 * The buffer waits for the process's latest paging fence, for the paging
 * that last wrote its page tables and for every move of an allocation
 * mapped in its address space; its fence goes into each of those
 * allocations, so that the memory manager evicts none of them before it
 * is done.
 */
#include <linux/slab.h>
#include <drm/drm_exec.h>
#include <drm/drm_file.h>

#include "qgpu_device.h"
#include "qgpu_ctx.h"
#include "qgpu_dma_parse.h"
#include "qgpu_gem.h"
#include "qgpu_job.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_submit.h"
#include "qgpu_submit_sync.h"
#include "qgpu_trace.h"
#include "qgpu_vm.h"

static int qgpu_vsubmit_parse(struct qgpu_device *qdev,
			      struct qgpu_dmabuf *buf)
{
	u32 ndw = buf->size / 4, at;
	enum qgpu_parse_rule rule;
	u32 *starts;

	starts = kvcalloc(QGPU_PARSE_STARTS_WORDS(ndw), sizeof(*starts),
			  GFP_KERNEL);
	if (!starts)
		return -ENOMEM;
	rule = qgpu_dma_parse(buf->cpu, ndw, NULL, 0, starts, &at, 1, NULL, 0);
	kvfree(starts);
	if (rule != QGPU_PARSE_OK) {
		drm_dbg(&qdev->drm, "submit: %s (offset %u)\n",
			qgpu_parse_rule_name(rule), at);
		return -EINVAL;
	}
	return 0;
}

/*
 * Lock every allocation mapped in @vm, and @vm's own reservation object,
 * which keeps every DMA buffer of the VM until it is done (qgpu_vm_busy()),
 * under vm->lock
 */
static int qgpu_vsubmit_lock(struct qgpu_vm *vm, struct drm_exec *exec)
{
	struct drm_gpuva *va;
	int ret = 0;

	drm_exec_until_all_locked(exec) {
		ret = drm_exec_prepare_obj(exec, vm->gpuvm.r_obj, 1);
		drm_exec_retry_on_contention(exec);
		if (ret)
			return ret;
		drm_gpuvm_for_each_va(va, &vm->gpuvm) {
			ret = drm_exec_prepare_obj(exec, va->gem.obj, 1);
			drm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* What the job waits for besides the in-syncs */
static int qgpu_vsubmit_deps(struct qgpu_vm *vm, struct qgpu_job *job,
			     struct drm_exec *exec)
{
	struct dma_fence *f[2] = {
		qgpu_vm_fence(vm, &vm->paging_fence),
		qgpu_vm_fence(vm, &vm->pt_fence),
	};
	struct drm_gem_object *obj;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (f[i] && !ret)
			ret = qgpu_job_add_dep(job, f[i]);
		dma_fence_put(f[i]);
	}
	drm_exec_for_each_locked_object(exec, obj) {
		if (ret)
			break;
		ret = drm_sched_job_add_resv_dependencies(&job->base, obj->resv,
							  DMA_RESV_USAGE_KERNEL);
	}
	return ret;
}

static struct qgpu_job *qgpu_vsubmit_job(struct qgpu_ctx *ctx,
					 struct drm_file *file,
					 struct qgpu_dmabuf *buf, u32 extra)
{
	struct qgpu_device *qdev = ctx->qdev;
	struct qgpu_job *job;
	u32 n;

	n = qgpu_ctx_enc_first(ctx, NULL) + qgpu_enc_exec(NULL, 0, 0, 0, 0) +
	    extra;
	job = qgpu_job_alloc(&qdev->engine[QGPU_ENGINE_RENDER], n);
	if (!job)
		return NULL;
	if (drm_sched_job_init(&job->base, &ctx->entity, qgpu_job_credits(job),
			       file->driver_priv, file->client_id)) {
		qgpu_job_free(job);
		return NULL;
	}
	kref_get(&ctx->ref);
	job->ctx = ctx;
	kref_get(&buf->ref);
	job->release = qgpu_dmabuf_put;
	job->release_data = buf;
	return job;
}

/* Under submit_lock and vm->lock: queue the buffer as one job */
static int qgpu_vsubmit_queue(struct qgpu_ctx *ctx, struct drm_file *file,
			      struct qgpu_dmabuf *buf,
			      struct qgpu_in_syncs *in,
			      struct qgpu_out_syncs *out,
			      struct dma_fence **done)
{
	struct qgpu_vm *vm = ctx->vm;
	struct drm_gem_object *obj;
	struct qgpu_job *job;
	struct drm_exec exec;
	u32 i, n = 0;
	int ret;

	lockdep_assert_held(&vm->lock);
	qgpu_vm_written(vm, file->driver_priv);
	job = qgpu_vsubmit_job(ctx, file, buf,
			       qgpu_mfence_sigs_emit(out->sigs, NULL));
	if (!job)
		return -ENOMEM;
	drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT |
		      DRM_EXEC_IGNORE_DUPLICATES, 0);
	ret = qgpu_vsubmit_lock(vm, &exec);
	if (!ret)
		ret = qgpu_vsubmit_deps(vm, job, &exec);
	for (i = 0; !ret && i < in->n; i++)
		ret = qgpu_job_add_dep(job, in->fence[i]);
	if (ret) {
		drm_exec_fini(&exec);
		qgpu_job_free(job);
		return ret;
	}
	if (!ctx->cleared) {
		job->ctx_first = true;
		n = qgpu_ctx_enc_first(ctx, job->cmds);
	}
	n += qgpu_enc_exec(job->cmds + n, ctx->id, QGPU_SYS_BIT | buf->dma, 0,
			   buf->size);
	n += qgpu_mfence_sigs_emit(out->sigs, job->cmds + n);
	qgpu_mfence_sigs_queued(out->sigs);
	job->sigs = out->sigs;
	out->sigs = NULL;
	job->ndw = n;
	*done = qgpu_job_push(job, &ctx->entity);
	drm_exec_for_each_locked_object(&exec, obj)
		dma_resv_add_fence(obj->resv, *done, DMA_RESV_USAGE_BOOKKEEP);
	drm_exec_fini(&exec);
	qgpu_vm_set_fence(vm, &vm->last_render, *done);
	qgpu_ctx_queued(ctx, *done);
	return 0;
}

/**
 * qgpu_submit_virtual - %DRM_IOCTL_QGPU_SUBMIT on a virtual context
 * @qdev: device
 * @file: the caller's file
 * @ctx: its virtual context (a reference held by the caller)
 * @args: the ioctl's arguments
 *
 * Return: 0 (the buffer is queued as one portion) or an errno; on an
 * error nothing was queued or signalled.
 */
int qgpu_submit_virtual(struct qgpu_device *qdev, struct drm_file *file,
			struct qgpu_ctx *ctx, struct drm_qgpu_submit *args)
{
	struct qgpu_file *qf = file->driver_priv;
	struct qgpu_out_syncs out = {};
	struct qgpu_in_syncs in = {};
	struct qgpu_dmabuf *buf = NULL;
	struct dma_fence *done = NULL;
	int ret;

	if (QGPU_IOCTL_DBG(qdev, args->num_allocs || args->num_patches) ||
	    QGPU_IOCTL_DBG(qdev, args->dma_size < 4 ||
			   args->dma_size > QGPU_MAX_DMA_SIZE ||
			   args->dma_size % 4) ||
	    QGPU_IOCTL_DBG(qdev, args->num_in_syncs > QGPU_MAX_SYNCS ||
			   args->num_out_syncs > QGPU_MAX_SYNCS))
		return -EINVAL;
	ret = qgpu_dmabuf_copy(qdev, qf->usage, args->dma, args->dma_size,
			       &buf);
	if (!ret)
		ret = qgpu_vsubmit_parse(qdev, buf);
	if (!ret)
		ret = qgpu_in_syncs_get(qdev, file, args->in_syncs,
					args->num_in_syncs, &in);
	if (!ret)
		ret = qgpu_out_syncs_get(qdev, file, args->out_syncs,
					 args->num_out_syncs, &out);
	if (!ret)
		ret = qgpu_ctx_begin_submit(ctx);
	if (!ret) {
		ret = qgpu_out_sync_next(qdev, &out, ctx->mfence,
					 &args->fence_value);
		if (!ret) {
			mutex_lock(&ctx->vm->lock);
			ret = qgpu_vsubmit_queue(ctx, file, buf, &in, &out,
						 &done);
			mutex_unlock(&ctx->vm->lock);
		}
		if (ret)
			args->fence_value = 0;
		qgpu_ctx_end_submit(ctx);
	}
	if (!ret) {
		qgpu_out_syncs_signal(&out, done);
		args->portions = 1;
		qgpu_stat_add(qdev, qf, QGPU_STAT(submissions), 1);
		qgpu_stat_add(qdev, qf, QGPU_STAT(split_portions), 1);
		atomic64_inc(&ctx->submissions);
		atomic64_inc(&ctx->portions);
	}
	trace_qgpu_submit(args->ctx, args->dma_size, 0, 0, ret ? 0 : 1, ret);
	dma_fence_put(done);
	qgpu_out_syncs_put(&out);
	qgpu_in_syncs_put(&in);
	if (buf)
		qgpu_dmabuf_put(buf);
	return ret;
}
