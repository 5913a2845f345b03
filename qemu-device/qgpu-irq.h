/*
 * qgpu: interrupts -- INT_STATUS, INT_MASK, INT_ACK; MSI or INTx; PING
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_IRQ_H
#define HW_QGPU_IRQ_H

#include "qgpu-state.h"

void qgpu_irq_raise(QGPUState *s, uint32_t bits);
uint32_t qgpu_irq_reg_read(QGPUState *s, hwaddr addr);
void qgpu_irq_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_irq_ping(QGPUState *s, uint32_t val);
void qgpu_irq_reset(QGPUState *s);
void qgpu_irq_config_written(QGPUState *s);

#endif /* HW_QGPU_IRQ_H */
