/*
 * qgpu: executors -- what the paging and render commands do, shared by
 * both decoders.
 *
 * A command that moves data leaves a job (QGPUJob) on its engine: TRANSFER
 * and DMA COPY a copy, FILL and DMA FILL a fill, MAP/UNMAP_APERTURE a GART
 * table write, DMA ADD/XOR/CHECKSUM an ALU pass, UPDATE_PT a page-table
 * write, DMA TILE/VTILE a tiling pass (1.3) that runs tile by tile. Each
 * side of a job has an address space (QGPUSpace): physical GPU addresses,
 * or VAs through the GPU MMU (qgpu-mmu.c) for the 1.2 virtual commands,
 * translated page by page. The engine runs the job
 * in chunks bounded by its work budget, so a large command never holds up
 * the vCPU; progress is kept in the job. Every byte moved is counted in
 * the engine's BYTES and in CYCLES. The bulk of copies and fills between
 * host pointers runs without the BQL (qgpu-thread.c); progress is recorded
 * only once the BQL is held again and the engine was not reset meanwhile.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/rcu.h"
#include "qgpu-state.h"
#include "qgpu-irq.h"
#include "qgpu-addr.h"
#include "qgpu-vram.h"
#include "qgpu-copy.h"
#include "qgpu-mmu.h"
#include "qgpu-thread.h"
#include "qgpu-exec.h"
#include "trace.h"

#define QGPU_GART_BATCH     512     /* GART entries per DMA */

static void qgpu_exec_account(QGPUState *s, QGPUEngine *e, uint64_t bytes)
{
    if (qgpu_cmd_abandoned(s)) {
        return;
    }
    e->bytes += bytes;
    s->work_bytes += bytes;
}

/* Starting jobs */

static QGPUJob *qgpu_exec_job(QGPUState *s, unsigned n)
{
    QGPUJob *job = &s->eng[n].job;

    memset(job, 0, sizeof(*job));
    if (trace_event_get_state_backends(TRACE_QGPU_JOB_DONE)) {
        job->start_ns = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    }
    return job;
}

static QGPUJob *qgpu_exec_job_in(QGPUState *s, unsigned n, QGPUSpace as)
{
    QGPUJob *job = qgpu_exec_job(s, n);

    job->src_as = as;
    job->dst_as = as;
    return job;
}

/* Both sides in @as; page lists (@flags) only in the physical space */
void qgpu_exec_start_copy(QGPUState *s, unsigned n, QGPUSpace as,
                          uint64_t src, uint64_t dst, uint64_t size,
                          uint32_t flags)
{
    QGPUJob *job = qgpu_exec_job_in(s, n, as);

    if (as.virt) {
        trace_qgpu_vtransfer(n, size, src, dst, as.root);
    } else {
        trace_qgpu_transfer(n, size, src, dst, flags);
    }
    if (size) {
        job->kind = QGPU_JOB_COPY;
        job->flags = flags;
        job->src = src;
        job->dst = dst;
        job->size = size;
    }
}

void qgpu_exec_start_fill(QGPUState *s, unsigned n, QGPUSpace as,
                          uint64_t dst, uint64_t size, uint32_t pattern,
                          uint32_t flags)
{
    QGPUJob *job = qgpu_exec_job_in(s, n, as);

    if (as.virt) {
        trace_qgpu_vfill(n, size, dst, pattern, as.root);
    } else {
        trace_qgpu_fill(n, size, dst, pattern, flags);
    }
    if (size) {
        job->kind = QGPU_JOB_FILL;
        job->flags = flags;
        job->dst = dst;
        job->size = size;
        job->pattern = pattern;
    }
}

/* GART entries [first, first + count): from the page list at @list, or 0 */
void qgpu_exec_start_gart(QGPUState *s, unsigned n, bool map,
                          uint64_t first, uint64_t count, uint64_t list)
{
    QGPUJob *job = qgpu_exec_job(s, n);

    if (map) {
        trace_qgpu_gart_map(first, count, list);
    } else {
        trace_qgpu_gart_unmap(first, count);
    }
    if (count) {
        job->kind = map ? QGPU_JOB_GART_MAP : QGPU_JOB_GART_UNMAP;
        job->src = map ? list : 0;
        job->dst = first;
        job->size = count;
    }
}

/*
 * UPDATE_PT: @count 64-bit entries to @dst of @dst_as, from the physical
 * list at @list, or (QGPU_PT_INLINE in @flags) from the command itself
 */
void qgpu_exec_start_update_pt(QGPUState *s, unsigned n, QGPUSpace dst_as,
                               uint64_t dst, uint64_t count, uint64_t list,
                               uint32_t flags)
{
    QGPUJob *job = qgpu_exec_job(s, n);

    trace_qgpu_update_pt(count, dst, list, flags);
    if (count) {
        job->kind = QGPU_JOB_UPDATE_PT;
        job->flags = flags;
        job->src = list;
        job->src_as = qgpu_space_phys();
        job->dst = dst;
        job->dst_as = dst_as;
        job->size = count;
    }
}

