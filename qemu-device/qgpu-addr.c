/*
 * qgpu: the GPU address space -- VRAM, GART, system memory; translation
 * and the one access helper every engine command uses.
 *
 * GPU address space:
 *   [0, vram_size)                          VRAM (host pointer)
 *   [QGPU_GART_BASE, +gart_size)            GART, 4 KiB pages translated
 *                                           through the table at GART_BASE
 *   QGPU_SYS_BIT | gpa                      guest-physical memory
 * The GART table is read with pci_dma_read on every access (no TLB).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qgpu-state.h"
#include "qgpu-addr.h"

/* GART_BASE_LO, GART_BASE_HI, GART_CTRL */
uint32_t qgpu_addr_reg_read(QGPUState *s, hwaddr addr)
{
    switch (addr) {
    case QGPU_REG_GART_BASE_LO:
        return s->gart_base;
    case QGPU_REG_GART_BASE_HI:
        return s->gart_base >> 32;
    default:
        return s->gart_ctrl;
    }
}

void qgpu_addr_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case QGPU_REG_GART_BASE_LO:
        s->gart_base = deposit64(s->gart_base, 0, 32, val);
        break;
    case QGPU_REG_GART_BASE_HI:
        s->gart_base = deposit64(s->gart_base, 32, 32, val);
        break;
    default:
        s->gart_ctrl = val & QGPU_GART_CTRL_ENABLE;
        break;
    }
}

void qgpu_addr_reset(QGPUState *s)
{
    s->gart_base = 0;
    s->gart_ctrl = 0;
}

/* Is the whole range [addr, addr + len) inside one region? len > 0. */
int qgpu_addr_check(QGPUState *s, uint64_t addr, uint64_t len)
{
    if (len == 0) {
        return QGPU_FAULT_NONE;
    }
    if (addr < s->vram_size) {
        return len <= s->vram_size - addr ? QGPU_FAULT_NONE
                                          : QGPU_FAULT_BAD_ADDRESS;
    }
    if (addr >= QGPU_GART_BASE && addr - QGPU_GART_BASE < s->gart_size) {
        return len <= s->gart_size - (addr - QGPU_GART_BASE)
               ? QGPU_FAULT_NONE : QGPU_FAULT_BAD_ADDRESS;
    }
    if (addr & QGPU_SYS_BIT) {
        /* the system window ends at 2^64 */
        return len - 1 <= UINT64_MAX - addr ? QGPU_FAULT_NONE
                                            : QGPU_FAULT_BAD_ADDRESS;
    }
    return QGPU_FAULT_BAD_ADDRESS;
}

/* Slot bindings must lie wholly inside VRAM or the GART range. */
bool qgpu_addr_in_vram_or_gart(QGPUState *s, uint64_t addr, uint64_t len)
{
    if (addr & QGPU_SYS_BIT) {
        return false;
    }
    return qgpu_addr_check(s, addr, len) == QGPU_FAULT_NONE;
}

/*
 * Translate the start of [addr, addr + len) into one contiguous piece:
 * a VRAM host pointer or a guest-physical address. len > 0.
 */
int qgpu_addr_translate(QGPUState *s, uint64_t addr, uint64_t len,
                        QGPUSeg *seg)
{
    int fault = qgpu_addr_check(s, addr, len);

    if (fault) {
        return fault;
    }
    seg->host = NULL;
    seg->gpa = 0;
    if (addr < s->vram_size) {
        seg->host = s->vram + addr;
        seg->len = len;
        return QGPU_FAULT_NONE;
    }
    if (!(addr & QGPU_SYS_BIT)) {
        uint64_t off = addr - QGPU_GART_BASE;
        uint64_t page = off >> QGPU_PAGE_SHIFT;
        uint64_t in_page = off & (QGPU_PAGE_SIZE - 1);
        uint64_t entry;

        if (!(s->gart_ctrl & QGPU_GART_CTRL_ENABLE)) {
            return QGPU_FAULT_GART_UNMAPPED;
        }
        if (pci_dma_read(PCI_DEVICE(s), s->gart_base + page * 8, &entry,
                         sizeof(entry)) != MEMTX_OK) {
            return QGPU_FAULT_DMA_ERROR;
        }
        entry = le64_to_cpu(entry);
        if (!(entry & QGPU_GART_ENTRY_VALID)) {
            return QGPU_FAULT_GART_UNMAPPED;
        }
        seg->gpa = (entry & QGPU_GART_ENTRY_ADDR_MASK) + in_page;
        seg->len = MIN(len, QGPU_PAGE_SIZE - in_page);
        return QGPU_FAULT_NONE;
    }
    seg->gpa = addr & ~QGPU_SYS_BIT;
    seg->len = len;
    return QGPU_FAULT_NONE;
}

