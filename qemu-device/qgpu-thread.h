/*
 * qgpu: the device thread -- where the engines run, and the big QEMU lock
 * (BQL) around their work
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_THREAD_H
#define HW_QGPU_THREAD_H

#include "qgpu-state.h"

/*
 * Pieces of work smaller than this run with the BQL held: taking it again
 * would cost more than the copy
 */
#define QGPU_THREAD_UNLOCK_MIN  (64 * KiB)

void qgpu_thread_start(QGPUState *s, QGPUThreadRound *round);
void qgpu_thread_stop(QGPUState *s);
void qgpu_thread_kick(QGPUState *s);
bool qgpu_thread_unlock(QGPUState *s);
bool qgpu_thread_relock(QGPUState *s);
void qgpu_thread_quiesce(QGPUState *s);
bool qgpu_thread_in_flight(QGPUState *s);

#endif /* HW_QGPU_THREAD_H */
