/*
 * qgpu: CPU host aperture (BAR4)
 *
 * BAR4 is a container. A per-page table records aperture page -> VRAM page
 * (or invalid). Its background is an MMIO region that implements the whole
 * aperture from that table: unmapped bytes read as zero, drop writes and
 * count HAP_FAULT_COUNT; mapped bytes access VRAM.
 *
 * For speed, runs of consecutive aperture pages that map consecutive VRAM
 * pages are overlaid with RAM alias subregions of "qgpu-vram" (all of VRAM,
 * not mapped anywhere itself) at a higher priority, so the CPU reaches them
 * at memory speed with no callbacks. Each HAP_CMD rebuilds the aliases in one
 * memory transaction. The number of aliases is bounded (QGPU_HAP_MAX_RUNS,
 * the longest runs win): QEMU's address-space dispatch holds at most a few
 * thousand sections, so an unbounded number would let a guest abort QEMU.
 * Runs beyond the bound are served, correctly but slower, by the background.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "qemu/bitops.h"
#include "qemu/log.h"
#include "exec/memory.h"
#include "qgpu-state.h"
#include "qgpu-faultq.h"
#include "qgpu-hap.h"
#include "qgpu-thread.h"
#include "trace.h"

#define QGPU_HAP_MAX_RUNS       256     /* aliases at memory speed */
#define QGPU_HAP_INVALID        UINT64_MAX

typedef struct QGPUHapSpan {
    uint64_t start;             /* aperture page */
    uint64_t len;               /* pages */
} QGPUHapSpan;

/* Slow path: every aperture access not covered by an alias */
static bool qgpu_hap_byte(QGPUState *s, hwaddr addr, uint8_t **p)
{
    uint64_t page = addr >> QGPU_PAGE_SHIFT;
    uint64_t vpage;

    if (page >= s->hap_pages) {
        return false;
    }
    vpage = s->hap_table[page];
    if (vpage == QGPU_HAP_INVALID) {
        return false;
    }
    *p = s->vram + (vpage << QGPU_PAGE_SHIFT) +
         (addr & (QGPU_PAGE_SIZE - 1));
    return true;
}

/* Not a fault (docs/hw-spec.md): only counted, and logged as ignored. */
static void qgpu_hap_unmapped(QGPUState *s, hwaddr addr, unsigned size)
{
    s->hap_fault_count++;
    qemu_log_mask(LOG_GUEST_ERROR, "qgpu: host aperture access to unmapped "
                  "offset 0x%" HWADDR_PRIx " (%u bytes) ignored\n", addr, size);
}

/*
 * The bytes of an access at @addr that lie in the aperture. QEMU hands an
 * MMIO region an access that runs past its end whole (a RAM alias gets
 * only its own part): the bytes beyond BAR4 are no aperture page's, so
 * they read 0, drop, and count nothing, as after an alias run.
 */
static unsigned qgpu_hap_clip(QGPUState *s, hwaddr addr, unsigned size)
{
    return addr < s->hap_size ? MIN(size, s->hap_size - addr) : 0;
}

static uint64_t qgpu_hap_read(void *opaque, hwaddr addr, unsigned size)
{
    QGPUState *s = opaque;
    uint64_t val = 0;
    bool fault = false;
    unsigned i, n = qgpu_hap_clip(s, addr, size);

    for (i = 0; i < n; i++) {
        uint8_t *p;

        if (qgpu_hap_byte(s, addr + i, &p)) {
            val |= (uint64_t)*p << (8 * i);
        } else {
            fault = true;
        }
    }
    if (fault) {
        qgpu_hap_unmapped(s, addr, size);
    }
    return val;
}

static void qgpu_hap_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    QGPUState *s = opaque;
    bool fault = false;
    unsigned i, n = qgpu_hap_clip(s, addr, size);

    for (i = 0; i < n; i++) {
        uint8_t *p;

        if (qgpu_hap_byte(s, addr + i, &p)) {
            *p = val >> (8 * i);
        } else {
            fault = true;
        }
    }
    if (fault) {
        qgpu_hap_unmapped(s, addr, size);
    }
}

