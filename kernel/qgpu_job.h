/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_JOB_H
#define QGPU_JOB_H

#include "qgpu_device.h"

struct qgpu_ctx;

/**
 * struct qgpu_job - commands for one engine, run through drm_sched
 * @base: scheduler job
 * @eng: engine the commands are written to
 * @ctx: owning context (render jobs), or NULL for paging jobs
 * @cmds: command dwords, copied to the ring by run_job
 * @max_dw: how many @cmds can hold (qgpu_job_credits())
 * @ndw: number of dwords in @cmds
 * @ctx_first: @cmds start with its context's first commands
 *	(qgpu_ctx_enc_first()), which no later job of the context repeats
 * @hw_fence: fence of the last run
 * @hw_cb: counts a render job off its context's device work (hw_fence)
 * @sched_cb: reaches @sigs when the job is scheduled not to run
 * @emit_ns: when it was written to the ring
 * @sigs: monitored fence values it writes (its last commands); when it
 *	does not run, the kernel reaches them before its finished fence
 *	signals
 * @release: called from free_job with @release_data (may be NULL)
 * @release_data: argument of @release
 * @held: in a paging buffer's list of full jobs not yet queued
 * @fence_mem: its hardware fence's memory until run_job takes it
 */
struct qgpu_job {
	struct drm_sched_job base;
	struct qgpu_engine *eng;
	struct qgpu_ctx *ctx;
	u32 *cmds;
	u32 max_dw;
	u32 ndw;
	bool ctx_first;
	struct dma_fence *hw_fence;
	struct dma_fence_cb hw_cb;
	struct dma_fence_cb sched_cb;
	u64 emit_ns;
	unsigned int extensions;	/* timeout periods granted for progress */
	struct qgpu_mfence_sigs *sigs;
	void (*release)(void *data);
	void *release_data;
	struct list_head held;
	void *fence_mem;
};

struct qgpu_job *qgpu_job_alloc(struct qgpu_engine *eng, u32 max_dw);
u32 qgpu_job_credits(const struct qgpu_job *job);
void qgpu_job_free(struct qgpu_job *job);
int qgpu_job_add_dep(struct qgpu_job *job, struct dma_fence *fence);
struct dma_fence *qgpu_job_push(struct qgpu_job *job,
				struct drm_sched_entity *entity);

#endif /* QGPU_JOB_H */
