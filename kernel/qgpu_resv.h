/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_RESV_H
#define QGPU_RESV_H

#include <linux/dma-resv.h>

#include "qgpu_device.h"

struct qgpu_job;

bool qgpu_fence_is_ours(struct qgpu_device *qdev, struct dma_fence *f);
int qgpu_resv_own_deps(struct qgpu_device *qdev, struct qgpu_job *job,
		       struct dma_resv *resv, u64 skip);
bool qgpu_resv_own_idle(struct qgpu_device *qdev, struct dma_resv *resv,
			u64 skip);
int qgpu_resv_own_now(struct qgpu_device *qdev, struct dma_resv *resv,
		      struct dma_fence ***out, unsigned int *n);
void qgpu_resv_wait_fences(struct dma_fence **f, unsigned int n);
void qgpu_resv_wait_fences_put(struct dma_fence **f, unsigned int n);
void qgpu_resv_wait_own(struct qgpu_device *qdev, struct dma_resv *resv,
			u64 skip);

#endif /* QGPU_RESV_H */
