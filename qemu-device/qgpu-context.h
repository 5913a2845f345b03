/*
 * qgpu: render contexts -- per-context slot tables (context save) and the
 * faulted state that makes later EXECs of a context skip, and (1.2) the
 * address space each context is bound to
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_CONTEXT_H
#define HW_QGPU_CONTEXT_H

#include "qgpu-state.h"

void qgpu_context_realize(QGPUState *s);
void qgpu_context_finalize(QGPUState *s);
void qgpu_context_reset(QGPUState *s);
uint32_t qgpu_context_reg_read(QGPUState *s, hwaddr addr);
void qgpu_context_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
bool qgpu_context_faulted(QGPUState *s, uint32_t ctx);
void qgpu_context_fault(QGPUState *s, uint32_t ctx);
void qgpu_context_clear(QGPUState *s, uint32_t ctx);
int qgpu_context_unbind(QGPUState *s, uint32_t ctx, uint32_t first,
                        uint32_t count, uint64_t *fault_addr);
int qgpu_context_bind(QGPUState *s, uint32_t ctx, uint32_t slot,
                      uint64_t addr, uint64_t size, uint64_t *fault_addr);
int qgpu_context_slot_addr(QGPUState *s, uint32_t ctx, uint32_t slot,
                           uint64_t off, uint64_t len, uint64_t *addr,
                           uint64_t *fault_addr);
void qgpu_context_set_vm(QGPUState *s, uint32_t ctx, uint64_t root);
QGPUSpace qgpu_context_space(QGPUState *s, uint32_t ctx);

#endif /* HW_QGPU_CONTEXT_H */
