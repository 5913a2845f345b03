/*
 * qgpu: the GPU MMU (device version 1.2, QGPU_CAP_MMU) -- page-table walks,
 * per-engine TLBs, and accesses through an address space.
 *
 * A GPU virtual address (VA) of QGPU_MMU_VA_BITS bits is translated through
 * QGPU_MMU_LEVELS levels of 4 KiB tables (qgpu_mmu.h): root (level 2),
 * level 1, leaf (level 0). Tables are read physically, from VRAM or (with
 * QGPU_PTE_SYSTEM) from guest memory by DMA; the depth is fixed and every
 * address is range-checked, so no guest page table can loop or reach
 * outside VRAM. A leaf maps a 4 KiB page, or, through the 64K bit of the
 * first entry of an aligned group of 16, a 64 KiB page.
 *
 * Each engine has a TLB of QGPU_MMU_TLB_ENTRIES valid leaf translations,
 * fully associative, filled in FIFO order; only FLUSH_TLB and a device
 * reset invalidate entries, so a driver that changes a page table without
 * a flush keeps the stale translation, as on hardware.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qgpu-state.h"
#include "qgpu-addr.h"
#include "qgpu-mmu.h"
#include "trace.h"

/* Registers: capabilities, MMU_PAGING_ROOT, TLB counters */

uint32_t qgpu_mmu_reg_read(QGPUState *s, hwaddr addr, bool *ok)
{
    *ok = true;
    switch (addr) {
    case QGPU_REG_MMU_VA_BITS:
        return QGPU_MMU_VA_BITS;
    case QGPU_REG_MMU_LEVELS:
        return QGPU_MMU_LEVELS;
    case QGPU_REG_MMU_PAGE_SIZES:
        return QGPU_MMU_PAGE_SIZES;
    case QGPU_REG_MMU_PTE_SIZE:
        return QGPU_MMU_PTE_SIZE;
    case QGPU_REG_MMU_TLB_ENTRIES:
        return QGPU_MMU_TLB_ENTRIES;
    case QGPU_REG_MMU_PAGING_ROOT_LO:
    case QGPU_REG_MMU_PAGING_ROOT_HI:
        return extract64(s->mmu_paging_root,
                         addr == QGPU_REG_MMU_PAGING_ROOT_LO ? 0 : 32, 32);
    case QGPU_REG_TLB_HITS_LO:
    case QGPU_REG_TLB_HITS_HI:
        return extract64(s->tlb_hits, addr == QGPU_REG_TLB_HITS_LO ? 0 : 32,
                         32);
    case QGPU_REG_TLB_MISSES_LO:
    case QGPU_REG_TLB_MISSES_HI:
        return extract64(s->tlb_misses,
                         addr == QGPU_REG_TLB_MISSES_LO ? 0 : 32, 32);
    case QGPU_REG_TLB_FLUSHES_LO:
    case QGPU_REG_TLB_FLUSHES_HI:
        return extract64(s->tlb_flushes,
                         addr == QGPU_REG_TLB_FLUSHES_LO ? 0 : 32, 32);
    default:
        *ok = false;
        return 0;
    }
}

/* MMU_PAGING_ROOT_LO/HI; false for the read-only MMU registers */
bool qgpu_mmu_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case QGPU_REG_MMU_PAGING_ROOT_LO:
        s->mmu_paging_root = deposit64(s->mmu_paging_root, 0, 32, val);
        return true;
    case QGPU_REG_MMU_PAGING_ROOT_HI:
        s->mmu_paging_root = deposit64(s->mmu_paging_root, 32, 32, val);
        return true;
    default:
        return false;
    }
}

/* Every TLB empty, the paging root 0; the TLB counters are kept. */
void qgpu_mmu_reset(QGPUState *s)
{
    unsigned n;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        memset(&s->eng[n].tlb, 0, sizeof(s->eng[n].tlb));
    }
    s->mmu_paging_root = 0;
}

/* Address space 0: the paging process's, for the paging engine */
QGPUSpace qgpu_mmu_paging_space(QGPUState *s)
{
    return qgpu_space_virt(s->mmu_paging_root);
}

/* The TLB tag of a root descriptor: its table's address and location */
static uint64_t qgpu_mmu_tag(uint64_t root)
{
    return root & (QGPU_PTE_ADDR_MASK | QGPU_PTE_SYSTEM);
}

