/*
 * qgpu: paging-engine command decode (engine 0), modelled on
 * DxgkDdiBuildPagingBuffer: TRANSFER, FILL, DISCARD, MAP_APERTURE,
 * UNMAP_APERTURE, and (1.2, the GPU MMU) UPDATE_PT, FLUSH_TLB,
 * TRANSFER_VIRTUAL, FILL_VIRTUAL. Each command's parameters are all checked
 * before anything moves; the executors (qgpu-exec.c) then do the work. The
 * virtual commands address the paging process's address space
 * (MMU_PAGING_ROOT) through the paging engine's TLB.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qgpu-state.h"
#include "qgpu-addr.h"
#include "qgpu-mmu.h"
#include "qgpu-exec.h"
#include "qgpu-paging.h"

/* One side of a TRANSFER or FILL: @size bytes, or a page list for them */
static int qgpu_paging_check_side(QGPUState *s, uint64_t base, bool pagelist,
                                  uint64_t size, uint64_t *fault_addr)
{
    int fault = qgpu_addr_check(s, base, pagelist
                                ? (size >> QGPU_PAGE_SHIFT) * 8 : size);

    if (fault) {
        *fault_addr = base;
    }
    return fault;
}

static int qgpu_paging_cmd_transfer(QGPUState *s, uint32_t flags,
                                    const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t size = qgpu_cmd_u64(dw, 1);
    uint64_t src = qgpu_cmd_u64(dw, 3);
    uint64_t dst = qgpu_cmd_u64(dw, 5);
    int fault;

    flags &= QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST;
    if (flags && (size & (QGPU_PAGE_SIZE - 1))) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_paging_check_side(s, src, flags & QGPU_XFER_SRC_PAGELIST,
                                   size, fault_addr);
    if (!fault) {
        fault = qgpu_paging_check_side(s, dst, flags & QGPU_XFER_DST_PAGELIST,
                                       size, fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_copy(s, QGPU_ENGINE_PAGING, qgpu_space_phys(), src, dst,
                         size, flags);
    return QGPU_FAULT_NONE;
}

static int qgpu_paging_cmd_fill(QGPUState *s, uint32_t flags,
                                const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t size = qgpu_cmd_u64(dw, 1);
    uint64_t dst = qgpu_cmd_u64(dw, 3);
    int fault;

    flags &= QGPU_XFER_DST_PAGELIST;
    if ((size & 3) || (flags && (size & (QGPU_PAGE_SIZE - 1)))) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_paging_check_side(s, dst, flags, size, fault_addr);
    if (fault) {
        return fault;
    }
    qgpu_exec_start_fill(s, QGPU_ENGINE_PAGING, qgpu_space_phys(), dst, size,
                         dw[5], flags);
    return QGPU_FAULT_NONE;
}

static int qgpu_paging_cmd_aperture(QGPUState *s, bool map,
                                    const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t gart_pages = s->gart_size >> QGPU_PAGE_SHIFT;
    uint64_t first = dw[1], count = dw[2], list = 0;
    int fault;

    if (first > gart_pages || count > gart_pages - first) {
        *fault_addr = QGPU_GART_BASE + (first << QGPU_PAGE_SHIFT);
        return QGPU_FAULT_BAD_ADDRESS;
    }
    if (map) {
        list = qgpu_cmd_u64(dw, 3);
        fault = qgpu_addr_check(s, list, count * 8);
        if (fault) {
            *fault_addr = list;
            return fault;
        }
    }
    qgpu_exec_start_gart(s, QGPU_ENGINE_PAGING, map, first, count, list);
    return QGPU_FAULT_NONE;
}

/*
 * UPDATE_PT: checks in order: the inline entries fit in the command
 * (BAD_LENGTH), dst 8-byte aligned (BAD_ALIGN), the list (BAD_ADDRESS),
 * the destination range, physical or in the paging address space.
 */
static int qgpu_paging_cmd_update_pt(QGPUState *s, uint32_t flags,
                                     const uint32_t *dw, uint64_t *fault_addr)
{
    uint64_t dst = qgpu_cmd_u64(dw, 1), count = dw[3];
    uint64_t list = qgpu_cmd_u64(dw, 4);
    QGPUSpace as = flags & QGPU_PT_DST_VIRTUAL ? qgpu_mmu_paging_space(s)
                                               : qgpu_space_phys();
    int fault;

    flags &= QGPU_PT_DST_VIRTUAL | QGPU_PT_INLINE;
    if ((flags & QGPU_PT_INLINE) &&
        QGPU_CMD_LEN(dw[0]) < QGPU_CMD_UPDATE_PT_LEN + 2 * count) {
        *fault_addr = dw[0];
        return QGPU_FAULT_BAD_LENGTH;
    }
    if (dst & 7) {
        *fault_addr = dst;
        return QGPU_FAULT_BAD_ALIGN;
    }
    if (!(flags & QGPU_PT_INLINE) && qgpu_addr_check(s, list, count * 8)) {
        *fault_addr = list;
        return QGPU_FAULT_BAD_ADDRESS;
    }
    fault = qgpu_mmu_check(s, QGPU_ENGINE_PAGING, as, dst, count * 8, true,
                           fault_addr);
    if (fault) {
        return fault;
    }
    qgpu_exec_start_update_pt(s, QGPU_ENGINE_PAGING, as, dst, count, list,
                              flags);
    return QGPU_FAULT_NONE;
}

/* TRANSFER_VIRTUAL: both ranges checked (src, then dst) before any copy */
static int qgpu_paging_cmd_transfer_virtual(QGPUState *s, const uint32_t *dw,
                                            uint64_t *fault_addr)
{
    uint64_t size = qgpu_cmd_u64(dw, 1);
    uint64_t src = qgpu_cmd_u64(dw, 3);
    uint64_t dst = qgpu_cmd_u64(dw, 5);
    QGPUSpace as = qgpu_mmu_paging_space(s);
    int fault;

    fault = qgpu_mmu_check(s, QGPU_ENGINE_PAGING, as, src, size, false,
                           fault_addr);
    if (!fault) {
        fault = qgpu_mmu_check(s, QGPU_ENGINE_PAGING, as, dst, size, true,
                               fault_addr);
    }
    if (fault) {
        return fault;
    }
    qgpu_exec_start_copy(s, QGPU_ENGINE_PAGING, as, src, dst, size, 0);
    return QGPU_FAULT_NONE;
}

static int qgpu_paging_cmd_fill_virtual(QGPUState *s, const uint32_t *dw,
                                        uint64_t *fault_addr)
{
    uint64_t size = qgpu_cmd_u64(dw, 1);
    uint64_t dst = qgpu_cmd_u64(dw, 3);
    QGPUSpace as = qgpu_mmu_paging_space(s);
    int fault;

    if (size & 3) {
        *fault_addr = size;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_mmu_check(s, QGPU_ENGINE_PAGING, as, dst, size, true,
                           fault_addr);
    if (fault) {
        return fault;
    }
    qgpu_exec_start_fill(s, QGPU_ENGINE_PAGING, as, dst, size, dw[5], 0);
    return QGPU_FAULT_NONE;
}

/*
 * Start paging command @op (its length already checked): it completes here
 * or leaves a job on the paging engine.
 */
int qgpu_paging_cmd(QGPUState *s, uint32_t op, uint32_t flags,
                    const uint32_t *dw, uint64_t *fault_addr)
{
    switch (op) {
    case QGPU_CMD_TRANSFER:
        return qgpu_paging_cmd_transfer(s, flags, dw, fault_addr);
    case QGPU_CMD_FILL:
        return qgpu_paging_cmd_fill(s, flags, dw, fault_addr);
    case QGPU_CMD_DISCARD:
        return qgpu_exec_discard(s, qgpu_cmd_u64(dw, 3),
                                 qgpu_cmd_u64(dw, 1), fault_addr);
    case QGPU_CMD_MAP_APERTURE:
    case QGPU_CMD_UNMAP_APERTURE:
        return qgpu_paging_cmd_aperture(s, op == QGPU_CMD_MAP_APERTURE, dw,
                                        fault_addr);
    case QGPU_CMD_UPDATE_PT:
        return qgpu_paging_cmd_update_pt(s, flags, dw, fault_addr);
    case QGPU_CMD_FLUSH_TLB:
        qgpu_mmu_flush(s, qgpu_cmd_u64(dw, 1), flags & QGPU_FLUSH_TLB_ALL);
        return QGPU_FAULT_NONE;
    case QGPU_CMD_TRANSFER_VIRTUAL:
        return qgpu_paging_cmd_transfer_virtual(s, dw, fault_addr);
    case QGPU_CMD_FILL_VIRTUAL:
        return qgpu_paging_cmd_fill_virtual(s, dw, fault_addr);
    default:
        *fault_addr = op;
        return QGPU_FAULT_BAD_OPCODE;
    }
}