/*
 * Read or write [addr, addr + len) at a GPU address, piece by piece.
 * The whole range is checked before anything is transferred; a GART or
 * DMA fault in the middle leaves the earlier pieces done. On a fault,
 * *fault_addr is the GPU address of the failing piece.
 */
int qgpu_addr_access(QGPUState *s, uint64_t addr, void *buf, uint64_t len,
                     bool is_write, uint64_t *fault_addr)
{
    uint8_t *p = buf;
    int fault = qgpu_addr_check(s, addr, len);

    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    while (len) {
        QGPUSeg seg;
        MemTxResult r;

        fault = qgpu_addr_translate(s, addr, len, &seg);
        if (fault) {
            *fault_addr = addr;
            return fault;
        }
        if (seg.host) {
            if (is_write) {
                memmove(seg.host, p, seg.len);
            } else {
                memmove(p, seg.host, seg.len);
            }
        } else {
            r = is_write ? pci_dma_write(PCI_DEVICE(s), seg.gpa, p, seg.len)
                         : pci_dma_read(PCI_DEVICE(s), seg.gpa, p, seg.len);
            if (r != MEMTX_OK) {
                *fault_addr = addr;
                return QGPU_FAULT_DMA_ERROR;
            }
        }
        p += seg.len;
        addr += seg.len;
        len -= seg.len;
    }
    return QGPU_FAULT_NONE;
}

/* Byte i of a fill gets byte (phase + i) % 4 of the little-endian pattern */
static void qgpu_addr_pattern(uint8_t *p, uint64_t len, uint32_t pattern,
                              uint64_t phase)
{
    uint8_t b[4];
    uint64_t i;

    for (i = 0; i < 4; i++) {
        b[i] = pattern >> (8 * ((phase + i) & 3));
    }
    if (len >= 4 && ((uintptr_t)p & 3) == 0) {
        uint32_t w;

        memcpy(&w, b, 4);
        for (i = 0; i + 4 <= len; i += 4) {
            *(uint32_t *)(p + i) = w;
        }
        for (; i < len; i++) {
            p[i] = b[i & 3];
        }
        return;
    }
    for (i = 0; i < len; i++) {
        p[i] = b[i & 3];
    }
}

/* Fill [addr, addr + len) with a 32-bit pattern starting at phase. */
int qgpu_addr_fill(QGPUState *s, uint64_t addr, uint64_t len,
                   uint32_t pattern, uint64_t phase, uint64_t *fault_addr)
{
    g_autofree uint8_t *bounce = NULL;
    int fault = qgpu_addr_check(s, addr, len);

    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    while (len) {
        QGPUSeg seg;

        fault = qgpu_addr_translate(s, addr, len, &seg);
        if (fault) {
            *fault_addr = addr;
            return fault;
        }
        if (seg.host) {
            qgpu_addr_pattern(seg.host, seg.len, pattern, phase);
        } else {
            uint64_t done = 0;

            if (!bounce) {
                bounce = g_malloc(QGPU_BOUNCE_SIZE);
            }
            while (done < seg.len) {
                uint64_t n = MIN(seg.len - done, QGPU_BOUNCE_SIZE);

                qgpu_addr_pattern(bounce, n, pattern, phase + done);
                if (pci_dma_write(PCI_DEVICE(s), seg.gpa + done, bounce,
                                  n) != MEMTX_OK) {
                    *fault_addr = addr + done;
                    return QGPU_FAULT_DMA_ERROR;
                }
                done += n;
            }
        }
        phase += seg.len;
        addr += seg.len;
        len -= seg.len;
    }
    return QGPU_FAULT_NONE;
}