/* FLUSH_TLB: the entries of @root's address space (@all: every entry) */
void qgpu_mmu_flush(QGPUState *s, uint64_t root, bool all)
{
    uint64_t tag = qgpu_mmu_tag(root);
    unsigned n, i, count = 0;

    for (n = 0; n < QGPU_NUM_ENGINES; n++) {
        QGPUTlb *tlb = &s->eng[n].tlb;

        for (i = 0; i < QGPU_MMU_TLB_ENTRIES; i++) {
            if (tlb->e[i].valid && (all || tlb->e[i].root == tag)) {
                tlb->e[i].valid = false;
                count++;
            }
        }
    }
    s->tlb_flushes++;
    trace_qgpu_tlb_flush(root, all, count);
}

/*
 * A fault of a virtual access by engine @n: note FAULT_INFO and FAULT_VM
 * for the record the engine makes, and report the VA.
 */
static int qgpu_mmu_fault(QGPUState *s, unsigned n, QGPUSpace as,
                          uint64_t va, bool is_write, unsigned level,
                          int reason, uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];

    e->fault_info = QGPU_FAULT_INFO_VIRTUAL |
                    (is_write ? QGPU_FAULT_INFO_WRITE : 0) |
                    level << QGPU_FAULT_INFO_LEVEL_SHIFT;
    e->fault_vm = as.root;
    *fault_addr = va;
    trace_qgpu_mmu_fault(n, reason, as.root, va, e->fault_info);
    return reason;
}

/* Page-table walk */

/* Entry @idx of the table at @table: in VRAM, or guest memory if @sys */
static int qgpu_mmu_read_entry(QGPUState *s, uint64_t table, bool sys,
                               unsigned idx, uint64_t *entry)
{
    uint64_t v;

    if (sys) {
        /* table is 4 KiB aligned: table + idx * 8 cannot wrap */
        if (qgpu_dma(s, table + idx * QGPU_MMU_PTE_SIZE, &v, sizeof(v),
                     false) != MEMTX_OK) {
            return QGPU_FAULT_DMA_ERROR;
        }
    } else {
        if (table >= s->vram_size ||
            s->vram_size - table < QGPU_MMU_TABLE_SIZE) {
            return QGPU_FAULT_BAD_ADDRESS;
        }
        memcpy(&v, s->vram + table + idx * QGPU_MMU_PTE_SIZE, sizeof(v));
    }
    *entry = le64_to_cpu(v);
    return QGPU_FAULT_NONE;
}

/* The page a leaf maps must lie in VRAM, or be a GPU-addressable gpa */
static int qgpu_mmu_check_page(QGPUState *s, const QGPUTlbEntry *t)
{
    if (t->system) {
        return t->pa & QGPU_SYS_BIT ? QGPU_FAULT_BAD_ADDRESS
                                    : QGPU_FAULT_NONE;
    }
    if (t->pa >= s->vram_size || s->vram_size - t->pa < t->size) {
        return QGPU_FAULT_BAD_ADDRESS;
    }
    return QGPU_FAULT_NONE;
}

/*
 * The leaf (level 0) table at @table: the group-first entry of @va's
 * aligned group of 16 is read first; only if it is not a valid 64K entry
 * is @va's own 4 KiB entry read.
 */
static int qgpu_mmu_walk_leaf(QGPUState *s, uint64_t table, bool sys,
                              uint64_t va, QGPUTlbEntry *t)
{
    unsigned idx = qgpu_mmu_index(va, 0);
    unsigned first = idx & ~(QGPU_MMU_64K_ENTRIES - 1);
    uint64_t entry;
    int fault = qgpu_mmu_read_entry(s, table, sys, first, &entry);

    if (fault) {
        return fault;
    }
    t->size = QGPU_MMU_PAGE_64K;
    if (!(entry & QGPU_PTE_VALID) || !(entry & QGPU_PTE_64K)) {
        t->size = QGPU_MMU_PAGE_4K;
        if (idx != first) {
            fault = qgpu_mmu_read_entry(s, table, sys, idx, &entry);
            if (fault) {
                return fault;
            }
        }
        if (!(entry & QGPU_PTE_VALID)) {
            return QGPU_FAULT_PAGE_NOT_PRESENT;
        }
    }
    t->va = va & ~(t->size - 1);
    t->pa = entry & QGPU_PTE_ADDR_MASK & ~(t->size - 1);
    t->system = entry & QGPU_PTE_SYSTEM;
    t->read_only = entry & QGPU_PTE_READ_ONLY;
    return qgpu_mmu_check_page(s, t);
}

