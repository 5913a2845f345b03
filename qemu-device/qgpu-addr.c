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
#include "qgpu-vram.h"

/*
 * Was the command in progress abandoned while it ran? Its own DMA or MSI
 * can reset the device (a write to the Secondary Bus Reset bit of the
 * bridge above it): from that write on, nothing of the command may be
 * written, counted, latched or signalled (hw-spec 4 and 6). BQL held.
 */
bool qgpu_cmd_abandoned(QGPUState *s)
{
    return s->cmd_eng && s->cmd_eng->gen != s->cmd_gen;
}

/*
 * Bus-master DMA, the only way the engines reach what is not a host
 * pointer. Refused once the device is unplugged: its own DMA can unplug
 * it (a write to the power control of the PCIe slot it sits in), and the
 * command that did must not reach PCI state that is gone with it; and
 * refused to a command that a reset abandoned (above).
 */
MemTxResult qgpu_dma(QGPUState *s, dma_addr_t addr, void *buf,
                     dma_addr_t len, bool is_write)
{
    if (s->gone || qgpu_cmd_abandoned(s)) {
        return MEMTX_ERROR;
    }
    return is_write ? pci_dma_write(PCI_DEVICE(s), addr, buf, len)
                    : pci_dma_read(PCI_DEVICE(s), addr, buf, len);
}

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

/* Guest RAM through host pointers (QGPUAddrCtx) */

void qgpu_addr_ctx_init(QGPUAddrCtx *c)
{
    memset(c, 0, sizeof(*c));
}

/* Drop every cache (the end of a round, or after DMA to MMIO) */
void qgpu_addr_ctx_reset(QGPUAddrCtx *c)
{
    unsigned i;

    c->resets++;
    for (i = 0; i < QGPU_RAM_CACHES; i++) {
        if (c->ram[i].used) {
            address_space_cache_destroy(&c->ram[i].mrc);
            c->ram[i].used = false;
        }
    }
}

/*
 * Make @r cover the RAM at @gpa, as far as it goes (at least 1 GiB asked
 * for); the bytes covered, or 0 if it is not RAM the device may use
 * directly (ROM for a write included)
 */
static int64_t qgpu_addr_ram_init(QGPUState *s, QGPURamCache *r,
                                  dma_addr_t gpa, uint64_t len)
{
    int64_t l;

    if (s->gone || qgpu_cmd_abandoned(s)) {
        /* an empty cache, which destroying leaves alone */
        memset(&r->mrc, 0, sizeof(r->mrc));
        return 0;
    }
    l = address_space_cache_init(&r->mrc,
                                 pci_get_address_space(PCI_DEVICE(s)),
                                 gpa, MAX(len, 1 * GiB), r->is_write);
    return r->mrc.ptr ? l : 0;
}

/*
 * A host pointer to the guest RAM at @gpa, and in *avail how many bytes
 * from there it covers (at most what one cache covers; a cache is made
 * for at least @len bytes); NULL when the device may not access it
 * directly: not RAM (MMIO, nothing, bus mastering off), or ROM for a
 * write. Then the caller goes through DMA, which decides.
 */
static uint8_t *qgpu_addr_ram(QGPUState *s, QGPUAddrCtx *c, dma_addr_t gpa,
                              uint64_t len, bool is_write,
                              QGPURamCache **rc, uint64_t *avail)
{
    QGPURamCache *r = NULL;
    int64_t l;
    unsigned i;

    for (i = 0; i < QGPU_RAM_CACHES; i++) {
        QGPURamCache *x = &c->ram[i];

        if (x->used && x->is_write == is_write && gpa >= x->base &&
            gpa - x->base < x->len) {
            r = x;
            break;
        }
    }
    if (!r) {
        /* replace the least recently used */
        r = &c->ram[0];
        for (i = 1; i < QGPU_RAM_CACHES; i++) {
            if (!c->ram[i].used ||
                (r->used && c->ram[i].tick < r->tick)) {
                r = &c->ram[i];
            }
        }
        if (r->used && c->hold) {
            return NULL;
        }
        if (r->used) {
            address_space_cache_destroy(&r->mrc);
        }
        r->used = true;
        r->is_write = is_write;
        r->base = gpa;
        l = qgpu_addr_ram_init(s, r, gpa, len);
        if (l > 0 && r->mrc.mrs.offset_within_address_space < gpa) {
            /* from the start of its RAM: it serves pages before gpa too */
            dma_addr_t start = r->mrc.mrs.offset_within_address_space;

            address_space_cache_destroy(&r->mrc);
            l = qgpu_addr_ram_init(s, r, start, gpa - start + len);
            if (l > gpa - start) {
                r->base = start;
            } else {
                address_space_cache_destroy(&r->mrc);
                l = qgpu_addr_ram_init(s, r, gpa, len);
            }
        }
        r->len = l > 0 ? l : 0;
        if (!r->len) {
            return NULL;
        }
    }
    r->tick = ++c->tick;
    *rc = r;
    *avail = r->len - (gpa - r->base);
    return (uint8_t *)r->mrc.ptr + (gpa - r->base);
}