/* ADD or XOR of @size bytes: dst = a op b, 32-bit words, all in @as */
void qgpu_exec_start_alu(QGPUState *s, unsigned n, QGPUSpace as,
                         QGPUJobKind kind, uint64_t dst, uint64_t a,
                         uint64_t b, uint64_t size)
{
    QGPUJob *job = qgpu_exec_job_in(s, n, as);

    trace_qgpu_alu(n, kind == QGPU_JOB_ADD ? "add" : "xor", size, a, b, dst);
    if (size) {
        job->kind = kind;
        job->dst = dst;
        job->src = a;
        job->src2 = b;
        job->size = size;
    }
}

/* CHECKSUM of @size bytes at @src into the 32-bit word at @dst, in @as */
int qgpu_exec_start_csum(QGPUState *s, unsigned n, QGPUSpace as,
                         uint64_t src, uint64_t dst, uint64_t size,
                         uint64_t *fault_addr)
{
    QGPUJob *job = qgpu_exec_job_in(s, n, as);

    trace_qgpu_alu(n, "checksum", size, src, 0, dst);
    if (size == 0) {
        uint32_t h = cpu_to_le32(QGPU_CSUM_INIT);

        return qgpu_mmu_access(s, n, as, dst, &h, 4, true, fault_addr);
    }
    job->kind = QGPU_JOB_CSUM;
    job->src = src;
    job->dst = dst;
    job->size = size;
    job->csum = QGPU_CSUM_INIT;
    return QGPU_FAULT_NONE;
}

/*
 * TILE or VTILE of a @width x @height surface, both sides in @as: @src
 * linear (pitch @pitch) and @dst tiled, or with @untile the reverse. The
 * caller checked the geometry (qgpu_tile_check()) and both ranges.
 */
void qgpu_exec_start_tile(QGPUState *s, unsigned n, QGPUSpace as,
                          bool untile, uint64_t src, uint64_t dst,
                          uint32_t width, uint32_t height, uint32_t pitch)
{
    QGPUJob *job = qgpu_exec_job_in(s, n, as);

    trace_qgpu_tile(n, untile, width, height, pitch, src, dst,
                    as.virt ? as.root : 0);
    if (width && height) {
        job->kind = QGPU_JOB_TILE;
        job->flags = untile ? QGPU_TILE_UNTILE : 0;
        job->src = src;
        job->dst = dst;
        job->width = width;
        job->height = height;
        job->pitch = pitch;
        job->size = qgpu_tiled_size(width, height) / QGPU_TILE_BYTES;
    }
}

/* Running jobs */

/*
 * Page-list entries of one side of a copy or fill, read ahead: up to
 * QGPU_LIST_BATCH at a time, as many as read without a fault, for one
 * round (each entry is still checked when the copy reaches it).
 */
#define QGPU_LIST_BATCH     512

typedef struct QGPUList {
    uint64_t first;             /* index of ent[0] */
    uint64_t count;             /* entries held */
    uint64_t ent[QGPU_LIST_BATCH];      /* little-endian, as read */
} QGPUList;

/* Entry @idx of the list at @base of @pages entries, into @l */
static int qgpu_exec_list_fetch(QGPUState *s, QGPUAddrCtx *c, QGPUList *l,
                                uint64_t base, uint64_t pages, uint64_t idx,
                                uint64_t *fault_addr)
{
    uint64_t n = MIN(pages - idx, QGPU_LIST_BATCH), got;
    int fault;

    if (idx >= l->first && idx - l->first < l->count) {
        return QGPU_FAULT_NONE;
    }
    fault = qgpu_addr_read(s, c, base + idx * 8, l->ent, n * 8, &got,
                           fault_addr);
    if (got < 8 && n > 1) {
        /* the batch failed in its first piece: this entry on its own */
        fault = qgpu_addr_read(s, c, base + idx * 8, l->ent, 8, &got,
                               fault_addr);
    }
    if (got < 8) {
        l->count = 0;
        return fault;
    }
    l->first = idx;
    l->count = got / 8;
    return QGPU_FAULT_NONE;
}

/*
 * GPU address of byte "done" of one side of a copy or fill, and how many
 * bytes are contiguous from there. With a page list, "base" is the address
 * of an array of 64-bit GPU addresses of 4 KiB pages; entries that follow
 * the reached one with the next pages of the same region make one run. In
 * a virtual space the address is translated, to the end of its page.
 */
