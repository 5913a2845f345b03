/*
 * qgpu: paging engine commands (engine 0), modelled on
 * DxgkDdiBuildPagingBuffer: TRANSFER, FILL, DISCARD, MAP_APERTURE,
 * UNMAP_APERTURE. TRANSFER and FILL also implement the DMA-buffer COPY and
 * FILL of the render engine.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#ifdef CONFIG_LINUX
#include <linux/falloc.h>
#endif
#include "qgpu.h"

#define QGPU_GART_BATCH     512     /* GART entries per DMA */

static inline uint64_t qgpu_dw64(const uint32_t *dw, unsigned i)
{
    return deposit64(dw[i], 32, 32, dw[i + 1]);
}

/*
 * GPU address of byte "done" of one side of a TRANSFER/FILL, and how many
 * bytes are contiguous from there. With a page list, "base" is the address
 * of an array of 64-bit GPU addresses of 4 KiB pages.
 */
static int qgpu_side(QGPUState *s, uint64_t base, bool pagelist,
                     uint64_t done, uint64_t *addr, uint64_t *max,
                     uint64_t *fault_addr)
{
    uint64_t idx, off, entry;
    int fault;

    if (!pagelist) {
        *addr = base + done;
        *max = UINT64_MAX;
        return QGPU_FAULT_NONE;
    }
    idx = done >> QGPU_PAGE_SHIFT;
    off = done & (QGPU_PAGE_SIZE - 1);
    fault = qgpu_gpu_access(s, base + idx * 8, &entry, 8, false, fault_addr);
    if (fault) {
        return fault;
    }
    entry = le64_to_cpu(entry);
    if (entry & (QGPU_PAGE_SIZE - 1)) {
        *fault_addr = entry;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_check_range(s, entry, QGPU_PAGE_SIZE);
    if (fault) {
        *fault_addr = entry;
        return fault;
    }
    *addr = entry + off;
    *max = QGPU_PAGE_SIZE - off;
    return QGPU_FAULT_NONE;
}

int qgpu_copy_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                  int64_t *budget, uint64_t *fault_addr)
{
    g_autofree uint8_t *bounce = NULL;
    PCIDevice *pdev = PCI_DEVICE(s);

    while (job->done < job->size && *budget > 0) {
        uint64_t want = MIN(job->size - job->done, (uint64_t)*budget);
        uint64_t a, d, amax, dmax, n;
        QGPUSeg ss, ds;
        int fault;

        fault = qgpu_side(s, job->src, job->flags & QGPU_XFER_SRC_PAGELIST,
                          job->done, &a, &amax, fault_addr);
        if (fault) {
            return fault;
        }
        fault = qgpu_side(s, job->dst, job->flags & QGPU_XFER_DST_PAGELIST,
                          job->done, &d, &dmax, fault_addr);
        if (fault) {
            return fault;
        }
        want = MIN(want, MIN(amax, dmax));
        fault = qgpu_translate(s, a, want, &ss);
        if (fault) {
            *fault_addr = a;
            return fault;
        }
        fault = qgpu_translate(s, d, ss.len, &ds);
        if (fault) {
            *fault_addr = d;
            return fault;
        }
        n = ds.len;
        if (ss.host && ds.host) {
            memmove(ds.host, ss.host, n);
        } else if (ss.host) {
            if (pci_dma_write(pdev, ds.gpa, ss.host, n) != MEMTX_OK) {
                *fault_addr = d;
                return QGPU_FAULT_DMA_ERROR;
            }
        } else if (ds.host) {
            if (pci_dma_read(pdev, ss.gpa, ds.host, n) != MEMTX_OK) {
                *fault_addr = a;
                return QGPU_FAULT_DMA_ERROR;
            }
        } else {
            n = MIN(n, QGPU_BOUNCE_SIZE);
            if (!bounce) {
                bounce = g_malloc(QGPU_BOUNCE_SIZE);
            }
            if (pci_dma_read(pdev, ss.gpa, bounce, n) != MEMTX_OK) {
                *fault_addr = a;
                return QGPU_FAULT_DMA_ERROR;
            }
            if (pci_dma_write(pdev, ds.gpa, bounce, n) != MEMTX_OK) {
                *fault_addr = d;
                return QGPU_FAULT_DMA_ERROR;
            }
        }
        job->done += n;
        *budget -= n;
        qgpu_account(s, e, n);
    }
    return QGPU_FAULT_NONE;
}

int qgpu_fill_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                  int64_t *budget, uint64_t *fault_addr)
{
    while (job->done < job->size && *budget > 0) {
        uint64_t want = MIN(job->size - job->done, (uint64_t)*budget);
        uint64_t d, dmax;
        int fault;

        fault = qgpu_side(s, job->dst, job->flags & QGPU_XFER_DST_PAGELIST,
                          job->done, &d, &dmax, fault_addr);
        if (fault) {
            return fault;
        }
        want = MIN(want, dmax);
        fault = qgpu_gpu_fill(s, d, want, job->pattern, job->done,
                              fault_addr);
        if (fault) {
            return fault;
        }
        job->done += want;
        *budget -= want;
        qgpu_account(s, e, want);
    }
    return QGPU_FAULT_NONE;
}

