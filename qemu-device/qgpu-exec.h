/*
 * qgpu: executors -- what the paging and render commands do, shared by
 * both decoders: copies and fills (plain, through page lists, or through
 * the GPU MMU), GART and page-table writes, ALU and checksum passes,
 * tiling and untiling (1.3), DISCARD, fence writes
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_EXEC_H
#define HW_QGPU_EXEC_H

#include "qgpu-state.h"

/*
 * Starting a job: each start function sets engine @n's job (or leaves none
 * for zero bytes); qgpu_exec_run() then runs it in bounded chunks. The
 * caller has checked every parameter the command decoder owns.
 */
void qgpu_exec_start_copy(QGPUState *s, unsigned n, QGPUSpace as,
                          uint64_t src, uint64_t dst, uint64_t size,
                          uint32_t flags);
void qgpu_exec_start_fill(QGPUState *s, unsigned n, QGPUSpace as,
                          uint64_t dst, uint64_t size, uint32_t pattern,
                          uint32_t flags);
void qgpu_exec_start_gart(QGPUState *s, unsigned n, bool map,
                          uint64_t first, uint64_t count, uint64_t list);
void qgpu_exec_start_update_pt(QGPUState *s, unsigned n, QGPUSpace dst_as,
                               uint64_t dst, uint64_t count, uint64_t list,
                               uint32_t flags);
void qgpu_exec_start_alu(QGPUState *s, unsigned n, QGPUSpace as,
                         QGPUJobKind kind, uint64_t dst, uint64_t a,
                         uint64_t b, uint64_t size);
int qgpu_exec_start_csum(QGPUState *s, unsigned n, QGPUSpace as,
                         uint64_t src, uint64_t dst, uint64_t size,
                         uint64_t *fault_addr);
void qgpu_exec_start_tile(QGPUState *s, unsigned n, QGPUSpace as,
                          bool untile, uint64_t src, uint64_t dst,
                          uint32_t width, uint32_t height, uint32_t pitch);

/*
 * Run engine @n's job until done or out of @budget; a fault stops it.
 * QGPU_EXEC_ABANDONED (not a fault): the engine was reset or the device
 * is going away while a copy ran without the BQL, or the job's own DMA
 * reset the device (qgpu_cmd_abandoned()); the job is gone.
 */
#define QGPU_EXEC_ABANDONED     (-1)

int qgpu_exec_run(QGPUState *s, unsigned n, int64_t *budget,
                  uint64_t *fault_addr);

/* Commands that complete at once */
int qgpu_exec_discard(QGPUState *s, uint64_t addr, uint64_t size,
                      uint64_t *fault_addr);
int qgpu_exec_fence(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                    uint64_t value, bool irq, uint64_t *fault_addr);

#endif /* HW_QGPU_EXEC_H */
