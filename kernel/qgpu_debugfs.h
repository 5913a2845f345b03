/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_DEBUGFS_H
#define QGPU_DEBUGFS_H

#include "qgpu_device.h"

void qgpu_debugfs_init(struct qgpu_device *qdev);

#endif /* QGPU_DEBUGFS_H */
