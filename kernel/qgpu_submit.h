/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_SUBMIT_H
#define QGPU_SUBMIT_H

#include "qgpu_device.h"

int qgpu_submit_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

#endif /* QGPU_SUBMIT_H */
