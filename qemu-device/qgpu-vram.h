/*
 * qgpu: VRAM's host memory -- giving it back, what is committed, and
 * zeroing that commits nothing
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_VRAM_H
#define HW_QGPU_VRAM_H

#include "qgpu-state.h"

uint64_t qgpu_vram_committed(QGPUState *s);
void qgpu_vram_discard(QGPUState *s, uint64_t start, uint64_t len);
bool qgpu_vram_zero(QGPUState *s, uint8_t *host, uint64_t len);

#endif /* HW_QGPU_VRAM_H */
