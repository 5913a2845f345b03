/*
 * qgpu: the fault queue -- every fault the device records
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_FAULTQ_H
#define HW_QGPU_FAULTQ_H

#include "qgpu-state.h"

/* FAULT_CONTEXT of a fault that belongs to no context */
#define QGPU_NO_CONTEXT         0xffffffffu

void qgpu_faultq_record(QGPUState *s, uint32_t reason, uint32_t engine,
                        uint32_t context, uint64_t addr, uint32_t offset);
void qgpu_faultq_record_vm(QGPUState *s, uint32_t reason, uint32_t engine,
                           uint32_t context, uint64_t addr, uint32_t offset,
                           uint32_t info, uint64_t vm);
uint32_t qgpu_faultq_reg_read(QGPUState *s, hwaddr addr);
bool qgpu_faultq_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_faultq_reset(QGPUState *s);

#endif /* HW_QGPU_FAULTQ_H */