static const MemoryRegionOps qgpu_hap_ops = {
    .read = qgpu_hap_read,
    .write = qgpu_hap_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

static void qgpu_hap_run_free(QGPUHapRun *run)
{
    g_free(run);
}

/* Remove all alias subregions. Caller holds a memory transaction. */
static void qgpu_hap_clear_runs(QGPUState *s)
{
    uint64_t i;

    for (i = 0; i < s->hap_nruns; i++) {
        QGPUHapRun *run = s->hap_runs[i];

        memory_region_del_subregion(&s->hap, &run->mr);
        object_unparent(OBJECT(&run->mr));
        /* readers of an old flat view may still look at the region */
        call_rcu(run, qgpu_hap_run_free, rcu);
        s->hap_runs[i] = NULL;
    }
    s->hap_nruns = 0;
}

/* Longest first; ties by aperture position */
static gint qgpu_hap_span_cmp(gconstpointer a, gconstpointer b)
{
    const QGPUHapSpan *x = a, *y = b;

    if (x->len != y->len) {
        return x->len > y->len ? -1 : 1;
    }
    return x->start < y->start ? -1 : x->start > y->start;
}

static void qgpu_hap_rebuild(QGPUState *s)
{
    g_autofree QGPUHapSpan *spans = NULL;
    uint64_t nspans = 0, i = 0;

    if (!s->hap_size) {
        return;
    }
    spans = g_new(QGPUHapSpan, MAX(s->hap_mapped, 1));
    while (i < s->hap_pages) {
        uint64_t start = i, vpage = s->hap_table[i];

        i++;
        if (vpage == QGPU_HAP_INVALID) {
            continue;
        }
        while (i < s->hap_pages && s->hap_table[i] != QGPU_HAP_INVALID &&
               s->hap_table[i] == vpage + (i - start)) {
            i++;
        }
        spans[nspans].start = start;
        spans[nspans].len = i - start;
        nspans++;
    }
    if (nspans > QGPU_HAP_MAX_RUNS) {
        qsort(spans, nspans, sizeof(*spans), qgpu_hap_span_cmp);
        nspans = QGPU_HAP_MAX_RUNS;
    }

    memory_region_transaction_begin();
    qgpu_hap_clear_runs(s);
    for (i = 0; i < nspans; i++) {
        QGPUHapRun *run = g_new0(QGPUHapRun, 1);
        uint64_t start = spans[i].start;
        /* a unique name keeps QOM child naming O(1) */
        g_autofree char *name = g_strdup_printf("qgpu-hap-page-%" PRIu64,
                                                start);

        memory_region_init_alias(&run->mr, OBJECT(s), name, &s->vram_all,
                                 s->hap_table[start] << QGPU_PAGE_SHIFT,
                                 spans[i].len << QGPU_PAGE_SHIFT);
        memory_region_add_subregion_overlap(&s->hap,
                                            start << QGPU_PAGE_SHIFT,
                                            &run->mr, 1);
        s->hap_runs[s->hap_nruns++] = run;
    }
    memory_region_transaction_commit();
}

static void qgpu_hap_cmd(QGPUState *s, uint32_t cmd)
{
    uint64_t index = s->hap_index, count = s->hap_count;
    uint64_t vram_pages = s->vram_size >> QGPU_PAGE_SHIFT;
    uint64_t i;

    if (index > s->hap_pages || count > s->hap_pages - index ||
        (cmd == QGPU_HAP_CMD_MAP &&
         (s->hap_vram_page > vram_pages ||
          count > vram_pages - s->hap_vram_page))) {
        qgpu_faultq_record(s, QGPU_FAULT_HAP_RANGE, QGPU_FAULT_ENGINE_MMIO,
                           QGPU_NO_CONTEXT, s->hap_vram_page, s->hap_index);
        return;
    }
    if (cmd == QGPU_HAP_CMD_MAP) {
        trace_qgpu_hap_map(index, count, s->hap_vram_page);
    } else {
        trace_qgpu_hap_unmap(index, count);
    }
    if (!count) {
        return;
    }
    /*
     * The command takes effect before the register write completes: a
     * piece the device thread moves without the BQL, translated through
     * the old mapping, lands first.
     */
    qgpu_thread_quiesce(s);
    for (i = 0; i < count; i++) {
        uint64_t *e = &s->hap_table[index + i];

        if (cmd == QGPU_HAP_CMD_MAP) {
            if (*e == QGPU_HAP_INVALID) {
                s->hap_mapped++;
            }
            *e = s->hap_vram_page + i;
        } else if (*e != QGPU_HAP_INVALID) {
            s->hap_mapped--;
            *e = QGPU_HAP_INVALID;
        }
    }
    qgpu_hap_rebuild(s);
}

/* HAP_INDEX, HAP_COUNT, HAP_VRAM_PAGE_LO/HI, HAP_MAPPED, HAP_FAULT_COUNT */
uint32_t qgpu_hap_reg_read(QGPUState *s, hwaddr addr)
{
    switch (addr) {
    case QGPU_REG_HAP_INDEX:
        return s->hap_index;
    case QGPU_REG_HAP_COUNT:
        return s->hap_count;
    case QGPU_REG_HAP_VRAM_PAGE_LO:
        return s->hap_vram_page;
    case QGPU_REG_HAP_VRAM_PAGE_HI:
        return s->hap_vram_page >> 32;
    case QGPU_REG_HAP_MAPPED:
        return s->hap_mapped;
    default:
        return s->hap_fault_count;
    }
}

/* HAP_INDEX, HAP_COUNT, HAP_VRAM_PAGE_LO/HI, HAP_CMD; false: bad HAP_CMD */
bool qgpu_hap_reg_write(QGPUState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case QGPU_REG_HAP_INDEX:
        s->hap_index = val;
        return true;
    case QGPU_REG_HAP_COUNT:
        s->hap_count = val;
        return true;
    case QGPU_REG_HAP_VRAM_PAGE_LO:
        s->hap_vram_page = deposit64(s->hap_vram_page, 0, 32, val);
        return true;
    case QGPU_REG_HAP_VRAM_PAGE_HI:
        s->hap_vram_page = deposit64(s->hap_vram_page, 32, 32, val);
        return true;
    default:
        if (val != QGPU_HAP_CMD_MAP && val != QGPU_HAP_CMD_UNMAP) {
            return false;
        }
        qgpu_hap_cmd(s, val);
        return true;
    }
}

