/*
 * qgpu: the GPU MMU (1.2) -- page-table walks, per-engine TLBs, and
 * accesses through an address space (physical, or virtual)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_MMU_H
#define HW_QGPU_MMU_H

#include "qgpu-state.h"

/* The physical address space: GPU addresses as in hw-spec section 6 */
static inline QGPUSpace qgpu_space_phys(void)
{
    return (QGPUSpace) { .virt = false, .root = 0 };
}

/* The address space of root descriptor @root */
static inline QGPUSpace qgpu_space_virt(uint64_t root)
{
    return (QGPUSpace) { .virt = true, .root = root };
}

uint32_t qgpu_mmu_reg_read(QGPUState *s, hwaddr addr, bool *ok);
bool qgpu_mmu_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_mmu_reset(QGPUState *s);
QGPUSpace qgpu_mmu_paging_space(QGPUState *s);
void qgpu_mmu_flush(QGPUState *s, uint64_t root, bool all);

/*
 * Accesses by engine @n through address space @as. In the physical space
 * these are the qgpu-addr.c ones. In a virtual space, a fault also notes
 * FAULT_INFO and FAULT_VM in the engine (QGPUEngine.fault_info/fault_vm)
 * for the fault record, and *fault_addr is the VA.
 */
int qgpu_mmu_check(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                   uint64_t len, bool is_write, uint64_t *fault_addr);
int qgpu_mmu_translate(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                       uint64_t len, bool is_write, uint64_t *phys,
                       uint64_t *plen, uint64_t *fault_addr);
int qgpu_mmu_access(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                    void *buf, uint64_t len, bool is_write,
                    uint64_t *fault_addr);
int qgpu_mmu_fill(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                  uint64_t len, uint32_t pattern, uint64_t phase,
                  uint64_t *fault_addr);
int qgpu_mmu_data_fault(QGPUState *s, unsigned n, QGPUSpace as,
                        uint64_t addr, bool is_write, int reason,
                        uint64_t *fault_addr);

#endif /* HW_QGPU_MMU_H */
