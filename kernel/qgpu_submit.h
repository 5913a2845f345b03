/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_SUBMIT_H
#define QGPU_SUBMIT_H

#include <linux/kref.h>

#include "qgpu_device.h"

struct qgpu_ctx;

/**
 * struct qgpu_dmabuf - the kernel's copy of a DMA buffer, shared by the
 *	portions (jobs) that execute it
 * @ref: one per job, and the submit's
 * @dev: device it is mapped for
 * @cpu: its kernel address
 * @dma: its bus address
 * @size: bytes
 */
struct qgpu_dmabuf {
	struct kref ref;
	struct device *dev;
	void *cpu;
	dma_addr_t dma;
	u32 size;
	struct qgpu_usage *usage;
};

int qgpu_dmabuf_copy(struct qgpu_device *qdev, struct qgpu_usage *usage,
		     u64 user, u32 size, struct qgpu_dmabuf **out);
void qgpu_dmabuf_put(void *data);
int qgpu_submit_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

/* qgpu_submit_virtual.c */
int qgpu_submit_virtual(struct qgpu_device *qdev, struct drm_file *file,
			struct qgpu_ctx *ctx, struct drm_qgpu_submit *args);

#endif /* QGPU_SUBMIT_H */
