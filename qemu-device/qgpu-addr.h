/*
 * qgpu: the GPU address space -- VRAM, GART, system memory; translation
 * and the one access helper every engine command uses
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_ADDR_H
#define HW_QGPU_ADDR_H

#include "qgpu-state.h"

/* Bytes staged at a time when neither side of a move is host memory */
#define QGPU_BOUNCE_SIZE        (64 * KiB)

/* Guest RAM caches a context holds (QGPUAddrCtx) */
#define QGPU_RAM_CACHES         4

/*
 * Guest RAM the device reaches through a host pointer: QEMU's
 * MemoryRegionCache over the RAM from @base (a guest-physical address),
 * as far as it is contiguous in the host; for reading or for writing.
 */
typedef struct QGPURamCache {
    MemoryRegionCache mrc;
    bool used;                  /* mrc is initialised (destroy it) */
    bool is_write;
    dma_addr_t base;
    uint64_t len;               /* bytes from base; 0: not RAM */
    uint64_t tick;              /* last use, for replacement */
} QGPURamCache;

/*
 * What the executors keep while they run one engine's job for one round:
 * host pointers to the guest RAM they touch, so that a contiguous run is
 * one memmove and a page is not a DMA call. A context lives for one round
 * only (the memory map may change between rounds), and the device thread
 * drops its caches whenever it took the BQL again (the map may have
 * changed meanwhile); any access that is not to RAM drops its caches (DMA
 * to MMIO may change the memory map). While @hold is set, host pointers
 * already handed out stay valid: RAM that no cache covers and that would
 * need a used one is given out for DMA instead (the caller moves what it
 * holds, clears @hold and translates again).
 */
typedef struct QGPUAddrCtx {
    QGPURamCache ram[QGPU_RAM_CACHES];
    uint64_t tick;
    uint64_t resets;            /* times every cache was dropped */
    bool hold;                  /* pointers are in use: replace no cache */
} QGPUAddrCtx;

/* One contiguous piece of a GPU address range */
typedef struct QGPUSeg {
    uint8_t *host;              /* non-NULL: VRAM, or guest RAM (@ram) */
    dma_addr_t gpa;             /* otherwise: guest physical address, DMA */
    uint64_t len;               /* contiguous bytes */
    QGPURamCache *ram;          /* guest RAM: what a write must mark dirty */
} QGPUSeg;

bool qgpu_cmd_abandoned(QGPUState *s);
MemTxResult qgpu_dma(QGPUState *s, dma_addr_t addr, void *buf,
                     dma_addr_t len, bool is_write);
uint32_t qgpu_addr_reg_read(QGPUState *s, hwaddr addr);
void qgpu_addr_reg_write(QGPUState *s, hwaddr addr, uint32_t val);
void qgpu_addr_reset(QGPUState *s);
int qgpu_addr_check(QGPUState *s, uint64_t addr, uint64_t len);
bool qgpu_addr_in_vram_or_gart(QGPUState *s, uint64_t addr, uint64_t len);
void qgpu_addr_ctx_init(QGPUAddrCtx *c);
void qgpu_addr_ctx_reset(QGPUAddrCtx *c);
int qgpu_addr_translate(QGPUState *s, QGPUAddrCtx *c, uint64_t addr,
                        uint64_t len, bool is_write, QGPUSeg *seg);
void qgpu_addr_written(QGPUSeg *seg, uint64_t len);
int qgpu_addr_access(QGPUState *s, uint64_t addr, void *buf, uint64_t len,
                     bool is_write, uint64_t *fault_addr);
int qgpu_addr_read(QGPUState *s, QGPUAddrCtx *c, uint64_t addr, void *buf,
                   uint64_t len, uint64_t *done, uint64_t *fault_addr);
void qgpu_addr_fill_host(QGPUState *s, QGPUSeg *seg, uint32_t pattern,
                         uint64_t phase);
int qgpu_addr_fill(QGPUState *s, QGPUAddrCtx *c, uint64_t addr,
                   uint64_t len, uint32_t pattern, uint64_t phase,
                   bool page_dma, uint64_t *fault_addr);

#endif /* HW_QGPU_ADDR_H */
