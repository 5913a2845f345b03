/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_CTX_H
#define QGPU_CTX_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "qgpu_device.h"

struct qgpu_vm;

/**
 * struct qgpu_ctx - a GPU context: a scheduler entity on the render engine
 * and a device slot table (the id is the hardware context number)
 */
struct qgpu_ctx {
	struct kref ref;
	struct rcu_head rcu;
	struct qgpu_device *qdev;
	u32 id;
	struct drm_sched_entity entity;
	atomic_t state;			/* QGPU_CTX_* */
	u32 fault_reason;
	u32 fault_offset;
	u64 fault_addr;
	atomic64_t submissions;
	atomic64_t portions;
	struct mutex submit_lock;	/* orders this context's submits */
	bool closed;			/* under submit_lock: no new work */
	bool ended;			/* set under submit_lock: entity torn down */
	bool cleared;			/* under submit_lock: CTX_CLEAR queued */
	struct dma_fence *last;		/* under submit_lock: last job queued */
	struct work_struct teardown;	/* entity teardown after destroy */
	atomic_t hw_jobs;		/* its jobs on the device now */
	struct qgpu_usage *usage;	/* its file's engine time */
	wait_queue_head_t hw_idle;	/* woken when hw_jobs drops to 0 */
	struct qgpu_vm *vm;		/* virtual context: its address space */
	struct qgpu_mfence *mfence;	/* its monitored fence */
	u32 mfence_handle;		/* ... and its handle in the file */
	s64 user;			/* uid its id counts for, or -1 */
};

int qgpu_ctx_create_ioctl(struct drm_device *drm, void *data,
			  struct drm_file *file);
int qgpu_ctx_destroy_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
struct qgpu_ctx *qgpu_ctx_lookup(struct qgpu_file *qf, u32 id);
void qgpu_ctx_put(struct qgpu_ctx *ctx);
u32 qgpu_ctx_enc_first(struct qgpu_ctx *ctx, u32 *cmds);
int qgpu_ctx_begin_submit(struct qgpu_ctx *ctx);
void qgpu_ctx_end_submit(struct qgpu_ctx *ctx);
void qgpu_ctx_queued(struct qgpu_ctx *ctx, struct dma_fence *fence);
bool qgpu_ctx_hw_begin(struct qgpu_ctx *ctx);
void qgpu_ctx_hw_end(struct qgpu_ctx *ctx);
bool qgpu_ctx_is_lost(struct qgpu_ctx *ctx);
void qgpu_ctx_mark_lost(struct qgpu_ctx *ctx, u32 why);
void qgpu_ctx_hw_fault(struct qgpu_device *qdev, u32 id, u32 reason,
		       u32 offset, u64 addr);
int qgpu_ctx_status(struct qgpu_file *qf, u32 id,
		    struct drm_qgpu_context_status *st);
void qgpu_ctx_file_fini(struct qgpu_file *qf);
void qgpu_ctx_device_fini(struct qgpu_device *qdev);

#endif /* QGPU_CTX_H */