static int qgpu_exec_side(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                          QGPUList *l, QGPUSpace as, uint64_t base,
                          uint64_t size, bool is_write, uint64_t done,
                          uint64_t *addr, uint64_t *max, uint64_t *fault_addr)
{
    uint64_t idx, off, entry, k;
    int fault;

    if (as.virt) {
        return qgpu_mmu_translate(s, n, as, base + done, UINT64_MAX, is_write,
                                  addr, max, fault_addr);
    }
    if (!l) {
        *addr = base + done;
        *max = UINT64_MAX;
        return QGPU_FAULT_NONE;
    }
    idx = done >> QGPU_PAGE_SHIFT;
    off = done & (QGPU_PAGE_SIZE - 1);
    fault = qgpu_exec_list_fetch(s, c, l, base, size >> QGPU_PAGE_SHIFT, idx,
                                 fault_addr);
    if (fault) {
        return fault;
    }
    entry = le64_to_cpu(l->ent[idx - l->first]);
    if (entry & (QGPU_PAGE_SIZE - 1)) {
        *fault_addr = entry;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_addr_check(s, entry, QGPU_PAGE_SIZE);
    if (fault) {
        *fault_addr = entry;
        return fault;
    }
    for (k = 1; idx + k - l->first < l->count; k++) {
        if (le64_to_cpu(l->ent[idx + k - l->first]) !=
            entry + k * QGPU_PAGE_SIZE) {
            break;
        }
    }
    /* a run that would leave the region ends at its first page */
    if (k > 1 && qgpu_addr_check(s, entry, k * QGPU_PAGE_SIZE)) {
        k = 1;
    }
    *addr = entry + off;
    *max = k * QGPU_PAGE_SIZE - off;
    return QGPU_FAULT_NONE;
}

/*
 * Move one translated piece; returns the bytes moved, or 0 on a DMA error
 * with *dst_failed telling which side failed. Host memory on both sides
 * (VRAM, guest RAM) is one memmove; DMA is only for what is not RAM.
 */
static uint64_t qgpu_exec_move(QGPUState *s, QGPUAddrCtx *c, QGPUSeg *ss,
                               QGPUSeg *ds, uint8_t **bounce,
                               bool *dst_failed)
{
    uint64_t n = ds->len;
    MemTxResult r;

    *dst_failed = false;
    if (ss->host && ds->host) {
        memmove(ds->host, ss->host, n);
        qgpu_addr_written(ds, n);
        return n;
    }
    if (ss->host) {
        *dst_failed = true;
        r = qgpu_dma(s, ds->gpa, ss->host, n, true);
    } else {
        /* staged: a read that fails leaves the destination as it was */
        n = MIN(n, QGPU_BOUNCE_SIZE);
        if (!*bounce) {
            *bounce = g_malloc(QGPU_BOUNCE_SIZE);
        }
        r = qgpu_dma(s, ss->gpa, *bounce, n, false);
        if (r == MEMTX_OK && ds->host) {
            memcpy(ds->host, *bounce, n);
            qgpu_addr_written(ds, n);
        } else if (r == MEMTX_OK) {
            *dst_failed = true;
            r = qgpu_dma(s, ds->gpa, *bounce, n, true);
        }
    }
    /* DMA that was not to RAM may have changed the memory map */
    qgpu_addr_ctx_reset(c);
    return r == MEMTX_OK ? n : 0;
}

/*
 * Translate the piece at byte @done of a copy: @a and @d are the physical
 * GPU addresses of the two sides; a fault reports the address in the
 * side's own space. The piece is ds->len bytes.
 */
static int qgpu_exec_copy_xlate(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                                QGPUJob *job, uint64_t done, uint64_t a,
                                uint64_t d, uint64_t want, bool src_list,
                                bool dst_list, QGPUSeg *ss, QGPUSeg *ds,
                                uint64_t *fault_addr)
{
    uint64_t va = job->src + done, vd = job->dst + done, resets;
    int fault;

    fault = qgpu_addr_translate(s, c, a, want, false, ss);
    if (fault) {
        return qgpu_mmu_data_fault(s, n, job->src_as,
                                   job->src_as.virt ? va : a, false, fault,
                                   fault_addr);
    }
    /* DMA of a page-list run goes page by page: a page faults on its own */
    if (!ss->host && src_list) {
        ss->len = MIN(ss->len, QGPU_PAGE_SIZE - (a & (QGPU_PAGE_SIZE - 1)));
    }
    resets = c->resets;
    fault = qgpu_addr_translate(s, c, d, ss->len, true, ds);
    if (fault) {
        return qgpu_mmu_data_fault(s, n, job->dst_as,
                                   job->dst_as.virt ? vd : d, true, fault,
                                   fault_addr);
    }
    /*
     * The destination's translation dropped every cache (a GART entry read
     * from outside RAM), the source's with them: its host pointer is no
     * longer held, so the source goes by DMA, with the BQL.
     */
    if (c->resets != resets && ss->ram) {
        ss->host = NULL;
        ss->ram = NULL;
        if (src_list) {
            ds->len = MIN(ds->len,
                          QGPU_PAGE_SIZE - (a & (QGPU_PAGE_SIZE - 1)));
        }
    }
    if (!ds->host && dst_list) {
        ds->len = MIN(ds->len, QGPU_PAGE_SIZE - (d & (QGPU_PAGE_SIZE - 1)));
    }
    return QGPU_FAULT_NONE;
}

/*
 * Move a translated piece at job->done that is not host memory on both
 * sides, with the BQL held; the bytes moved, or 0 and *fault
 */
static uint64_t qgpu_exec_copy_dma(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                                   QGPUJob *job, uint64_t a, uint64_t d,
                                   QGPUSeg *ss, QGPUSeg *ds, uint8_t **bounce,
                                   int *fault, uint64_t *fault_addr)
{
    uint64_t va = job->src + job->done, vd = job->dst + job->done, moved;
    bool dst_failed;

    moved = qgpu_exec_move(s, c, ss, ds, bounce, &dst_failed);
    if (!moved) {
        *fault = dst_failed
            ? qgpu_mmu_data_fault(s, n, job->dst_as,
                                  job->dst_as.virt ? vd : d, true,
                                  QGPU_FAULT_DMA_ERROR, fault_addr)
            : qgpu_mmu_data_fault(s, n, job->src_as,
                                  job->src_as.virt ? va : a, false,
                                  QGPU_FAULT_DMA_ERROR, fault_addr);
    }
    return moved;
}

/*
 * Pieces of a copy that are host memory on both sides, gathered with the
 * BQL held and then moved together, without the BQL when they are big
 * enough. Gathering stops before any translation that reads guest memory
 * (a page-list batch not read yet, a GART entry, a page-table walk) and
 * before any DMA, so that every translation and every DMA still comes
 * after the writes of the pieces before it, as if each piece moved at once.
 */
#define QGPU_BATCH_PIECES       256
#define QGPU_BATCH_BYTES        (1 * MiB)

typedef struct QGPUBatch {
    QGPUSeg src[QGPU_BATCH_PIECES];
    QGPUSeg dst[QGPU_BATCH_PIECES];
    unsigned n;
    uint64_t bytes;
} QGPUBatch;

/* Move the gathered pieces and record them in engine @n's job */
static int qgpu_exec_batch_flush(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                                 QGPUBatch *b)
{
    QGPUEngine *e = &s->eng[n];
    uint32_t gen = e->gen;
    bool stream = e->job.size >= QGPU_COPY_STREAM_MIN;
    bool unlocked;
    unsigned i;

    if (!b->n) {
        return QGPU_FAULT_NONE;
    }
    unlocked = b->bytes >= QGPU_THREAD_UNLOCK_MIN && qgpu_thread_unlock(s);
    WITH_RCU_READ_LOCK_GUARD() {
        for (i = 0; i < b->n; i++) {
            qgpu_copy(b->dst[i].host, b->src[i].host, b->dst[i].len, stream);
            qgpu_addr_written(&b->dst[i], b->dst[i].len);
        }
        qgpu_copy_done(stream);
    }
    c->hold = false;
    if (unlocked) {
        bool live = qgpu_thread_relock(s);

        /*
         * The memory map may have changed while the BQL was dropped (an
         * aperture remapped, a BAR moved, bus mastering turned off): what
         * follows is translated afresh, through no cache made before.
         */
        qgpu_addr_ctx_reset(c);
        if (!live || e->gen != gen) {
            b->n = 0;
            b->bytes = 0;
            return QGPU_EXEC_ABANDONED;
        }
    }
    e->job.done += b->bytes;
    e->job.pieces += b->n;
    qgpu_exec_account(s, e, b->bytes);
    b->n = 0;
    b->bytes = 0;
    return QGPU_FAULT_NONE;
}

/* Byte @done of a side can be translated without reading guest memory */
static bool qgpu_exec_list_ready(QGPUList *l, uint64_t done)
{
    uint64_t idx = done >> QGPU_PAGE_SHIFT;

    return !l || (idx >= l->first && idx - l->first < l->count);
}

static bool qgpu_exec_is_gart(QGPUState *s, uint64_t addr)
{
    return addr >= s->vram_size && !(addr & QGPU_SYS_BIT);
}

/* The read-ahead of a side's page list, if it has one (@flag) */
static QGPUList *qgpu_exec_list_new(QGPUJob *job, QGPUSpace as, uint32_t flag)
{
    QGPUList *l;

    if (as.virt || !(job->flags & flag)) {
        return NULL;
    }
    l = g_new(QGPUList, 1);
    l->first = 0;
    l->count = 0;
    return l;
}

/* Translate both sides of the piece at @done (see qgpu_exec_side) */
static int qgpu_exec_copy_sides(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                                QGPUList *sl, QGPUList *dl, uint64_t done,
                                uint64_t *a, uint64_t *d, uint64_t *max,
                                uint64_t *fault_addr)
{
    QGPUJob *job = &s->eng[n].job;
    uint64_t amax, dmax;
    int fault;

    fault = qgpu_exec_side(s, n, c, sl, job->src_as, job->src, job->size,
                           false, done, a, &amax, fault_addr);
    if (fault) {
        return fault;
    }
    fault = qgpu_exec_side(s, n, c, dl, job->dst_as, job->dst, job->size,
                           true, done, d, &dmax, fault_addr);
    *max = MIN(amax, dmax);
    return fault;
}

static int qgpu_exec_copy_run(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                              int64_t *budget, uint64_t *fault_addr)
{
    g_autofree uint8_t *bounce = NULL;
    g_autofree QGPUBatch *b = g_new(QGPUBatch, 1);
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    g_autofree QGPUList *sl = qgpu_exec_list_new(job, job->src_as,
                                                 QGPU_XFER_SRC_PAGELIST);
    g_autofree QGPUList *dl = qgpu_exec_list_new(job, job->dst_as,
                                                 QGPU_XFER_DST_PAGELIST);
    bool virt = job->src_as.virt || job->dst_as.virt;
    int fault = QGPU_FAULT_NONE, r;

    b->n = 0;
    b->bytes = 0;
    while (job->done + b->bytes < job->size && *budget > 0) {
        uint64_t done = job->done + b->bytes;
        uint64_t want = MIN(job->size - done, (uint64_t)*budget);
        uint64_t a, d, max, moved;
        QGPUSeg ss, ds;

        if (b->n && (virt || !qgpu_exec_list_ready(sl, done) ||
                     !qgpu_exec_list_ready(dl, done))) {
            goto flush;
        }
        fault = qgpu_exec_copy_sides(s, n, c, sl, dl, done, &a, &d, &max,
                                     fault_addr);
        if (fault) {
            break;
        }
        if (b->n && (qgpu_exec_is_gart(s, a) || qgpu_exec_is_gart(s, d))) {
            goto flush;
        }
        c->hold = b->n > 0;
        fault = qgpu_exec_copy_xlate(s, n, c, job, done, a, d,
                                     MIN(want, max), sl != NULL, dl != NULL,
                                     &ss, &ds, fault_addr);
        if (fault) {
            break;
        }
        if (ss.host && ds.host) {
            b->src[b->n] = ss;
            b->dst[b->n++] = ds;
            b->bytes += ds.len;
            *budget -= ds.len;
            if (b->n < QGPU_BATCH_PIECES && b->bytes < QGPU_BATCH_BYTES) {
                continue;
            }
            goto flush;
        }
        if (b->n) {
            /* after the pieces before it, translated again */
            goto flush;
        }
        moved = qgpu_exec_copy_dma(s, n, c, job, a, d, &ss, &ds, &bounce,
                                   &fault, fault_addr);
        if (!moved) {
            break;
        }
        job->done += moved;
        job->pieces++;
        *budget -= moved;
        qgpu_exec_account(s, e, moved);
        continue;
flush:
        r = qgpu_exec_batch_flush(s, n, c, b);
        if (r) {
            return r;
        }
    }
    /* what moved before a fault stays moved; an abandoned job records none */
    r = qgpu_exec_batch_flush(s, n, c, b);
    return r ? r : fault;
}

/*
 * Fill the host piece @seg with the BQL dropped (see qgpu_exec_batch_flush)
 */
static int qgpu_exec_fill_unlocked(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                                   QGPUSeg *seg, uint32_t pattern,
                                   uint64_t phase)
{
    QGPUEngine *e = &s->eng[n];
    uint32_t gen = e->gen;
    bool unlocked = qgpu_thread_unlock(s);

    WITH_RCU_READ_LOCK_GUARD() {
        qgpu_addr_fill_host(s, seg, pattern, phase);
    }
    if (unlocked) {
        bool live = qgpu_thread_relock(s);

        /* the memory map may have changed meanwhile: no cache survives */
        qgpu_addr_ctx_reset(c);
        if (!live || e->gen != gen) {
            return QGPU_EXEC_ABANDONED;
        }
    }
    return QGPU_FAULT_NONE;
}

static int qgpu_exec_fill_run(QGPUState *s, unsigned n, QGPUAddrCtx *c,
                              int64_t *budget, uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    g_autofree QGPUList *dl = qgpu_exec_list_new(job, job->dst_as,
                                                 QGPU_XFER_DST_PAGELIST);

    while (job->done < job->size && *budget > 0) {
        uint64_t want = MIN(job->size - job->done, (uint64_t)*budget);
        uint64_t d, dmax;
        QGPUSeg seg;
        int fault;

        fault = qgpu_exec_side(s, n, c, dl, job->dst_as, job->dst, job->size,
                               true, job->done, &d, &dmax, fault_addr);
        if (fault) {
            return fault;
        }
        want = MIN(want, dmax);
        if (want >= QGPU_THREAD_UNLOCK_MIN && !qgpu_exec_is_gart(s, d) &&
            !qgpu_addr_translate(s, c, d, want, true, &seg) && seg.host) {
            fault = qgpu_exec_fill_unlocked(s, n, c, &seg, job->pattern,
                                            job->done);
            if (fault) {
                return fault;
            }
            job->done += seg.len;
            job->pieces++;
            *budget -= seg.len;
            qgpu_exec_account(s, e, seg.len);
            continue;
        }
        fault = qgpu_addr_fill(s, c, d, want, job->pattern, job->done,
                               dl != NULL, fault_addr);
        if (fault) {
            if (job->dst_as.virt) {
                fault = qgpu_mmu_data_fault(s, n, job->dst_as,
                                            job->dst + job->done +
                                            (*fault_addr - d), true, fault,
                                            fault_addr);
            }
            return fault;
        }
        job->done += want;
        job->pieces++;
        *budget -= want;
        qgpu_exec_account(s, e, want);
    }
    return QGPU_FAULT_NONE;
}

/* MAP_APERTURE / UNMAP_APERTURE: write GART entries in guest memory. */
static int qgpu_exec_gart_run(QGPUState *s, QGPUEngine *e, int64_t *budget,
                              uint64_t *fault_addr)
{
    QGPUJob *job = &e->job;
    uint64_t ents[QGPU_GART_BATCH];

    while (job->done < job->size && *budget > 0) {
        uint64_t n = MIN(job->size - job->done, QGPU_GART_BATCH);
        uint64_t page = job->dst + job->done;
        uint64_t i;
        int fault;

        if (job->kind == QGPU_JOB_GART_MAP) {
            fault = qgpu_addr_access(s, job->src + job->done * 8, ents,
                                     n * 8, false, fault_addr);
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
        if (qgpu_dma(s, s->gart_base + page * 8, ents, n * 8, true) !=
            MEMTX_OK) {
            *fault_addr = QGPU_GART_BASE + (page << QGPU_PAGE_SHIFT);
            return QGPU_FAULT_DMA_ERROR;
        }
        job->done += n;
        *budget -= n * 16;
    }
    return QGPU_FAULT_NONE;
}

/*
 * The inline entries of the UPDATE_PT at the engine's RING_HEAD: @len
 * bytes from byte @off of the command, read from the ring with wraparound
 */
static int qgpu_exec_ring_read(QGPUState *s, QGPUEngine *e, uint64_t off,
                               uint8_t *buf, uint64_t len,
                               uint64_t *fault_addr)
{
    while (len) {
        uint64_t o = (e->head + off) & (e->ring_size - 1);
        uint64_t n = MIN(len, e->ring_size - o);

        if (qgpu_dma(s, e->ring_base + o, buf, n, false) != MEMTX_OK) {
            *fault_addr = e->ring_base + o;
            return QGPU_FAULT_DMA_ERROR;
        }
        buf += n;
        off += n;
        len -= n;
    }
    return QGPU_FAULT_NONE;
}

/* UPDATE_PT: copy page-table entries, up to QGPU_GART_BATCH at a time */
static int qgpu_exec_pt_run(QGPUState *s, unsigned n, int64_t *budget,
                            uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    uint64_t ents[QGPU_GART_BATCH];

    while (job->done < job->size && *budget > 0) {
        uint64_t cnt = MIN(job->size - job->done, QGPU_GART_BATCH);
        int fault;

        if (job->flags & QGPU_PT_INLINE) {
            fault = qgpu_exec_ring_read(s, e, QGPU_CMD_UPDATE_PT_LEN * 4 +
                                        job->done * 8, (uint8_t *)ents,
                                        cnt * 8, fault_addr);
        } else {
            fault = qgpu_addr_access(s, job->src + job->done * 8, ents,
                                     cnt * 8, false, fault_addr);
        }
        if (!fault) {
            fault = qgpu_mmu_access(s, n, job->dst_as, job->dst + job->done * 8,
                                    ents, cnt * 8, true, fault_addr);
        }
        if (fault) {
            return fault;
        }
        job->done += cnt;
        *budget -= cnt * 16;
    }
    return QGPU_FAULT_NONE;
}

/* ADD or XOR of @len bytes at job->done; @ba holds operand a */
static int qgpu_exec_alu_chunk(QGPUState *s, unsigned n, QGPUJob *job,
                               uint32_t *ba, uint32_t *bb, uint64_t len,
                               uint64_t *fault_addr)
{
    uint64_t i;
    int fault;

    fault = qgpu_mmu_access(s, n, job->src_as, job->src2 + job->done, bb, len,
                            false, fault_addr);
    if (fault) {
        return fault;
    }
    for (i = 0; i < len / 4; i++) {
        uint32_t x = le32_to_cpu(ba[i]), y = le32_to_cpu(bb[i]);

        ba[i] = cpu_to_le32(job->kind == QGPU_JOB_ADD ? x + y : x ^ y);
    }
    return qgpu_mmu_access(s, n, job->dst_as, job->dst + job->done, ba, len,
                           true, fault_addr);
}

/* ADD, XOR and CHECKSUM, in bounded chunks */
static int qgpu_exec_alu_run(QGPUState *s, unsigned n, int64_t *budget,
                             uint64_t *fault_addr)
{
    g_autofree uint32_t *ba = g_malloc(QGPU_BOUNCE_SIZE);
    g_autofree uint32_t *bb = NULL;
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    int fault;

    while (job->done < job->size && *budget > 0) {
        uint64_t len = MIN(job->size - job->done, QGPU_BOUNCE_SIZE);
        uint64_t i;

        fault = qgpu_mmu_access(s, n, job->src_as, job->src + job->done, ba,
                                len, false, fault_addr);
        if (fault) {
            return fault;
        }
        if (job->kind == QGPU_JOB_CSUM) {
            uint32_t h = job->csum;

            for (i = 0; i < len / 4; i++) {
                h ^= le32_to_cpu(ba[i]);
                h *= QGPU_CSUM_PRIME;
            }
            job->csum = h;
        } else {
            if (!bb) {
                bb = g_malloc(QGPU_BOUNCE_SIZE);
            }
            fault = qgpu_exec_alu_chunk(s, n, job, ba, bb, len, fault_addr);
            if (fault) {
                return fault;
            }
        }
        job->done += len;
        *budget -= len;
        qgpu_exec_account(s, e, len);
        if (job->kind == QGPU_JOB_CSUM && job->done == job->size) {
            uint32_t h = cpu_to_le32(job->csum);

            return qgpu_mmu_access(s, n, job->dst_as, job->dst, &h, 4, true,
                                   fault_addr);
        }
    }
    return QGPU_FAULT_NONE;
}

/*
 * TILE and VTILE, a strip of up to QGPU_TILE_STRIP tiles of one tile row
 * at a time: the strip's QGPU_TILE_BYTES-byte tiles are one contiguous
 * range of the tiled side, its pixel rows (up to QGPU_TILE_H) ranges of
 * the linear side. Tiling writes whole tiles, 0 in the pixels beyond the
 * surface's width and height; untiling writes only the surface's pixels.
 * Each strip costs its bytes plus QGPU_TILE_ACCESS_COST per range it
 * reads or writes, so a narrow surface's many small accesses are bounded
 * per round like the pages of a page-list copy.
 */
#define QGPU_TILE_STRIP         (QGPU_BOUNCE_SIZE / QGPU_TILE_BYTES)
#define QGPU_TILE_ACCESS_COST   (4 * KiB)

static int qgpu_exec_tile_run(QGPUState *s, unsigned n, int64_t *budget,
                              uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    bool untile = job->flags & QGPU_TILE_UNTILE;
    uint64_t cols = qgpu_tile_cols(job->width);
    uint64_t tiled = untile ? job->src : job->dst;
    uint64_t linear = untile ? job->dst : job->src;
    QGPUSpace tas = untile ? job->src_as : job->dst_as;
    QGPUSpace las = untile ? job->dst_as : job->src_as;
    g_autofree uint8_t *tb = g_malloc(QGPU_TILE_STRIP * QGPU_TILE_BYTES);
    g_autofree uint8_t *row = g_malloc(QGPU_TILE_STRIP * QGPU_TILE_W *
                                       QGPU_TILE_CPP);

    while (job->done < job->size && *budget > 0) {
        uint64_t ty = job->done / cols, tx = job->done % cols;
        uint64_t cnt = MIN(cols - tx, QGPU_TILE_STRIP);
        uint64_t x0 = tx * QGPU_TILE_W, y0 = ty * QGPU_TILE_H;
        uint64_t px = MIN(job->width - x0, cnt * QGPU_TILE_W);
        uint64_t rows = MIN(job->height - y0, QGPU_TILE_H);
        uint64_t taddr = tiled + job->done * QGPU_TILE_BYTES;
        uint64_t tlen = cnt * QGPU_TILE_BYTES, r, x;
        int fault;

        if (untile) {
            fault = qgpu_mmu_access(s, n, tas, taddr, tb, tlen, false,
                                    fault_addr);
            if (fault) {
                return fault;
            }
        } else {
            memset(tb, 0, tlen);
        }
        for (r = 0; r < rows; r++) {
            uint64_t laddr = linear + (y0 + r) * job->pitch +
                             x0 * QGPU_TILE_CPP;

            if (!untile) {
                fault = qgpu_mmu_access(s, n, las, laddr, row,
                                        px * QGPU_TILE_CPP, false,
                                        fault_addr);
                if (fault) {
                    return fault;
                }
            }
            for (x = 0; x < px; x += QGPU_TILE_W) {
                uint8_t *t = tb + (x / QGPU_TILE_W) * QGPU_TILE_BYTES +
                             r * QGPU_TILE_W * QGPU_TILE_CPP;
                uint8_t *l = row + x * QGPU_TILE_CPP;
                uint64_t w = MIN(px - x, QGPU_TILE_W) * QGPU_TILE_CPP;

                if (untile) {
                    memcpy(l, t, w);
                } else {
                    memcpy(t, l, w);
                }
            }
            if (untile) {
                fault = qgpu_mmu_access(s, n, las, laddr, row,
                                        px * QGPU_TILE_CPP, true,
                                        fault_addr);
                if (fault) {
                    return fault;
                }
            }
        }
        if (!untile) {
            fault = qgpu_mmu_access(s, n, tas, taddr, tb, tlen, true,
                                    fault_addr);
            if (fault) {
                return fault;
            }
        }
        job->done += cnt;
        *budget -= tlen + (rows + 1) * QGPU_TILE_ACCESS_COST;
        qgpu_exec_account(s, e, tlen);
    }
    return QGPU_FAULT_NONE;
}

static const char *qgpu_exec_kind_name(QGPUJobKind kind)
{
    static const char *const names[] = {
        [QGPU_JOB_COPY] = "copy", [QGPU_JOB_FILL] = "fill",
        [QGPU_JOB_GART_MAP] = "gart-map", [QGPU_JOB_GART_UNMAP] = "gart-unmap",
        [QGPU_JOB_ADD] = "add", [QGPU_JOB_XOR] = "xor",
        [QGPU_JOB_CSUM] = "checksum", [QGPU_JOB_UPDATE_PT] = "update-pt",
        [QGPU_JOB_TILE] = "tile",
    };

    return kind < ARRAY_SIZE(names) && names[kind] ? names[kind] : "none";
}

/* CPU time of the thread that runs the engines (trace qgpu_job_done) */
static int64_t qgpu_exec_cpu_ns(void)
{
#ifdef CLOCK_THREAD_CPUTIME_ID
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
        return ts.tv_sec * NANOSECONDS_PER_SECOND + ts.tv_nsec;
    }
#endif
    return 0;
}

int qgpu_exec_run(QGPUState *s, unsigned n, int64_t *budget,
                  uint64_t *fault_addr)
{
    QGPUEngine *e = &s->eng[n];
    QGPUJob *job = &e->job;
    QGPUAddrCtx ctx;
    bool timed = trace_event_get_state_backends(TRACE_QGPU_JOB_DONE);
    int64_t cpu0 = timed ? qgpu_exec_cpu_ns() : 0;
    int fault;

    job->rounds++;
    switch (job->kind) {
    case QGPU_JOB_COPY:
    case QGPU_JOB_FILL:
        qgpu_addr_ctx_init(&ctx);
        fault = job->kind == QGPU_JOB_COPY
                ? qgpu_exec_copy_run(s, n, &ctx, budget, fault_addr)
                : qgpu_exec_fill_run(s, n, &ctx, budget, fault_addr);
        qgpu_addr_ctx_reset(&ctx);
        break;
    case QGPU_JOB_GART_MAP:
    case QGPU_JOB_GART_UNMAP:
        fault = qgpu_exec_gart_run(s, e, budget, fault_addr);
        break;
    case QGPU_JOB_ADD:
    case QGPU_JOB_XOR:
    case QGPU_JOB_CSUM:
        fault = qgpu_exec_alu_run(s, n, budget, fault_addr);
        break;
    case QGPU_JOB_UPDATE_PT:
        fault = qgpu_exec_pt_run(s, n, budget, fault_addr);
        break;
    case QGPU_JOB_TILE:
        fault = qgpu_exec_tile_run(s, n, budget, fault_addr);
        break;
    default:
        job->done = job->size;
        return QGPU_FAULT_NONE;
    }
    if (fault == QGPU_EXEC_ABANDONED || qgpu_cmd_abandoned(s)) {
        return QGPU_EXEC_ABANDONED;
    }
    if (timed) {
        job->cpu_ns += qgpu_exec_cpu_ns() - cpu0;
    }
    if (timed && !fault && job->done >= job->size) {
        trace_qgpu_job_done(n, qgpu_exec_kind_name(job->kind), job->flags,
                            job->size, job->src, job->dst, job->rounds,
                            job->pieces,
                            qemu_clock_get_ns(QEMU_CLOCK_REALTIME) -
                            job->start_ns, job->cpu_ns);
    }
    return fault;
}

/* Commands that complete at once */

int qgpu_exec_discard(QGPUState *s, uint64_t addr, uint64_t size,
                      uint64_t *fault_addr)
{
    uint64_t start, end;
    int fault = qgpu_addr_check(s, addr, size);

    if (fault) {
        *fault_addr = addr;
        return fault;
    }
    trace_qgpu_discard(size, addr);
    if (!size || addr >= s->vram_size) {
        return QGPU_FAULT_NONE;
    }
    /* whole pages only; within VRAM, so no overflow */
    start = ROUND_UP(addr, QGPU_PAGE_SIZE);
    end = ROUND_DOWN(addr + size, QGPU_PAGE_SIZE);
    if (end > start) {
        qgpu_vram_discard(s, start, end - start);
    }
    return QGPU_FAULT_NONE;
}

/*
 * Write a 64-bit fence value at @addr of @as; with @irq, then raise engine
 * @n's interrupt
 */
int qgpu_exec_fence(QGPUState *s, unsigned n, QGPUSpace as, uint64_t addr,
                    uint64_t value, bool irq, uint64_t *fault_addr)
{
    uint64_t le = cpu_to_le64(value);
    int fault;

    trace_qgpu_fence(n, addr, value, irq);
    if (addr & 7) {
        *fault_addr = addr;
        return QGPU_FAULT_BAD_ALIGN;
    }
    fault = qgpu_mmu_access(s, n, as, addr, &le, 8, true, fault_addr);
    if (fault) {
        return fault;
    }
    /* not if the write reset the device (qgpu_cmd_abandoned()) */
    if (irq && !qgpu_cmd_abandoned(s)) {
        qgpu_irq_raise(s, QGPU_INT_ENGINE(n));
    }
    return QGPU_FAULT_NONE;
}
