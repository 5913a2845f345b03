/* SPDX-License-Identifier: GPL-2.0 */
#ifndef QGPU_MMIO_H
#define QGPU_MMIO_H

#include <linux/io.h>
#include <qgpu/qgpu_regs.h>

#include "qgpu_device.h"

/*
 * BAR0 access. Only the device half of the driver includes this header:
 * qgpu_hw.c (identity, reset, interrupts, GART and host-aperture
 * registers), qgpu_engine.c (rings, interrupts, the fault queue) and
 * qgpu_ping.c (the PING doorbell). The
 * memory manager and the submission path program the device through
 * qgpu_hw.h and through ring commands (qgpu_ring.h), never registers.
 */

static inline u32 qgpu_rd(struct qgpu_device *qdev, u32 reg)
{
	return readl(qdev->mmio + reg);
}

static inline void qgpu_wr(struct qgpu_device *qdev, u32 reg, u32 val)
{
	writel(val, qdev->mmio + reg);
}

static inline u64 qgpu_rd64(struct qgpu_device *qdev, u32 lo)
{
	u64 l = qgpu_rd(qdev, lo);

	return l | ((u64)qgpu_rd(qdev, lo + 4) << 32);
}

#endif /* QGPU_MMIO_H */