/* @len bytes were written through @seg's host pointer */
void qgpu_addr_written(QGPUSeg *seg, uint64_t len)
{
    if (seg->ram && len) {
        /* dirty tracking, and translated code in those pages (TCG) */
        address_space_cache_invalidate(&seg->ram->mrc,
                                       seg->host - (uint8_t *)seg->ram->mrc.ptr,
                                       len);
    }
}

/* GART table entry @page, read through @c when it is in RAM */
static int qgpu_addr_gart_entry(QGPUState *s, QGPUAddrCtx *c, uint64_t page,
                                uint64_t *entry)
{
    dma_addr_t a = s->gart_base + page * 8;
    QGPURamCache *rc;
    uint64_t avail;
    uint8_t *p = c ? qgpu_addr_ram(s, c, a, 8, false, &rc, &avail) : NULL;

    if (p && avail >= 8) {
        memcpy(entry, p, 8);
    } else {
        if (c) {
            qgpu_addr_ctx_reset(c);
        }
        if (qgpu_dma(s, a, entry, 8, false) != MEMTX_OK) {
            return QGPU_FAULT_DMA_ERROR;
        }
    }
    *entry = le64_to_cpu(*entry);
    return QGPU_FAULT_NONE;
}

/* GART pages translated at most at once (each entry still read) */
#define QGPU_GART_RUN           256

/*
 * Translate the start of [addr, addr + len) into one contiguous piece: a
 * host pointer (VRAM; with a context @c, also guest RAM) or a guest-
 * physical address for DMA. With @c, GART pages whose entries map
 * contiguous guest pages are one piece (their entries are all read, as on
 * every access). len > 0.
 */
int qgpu_addr_translate(QGPUState *s, QGPUAddrCtx *c, uint64_t addr,
                        uint64_t len, bool is_write, QGPUSeg *seg)
{
    int fault = qgpu_addr_check(s, addr, len);
    QGPURamCache *rc;
    uint64_t avail;
    uint8_t *p;

    if (fault) {
        return fault;
    }
    if (qgpu_cmd_abandoned(s)) {
        return QGPU_FAULT_DMA_ERROR;    /* never recorded: see the engine */
    }
    seg->host = NULL;
    seg->gpa = 0;
    seg->ram = NULL;
    if (addr < s->vram_size) {
        seg->host = s->vram + addr;
        seg->len = len;
        return QGPU_FAULT_NONE;
    }
    if (!(addr & QGPU_SYS_BIT)) {
        uint64_t off = addr - QGPU_GART_BASE;
        uint64_t page = off >> QGPU_PAGE_SHIFT;
        uint64_t in_page = off & (QGPU_PAGE_SIZE - 1);
        uint64_t entry, next;
        unsigned i;

        if (!(s->gart_ctrl & QGPU_GART_CTRL_ENABLE)) {
            return QGPU_FAULT_GART_UNMAPPED;
        }
        fault = qgpu_addr_gart_entry(s, c, page, &entry);
        if (fault) {
            return fault;
        }
        if (!(entry & QGPU_GART_ENTRY_VALID)) {
            return QGPU_FAULT_GART_UNMAPPED;
        }
        seg->gpa = (entry & QGPU_GART_ENTRY_ADDR_MASK) + in_page;
        seg->len = MIN(len, QGPU_PAGE_SIZE - in_page);
        /* the range lies in the GART (checked): page + i does too */
        for (i = 1; c && seg->len < len && i < QGPU_GART_RUN; i++) {
            if (qgpu_addr_gart_entry(s, c, page + i, &next) ||
                !(next & QGPU_GART_ENTRY_VALID) ||
                (next & QGPU_GART_ENTRY_ADDR_MASK) !=
                (entry & QGPU_GART_ENTRY_ADDR_MASK) + i * QGPU_PAGE_SIZE) {
                break;
            }
            seg->len = MIN(len, seg->len + QGPU_PAGE_SIZE);
        }
    } else {
        seg->gpa = addr & ~QGPU_SYS_BIT;
        seg->len = len;
    }
    p = c ? qgpu_addr_ram(s, c, seg->gpa, seg->len, is_write, &rc, &avail)
          : NULL;
    if (p) {
        seg->host = p;
        seg->ram = rc;
        seg->len = MIN(seg->len, avail);
    } else if (!(addr & QGPU_SYS_BIT)) {
        /* DMA through the GART goes page by page, as it always did */
        seg->len = MIN(seg->len,
                       QGPU_PAGE_SIZE - (addr & (QGPU_PAGE_SIZE - 1)));
    }
    return QGPU_FAULT_NONE;
}

/*
 * Read or write [addr, addr + len) at a GPU address, piece by piece; *done
 * is how many bytes were moved before a fault (of the piece at
 * *fault_addr). The whole range is checked before anything moves.
 */
