/*
 * qgpu: the CPU host aperture (BAR4) -- HAP_* registers, page table, BAR
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_HAP_H
#define HW_QGPU_HAP_H

#include "qgpu-state.h"

void qgpu_hap_realize(QGPUState *s);
void qgpu_hap_unrealize(QGPUState *s);
uint32_t qgpu_hap_reg_read(QGPUState *s, hwaddr addr);
bool qgpu_hap_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_hap_reset(QGPUState *s);

#endif /* HW_QGPU_HAP_H */
