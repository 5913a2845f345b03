/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_QUERY_H
#define QGPU_QUERY_H

#include "qgpu_device.h"

int qgpu_query_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file);
void qgpu_query_stats(struct qgpu_counters *c, struct drm_qgpu_stats *st);
void qgpu_query_device_stats(struct qgpu_device *qdev,
			     struct drm_qgpu_stats *st);

#endif /* QGPU_QUERY_H */