/* MAP_APERTURE / UNMAP_APERTURE: write GART entries in guest memory. */
int qgpu_gart_job_run(QGPUState *s, QGPUJob *job, int64_t *budget,
                      uint64_t *fault_addr)
{
    uint64_t ents[QGPU_GART_BATCH];

    while (job->done < job->size && *budget > 0) {
        uint64_t n = MIN(job->size - job->done, QGPU_GART_BATCH);
        uint64_t page = job->dst + job->done;
        uint64_t i;
        int fault;

        if (job->kind == QGPU_JOB_GART_MAP) {
            fault = qgpu_gpu_access(s, job->src + job->done * 8, ents, n * 8,
                                    false, fault_addr);
            if (fault) {
                return fault;
            }
            for (i = 0; i < n; i++) {
                uint64_t v = le64_to_cpu(ents[i]);

                if (v & ~QGPU_GART_ENTRY_ADDR_MASK) {
                    *fault_addr = v;
                    return QGPU_FAULT_BAD_ALIGN;
                }
                ents[i] = cpu_to_le64(v | QGPU_GART_ENTRY_VALID);
            }
        } else {
            memset(ents, 0, n * 8);
        }
        if (pci_dma_write(PCI_DEVICE(s), s->gart_base + page * 8, ents,
                          n * 8) != MEMTX_OK) {
            *fault_addr = QGPU_GART_BASE + (page << QGPU_PAGE_SHIFT);
            return QGPU_FAULT_DMA_ERROR;
        }
        job->done += n;
        *budget -= n * 16;
    }
    return QGPU_FAULT_NONE;
}

static int qgpu_discard(QGPUState *s, uint64_t addr, uint64_t size,
                        uint64_t *fault_addr)
{
    uint64_t start, end;
    int fault = qgpu_check_range(s, addr, size);

    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    if (!size || addr >= s->vram_size) {
        return QGPU_FAULT_NONE;
    }
    /* whole pages only; within VRAM, so no overflow */
    start = ROUND_UP(addr, QGPU_PAGE_SIZE);
    end = ROUND_DOWN(addr + size, QGPU_PAGE_SIZE);
    if (end > start) {
#ifdef CONFIG_FALLOCATE_PUNCH_HOLE
        if (fallocate(s->vram_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      start, end - start) == 0) {
            return QGPU_FAULT_NONE;
        }
#endif
        memset(s->vram + start, 0, end - start);
    }
    return QGPU_FAULT_NONE;
}

/* Start a paging command. Checks every parameter before anything moves. */
int qgpu_paging_cmd(QGPUState *s, QGPUEngine *e, uint32_t op, uint32_t flags,
                    const uint32_t *dw, uint64_t *fault_addr)
{
    QGPUJob *job = &e->job;
    uint64_t gart_pages = s->gart_size >> QGPU_PAGE_SHIFT;
    uint64_t size, first, count;
    int fault;

    memset(job, 0, sizeof(*job));
    switch (op) {
    case QGPU_CMD_TRANSFER:
        size = qgpu_dw64(dw, 1);
        job->src = qgpu_dw64(dw, 3);
        job->dst = qgpu_dw64(dw, 5);
        job->flags = flags & (QGPU_XFER_SRC_PAGELIST | QGPU_XFER_DST_PAGELIST);
        if (job->flags && (size & (QGPU_PAGE_SIZE - 1))) {
            *fault_addr = size;
            return QGPU_FAULT_BAD_ALIGN;
        }
        fault = qgpu_check_range(s, job->src,
                                 job->flags & QGPU_XFER_SRC_PAGELIST
                                 ? (size >> QGPU_PAGE_SHIFT) * 8 : size);
        if (fault) {
            *fault_addr = job->src;
            return fault;
        }
        fault = qgpu_check_range(s, job->dst,
                                 job->flags & QGPU_XFER_DST_PAGELIST
                                 ? (size >> QGPU_PAGE_SHIFT) * 8 : size);
        if (fault) {
            *fault_addr = job->dst;
            return fault;
        }
        if (size) {
            job->kind = QGPU_JOB_COPY;
            job->size = size;
        }
        return QGPU_FAULT_NONE;

    case QGPU_CMD_FILL:
        size = qgpu_dw64(dw, 1);
        job->dst = qgpu_dw64(dw, 3);
        job->pattern = dw[5];
        job->flags = flags & QGPU_XFER_DST_PAGELIST;
        if ((size & 3) ||
            (job->flags && (size & (QGPU_PAGE_SIZE - 1)))) {
            *fault_addr = size;
            return QGPU_FAULT_BAD_ALIGN;
        }
        fault = qgpu_check_range(s, job->dst,
                                 job->flags ? (size >> QGPU_PAGE_SHIFT) * 8
                                            : size);
        if (fault) {
            *fault_addr = job->dst;
            return fault;
        }
        if (size) {
            job->kind = QGPU_JOB_FILL;
            job->size = size;
        }
        return QGPU_FAULT_NONE;

    case QGPU_CMD_DISCARD:
        return qgpu_discard(s, qgpu_dw64(dw, 3), qgpu_dw64(dw, 1),
                            fault_addr);

    case QGPU_CMD_MAP_APERTURE:
    case QGPU_CMD_UNMAP_APERTURE:
        first = dw[1];
        count = dw[2];
        if (first > gart_pages || count > gart_pages - first) {
            *fault_addr = QGPU_GART_BASE + (first << QGPU_PAGE_SHIFT);
            return QGPU_FAULT_BAD_ADDRESS;
        }
        if (op == QGPU_CMD_MAP_APERTURE) {
            job->src = qgpu_dw64(dw, 3);
            fault = qgpu_check_range(s, job->src, count * 8);
            if (fault) {
                *fault_addr = job->src;
                return fault;
            }
        }
        if (count) {
            job->kind = op == QGPU_CMD_MAP_APERTURE ? QGPU_JOB_GART_MAP
                                                    : QGPU_JOB_GART_UNMAP;
            job->dst = first;
            job->size = count;
        }
        return QGPU_FAULT_NONE;

    default:
        *fault_addr = op;
        return QGPU_FAULT_BAD_OPCODE;
    }
}
