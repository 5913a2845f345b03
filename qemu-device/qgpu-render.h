/*
 * qgpu: render-engine decode (engine 1) -- EXEC, CTX_CLEAR, CTX_UNBIND and
 * the DMA-buffer commands
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_RENDER_H
#define HW_QGPU_RENDER_H

#include "qgpu-state.h"

int qgpu_render_ring_cmd(QGPUState *s, uint32_t op, const uint32_t *dw,
                         uint64_t *fault_addr, uint32_t *fault_ctx);
int qgpu_render_step(QGPUState *s, uint64_t *fault_addr);
bool qgpu_render_wait_check(QGPUState *s, int *fault, uint64_t *fault_addr);

#endif /* HW_QGPU_RENDER_H */