static int qgpu_addr_rw(QGPUState *s, QGPUAddrCtx *c, uint64_t addr,
                        void *buf, uint64_t len, bool is_write,
                        uint64_t *done, uint64_t *fault_addr)
{
    uint8_t *p = buf;
    int fault = qgpu_addr_check(s, addr, len);

    *done = 0;
    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    while (len) {
        QGPUSeg seg;
        MemTxResult r;

        fault = qgpu_addr_translate(s, c, addr, len, is_write, &seg);
        if (fault) {
            *fault_addr = addr;
            return fault;
        }
        if (seg.host) {
            if (is_write) {
                memmove(seg.host, p, seg.len);
                qgpu_addr_written(&seg, seg.len);
            } else {
                memmove(p, seg.host, seg.len);
            }
        } else {
            if (c) {
                qgpu_addr_ctx_reset(c);
            }
            r = qgpu_dma(s, seg.gpa, p, seg.len, is_write);
            if (r != MEMTX_OK) {
                *fault_addr = addr;
                return QGPU_FAULT_DMA_ERROR;
            }
        }
        p += seg.len;
        addr += seg.len;
        len -= seg.len;
        *done += seg.len;
    }
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
    uint64_t done;

    return qgpu_addr_rw(s, NULL, addr, buf, len, is_write, &done,
                        fault_addr);
}

/* Read through @c: as qgpu_addr_access(), *done the bytes read */
int qgpu_addr_read(QGPUState *s, QGPUAddrCtx *c, uint64_t addr, void *buf,
                   uint64_t len, uint64_t *done, uint64_t *fault_addr)
{
    return qgpu_addr_rw(s, c, addr, buf, len, false, done, fault_addr);
}

/* Byte i of a fill gets byte (phase + i) % 4 of the little-endian pattern */
#define QGPU_PATTERN_BLOCK      256

static void qgpu_addr_pattern(uint8_t *p, uint64_t len, uint32_t pattern,
                              uint64_t phase)
{
    uint8_t b[4];
    uint64_t i, n;

    for (i = 0; i < 4; i++) {
        b[i] = pattern >> (8 * ((phase + i) & 3));
    }
    if (b[0] == b[1] && b[0] == b[2] && b[0] == b[3]) {
        memset(p, b[0], len);
        return;
    }
    n = MIN(len, QGPU_PATTERN_BLOCK);
    for (i = 0; i < n; i++) {
        p[i] = b[i & 3];
    }
    /* the rest from the first block: offsets stay multiples of 4 */
    for (; i < len; i += n) {
        n = MIN(len - i, QGPU_PATTERN_BLOCK);
        memcpy(p + i, p, n);
    }
}

/*
 * Fill the host piece @seg with a 32-bit pattern starting at @phase; needs
 * no device state but VRAM's mapping and memfd (fixed from realize to
 * unrealize), so the device thread may run it without the BQL. Zero over
 * VRAM writes only the pages that hold host memory (qgpu-vram.c).
 */
void qgpu_addr_fill_host(QGPUState *s, QGPUSeg *seg, uint32_t pattern,
                         uint64_t phase)
{
    if (pattern || !qgpu_vram_zero(s, seg->host, seg->len)) {
        qgpu_addr_pattern(seg->host, seg->len, pattern, phase);
    }
    qgpu_addr_written(seg, seg->len);
}

/*
 * Fill [addr, addr + len) with a 32-bit pattern starting at phase: in place
 * where the piece is host memory (VRAM; guest RAM through @c), else
 * staged and written by DMA, in writes that end at page boundaries with
 * @page_dma (a page-list run: a failing page faults at its own address).
 */
int qgpu_addr_fill(QGPUState *s, QGPUAddrCtx *c, uint64_t addr,
                   uint64_t len, uint32_t pattern, uint64_t phase,
                   bool page_dma, uint64_t *fault_addr)
{
    g_autofree uint8_t *bounce = NULL;
    int fault = qgpu_addr_check(s, addr, len);

    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    while (len) {
        QGPUSeg seg;

        fault = qgpu_addr_translate(s, c, addr, len, true, &seg);
        if (fault) {
            *fault_addr = addr;
            return fault;
        }
        if (seg.host) {
            qgpu_addr_fill_host(s, &seg, pattern, phase);
        } else {
            uint64_t done = 0;

            if (c) {
                qgpu_addr_ctx_reset(c);
            }
            if (!bounce) {
                bounce = g_malloc(QGPU_BOUNCE_SIZE);
            }
            while (done < seg.len) {
                uint64_t n = MIN(seg.len - done, QGPU_BOUNCE_SIZE);

                if (page_dma) {
                    n = MIN(n, QGPU_PAGE_SIZE -
                               ((addr + done) & (QGPU_PAGE_SIZE - 1)));
                }

                qgpu_addr_pattern(bounce, n, pattern, phase + done);
                if (qgpu_dma(s, seg.gpa + done, bounce, n, true) !=
                    MEMTX_OK) {
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
