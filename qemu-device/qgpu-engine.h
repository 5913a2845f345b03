/*
 * qgpu: engines -- rings, command fetch, scheduling, engine registers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_ENGINE_H
#define HW_QGPU_ENGINE_H

#include "qgpu-state.h"

void qgpu_engine_realize(QGPUState *s);
void qgpu_engine_unrealize(QGPUState *s);
void qgpu_engine_reset_all(QGPUState *s);
uint32_t qgpu_engine_read(QGPUState *s, unsigned n, hwaddr reg, bool *ok);
bool qgpu_engine_write(QGPUState *s, unsigned n, hwaddr reg, uint32_t val);

#endif /* HW_QGPU_ENGINE_H */
