/*
 * qgpu: paging-engine command decode (engine 0)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_PAGING_H
#define HW_QGPU_PAGING_H

#include "qgpu-state.h"

int qgpu_paging_cmd(QGPUState *s, uint32_t op, uint32_t flags,
                    const uint32_t *dw, uint64_t *fault_addr);

#endif /* HW_QGPU_PAGING_H */