void qgpu_hap_reset(QGPUState *s)
{
    uint64_t i;

    for (i = 0; i < s->hap_pages; i++) {
        s->hap_table[i] = QGPU_HAP_INVALID;
    }
    s->hap_mapped = 0;
    s->hap_index = 0;
    s->hap_count = 0;
    s->hap_vram_page = 0;
    if (s->hap_nruns) {
        memory_region_transaction_begin();
        qgpu_hap_clear_runs(s);
        memory_region_transaction_commit();
    }
}

void qgpu_hap_realize(QGPUState *s)
{
    s->hap_pages = s->hap_size >> QGPU_PAGE_SHIFT;
    s->hap_table = g_new(uint64_t, MAX(s->hap_pages, 1));
    s->hap_runs = g_new0(QGPUHapRun *, QGPU_HAP_MAX_RUNS);
    s->hap_nruns = 0;
    if (!s->hap_size) {
        return;
    }
    memory_region_init(&s->hap, OBJECT(s), "qgpu-hap", s->hap_size);
    memory_region_init_io(&s->hap_unmapped, OBJECT(s), &qgpu_hap_ops, s,
                          "qgpu-hap-slow", s->hap_size);
    /*
     * Engine DMA reaches BAR4 like the CPU does (hw-spec section 6), also
     * when a doorbell runs the engine inside a BAR0 write: the memory
     * API's re-entrancy guard would fail that access. The slow path
     * touches only the page table, VRAM and a counter, so it is safe.
     */
    s->hap_unmapped.disable_reentrancy_guard = true;
    memory_region_add_subregion_overlap(&s->hap, 0, &s->hap_unmapped, 0);
}

void qgpu_hap_unrealize(QGPUState *s)
{
    memory_region_transaction_begin();
    qgpu_hap_clear_runs(s);
    if (s->hap_size) {
        /* a subregion holds a reference on its owner: drop it */
        memory_region_del_subregion(&s->hap, &s->hap_unmapped);
    }
    memory_region_transaction_commit();
    g_free(s->hap_table);
    s->hap_table = NULL;
    g_free(s->hap_runs);
    s->hap_runs = NULL;
    s->hap_pages = 0;
}
