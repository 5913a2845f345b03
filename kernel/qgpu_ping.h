/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_PING_H
#define QGPU_PING_H

#include "qgpu_device.h"

/* qgpu_ping.c: the PING doorbell round trip (DRM_IOCTL_QGPU_PING) */
int qgpu_ping_init(struct qgpu_device *qdev);
void qgpu_ping_irq(struct qgpu_device *qdev);
void qgpu_ping_fini(struct qgpu_device *qdev);
int qgpu_ping_ioctl(struct drm_device *drm, void *data,
		    struct drm_file *file);

#endif /* QGPU_PING_H */