/*
 * Walk @root's tables for @va (< QGPU_MMU_VA_SIZE) into @t. On a fault,
 * *level is the level of the table whose entry failed (3: the root
 * descriptor itself).
 */
static int qgpu_mmu_walk(QGPUState *s, uint64_t root, uint64_t va,
                         QGPUTlbEntry *t, unsigned *level)
{
    uint64_t table = root & QGPU_PTE_ADDR_MASK, entry;
    bool sys = root & QGPU_PTE_SYSTEM;
    int l, fault;

    *level = QGPU_FAULT_LEVEL_ROOT;
    if (!(root & QGPU_PTE_VALID)) {
        return QGPU_FAULT_PAGE_NOT_PRESENT;
    }
    for (l = QGPU_MMU_LEVELS - 1; l > 0; l--) {
        *level = l;
        fault = qgpu_mmu_read_entry(s, table, sys, qgpu_mmu_index(va, l),
                                    &entry);
        if (fault) {
            return fault;
        }
        if (!(entry & QGPU_PTE_VALID)) {
            return QGPU_FAULT_PAGE_NOT_PRESENT;
        }
        table = entry & QGPU_PTE_ADDR_MASK;
        sys = entry & QGPU_PTE_SYSTEM;
    }
    *level = 0;
    return qgpu_mmu_walk_leaf(s, table, sys, va, t);
}

/* TLB */

static QGPUTlbEntry *qgpu_mmu_tlb_lookup(QGPUTlb *tlb, uint64_t tag,
                                         uint64_t va)
{
    unsigned i;

    for (i = 0; i < QGPU_MMU_TLB_ENTRIES; i++) {
        QGPUTlbEntry *t = &tlb->e[i];

        if (t->valid && t->root == tag && (va & ~(t->size - 1)) == t->va) {
            return t;
        }
    }
    return NULL;
}

/* The translation of @va in @as for engine @n: from its TLB, or walked */
static int qgpu_mmu_lookup(QGPUState *s, unsigned n, QGPUSpace as,
                           uint64_t va, bool is_write, QGPUTlbEntry **tp,
                           uint64_t *fault_addr)
{
    QGPUTlb *tlb = &s->eng[n].tlb;
    QGPUTlbEntry w = { 0 };
    unsigned level;
    int fault;

    *tp = qgpu_mmu_tlb_lookup(tlb, qgpu_mmu_tag(as.root), va);
    if (*tp) {
        s->tlb_hits++;
        return QGPU_FAULT_NONE;
    }
    s->tlb_misses++;
    fault = qgpu_mmu_walk(s, as.root, va, &w, &level);
    if (fault) {
        return qgpu_mmu_fault(s, n, as, va, is_write, level, fault,
                              fault_addr);
    }
    w.valid = true;
    w.root = qgpu_mmu_tag(as.root);
    *tp = &tlb->e[tlb->next];
    **tp = w;
    tlb->next = (tlb->next + 1) % QGPU_MMU_TLB_ENTRIES;
    trace_qgpu_mmu_walk(n, as.root, va, w.pa, w.size, w.system, w.read_only);
    return QGPU_FAULT_NONE;
}

/* Accesses through an address space */

/* Is [addr, addr + len) a valid range of @as? */
int qgpu_mmu_check(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                   uint64_t len, bool is_write, uint64_t *fault_addr)
{
    int fault;

    if (!as.virt) {
        fault = qgpu_addr_check(s, addr, len);
        if (fault) {
            *fault_addr = addr;
        }
        return fault;
    }
    if (len && (addr >= QGPU_MMU_VA_SIZE || len > QGPU_MMU_VA_SIZE - addr)) {
        return qgpu_mmu_fault(s, n, as, addr, is_write, QGPU_FAULT_LEVEL_NONE,
                              QGPU_FAULT_BAD_ADDRESS, fault_addr);
    }
    return QGPU_FAULT_NONE;
}

/*
 * The physical GPU address *phys of @addr in @as and the contiguous bytes
 * *plen (<= @len, > 0) from there: in a virtual space, to the end of the
 * page. @len > 0.
 */
