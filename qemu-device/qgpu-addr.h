/*
 * qgpu: the GPU address space -- VRAM, GART, system memory; translation
 * and the one access helper every engine command uses
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_ADDR_H
#define HW_QGPU_ADDR_H

#include "qgpu-state.h"

/* Bytes staged at a time when neither side of a move is VRAM */
#define QGPU_BOUNCE_SIZE        (64 * KiB)

/* One contiguous piece of a GPU address range */
typedef struct QGPUSeg {
    uint8_t *host;              /* non-NULL: VRAM host pointer */
    dma_addr_t gpa;             /* otherwise: guest physical address */
    uint64_t len;               /* contiguous bytes */
} QGPUSeg;

uint32_t qgpu_addr_reg_read(QGPUState *s, hwaddr addr);
void qgpu_addr_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_addr_reset(QGPUState *s);
int qgpu_addr_check(QGPUState *s, uint64_t addr, uint64_t len);
bool qgpu_addr_in_vram_or_gart(QGPUState *s, uint64_t addr, uint64_t len);
int qgpu_addr_translate(QGPUState *s, uint64_t addr, uint64_t len,
                        QGPUSeg *seg);
int qgpu_addr_access(QGPUState *s, uint64_t addr, void *buf, uint64_t len,
                     bool is_write, uint64_t *fault_addr);
int qgpu_addr_fill(QGPUState *s, uint64_t addr, uint64_t len,
                   uint32_t pattern, uint64_t phase, uint64_t *fault_addr);

#endif /* HW_QGPU_ADDR_H */