int qgpu_mmu_translate(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                       uint64_t len, bool is_write, uint64_t *phys,
                       uint64_t *plen, uint64_t *fault_addr)
{
    QGPUTlbEntry *t;
    uint64_t off;
    int fault;

    if (!as.virt) {
        *phys = addr;
        *plen = len;
        return QGPU_FAULT_NONE;
    }
    if (qgpu_cmd_abandoned(s)) {
        /* no walk, no TLB fill of a command a reset abandoned */
        return QGPU_FAULT_DMA_ERROR;
    }
    if (addr >= QGPU_MMU_VA_SIZE) {
        return qgpu_mmu_fault(s, n, as, addr, is_write, QGPU_FAULT_LEVEL_NONE,
                              QGPU_FAULT_BAD_ADDRESS, fault_addr);
    }
    if (!(as.root & QGPU_PTE_VALID)) {
        return qgpu_mmu_fault(s, n, as, addr, is_write, QGPU_FAULT_LEVEL_ROOT,
                              QGPU_FAULT_PAGE_NOT_PRESENT, fault_addr);
    }
    fault = qgpu_mmu_lookup(s, n, as, addr, is_write, &t, fault_addr);
    if (fault) {
        return fault;
    }
    if (is_write && t->read_only) {
        return qgpu_mmu_fault(s, n, as, addr, is_write, 0,
                              QGPU_FAULT_PAGE_READ_ONLY, fault_addr);
    }
    off = addr - t->va;
    *phys = (t->system ? QGPU_SYS_BIT : 0) | (t->pa + off);
    *plen = MIN(len, t->size - off);
    return QGPU_FAULT_NONE;
}

/*
 * A fault of the data access to a translated page (DMA_ERROR of a system
 * page) at @addr of @as: reported at level 0 in a virtual space.
 */
int qgpu_mmu_data_fault(QGPUState *s, unsigned n, QGPUSpace as,
                        uint64_t addr, bool is_write, int reason,
                        uint64_t *fault_addr)
{
    if (!as.virt) {
        *fault_addr = addr;
        return reason;
    }
    return qgpu_mmu_fault(s, n, as, addr, is_write, 0, reason, fault_addr);
}

/*
 * Read or write [addr, addr + len) of @as, page by page. The range is
 * checked first; a fault in the middle leaves the earlier pages done.
 */
int qgpu_mmu_access(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                    void *buf, uint64_t len, bool is_write,
                    uint64_t *fault_addr)
{
    uint8_t *p = buf;
    int fault;

    if (!as.virt) {
        return qgpu_addr_access(s, addr, buf, len, is_write, fault_addr);
    }
    fault = qgpu_mmu_check(s, n, as, addr, len, is_write, fault_addr);
    while (!fault && len) {
        uint64_t phys, plen;

        fault = qgpu_mmu_translate(s, n, as, addr, len, is_write, &phys,
                                   &plen, fault_addr);
        if (fault) {
            break;
        }
        fault = qgpu_addr_access(s, phys, p, plen, is_write, fault_addr);
        if (fault) {
            return qgpu_mmu_data_fault(s, n, as, addr, is_write, fault,
                                       fault_addr);
        }
        p += plen;
        addr += plen;
        len -= plen;
    }
    return fault;
}

/* Fill [addr, addr + len) of @as with @pattern from @phase, page by page */
int qgpu_mmu_fill(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                  uint64_t len, uint32_t pattern, uint64_t phase,
                  uint64_t *fault_addr)
{
    int fault;

    if (!as.virt) {
        return qgpu_addr_fill(s, NULL, addr, len, pattern, phase, false,
                              fault_addr);
    }
    fault = qgpu_mmu_check(s, n, as, addr, len, true, fault_addr);
    while (!fault && len) {
        uint64_t phys, plen;

        fault = qgpu_mmu_translate(s, n, as, addr, len, true, &phys, &plen,
                                   fault_addr);
        if (fault) {
            break;
        }
        fault = qgpu_addr_fill(s, NULL, phys, plen, pattern, phase, false,
                               fault_addr);
        if (fault) {
            return qgpu_mmu_data_fault(s, n, as, addr + (*fault_addr - phys),
                                       true, fault, fault_addr);
        }
        phase += plen;
        addr += plen;
        len -= plen;
    }
    return fault;
}
