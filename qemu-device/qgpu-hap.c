/*
 * qgpu: CPU host aperture (BAR4)
 *
 * BAR4 is a container. Its background is an MMIO region: unmapped pages read
 * as zero, drop writes and count HAP_FAULT_COUNT. Mapped pages are RAM alias
 * subregions of "qgpu-vram" (all of VRAM, not mapped anywhere itself) at a
 * higher priority. A per-page table records aperture page -> VRAM page; each
 * HAP_CMD rebuilds the aliases, coalescing runs of consecutive aperture pages
 * that map consecutive VRAM pages, in one memory transaction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "exec/memory.h"
#include "qgpu.h"

static uint64_t qgpu_hap_unmapped_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    QGPUState *s = opaque;

    s->hap_fault_count++;
    return 0;
}

static void qgpu_hap_unmapped_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    QGPUState *s = opaque;

    s->hap_fault_count++;
}

static const MemoryRegionOps qgpu_hap_unmapped_ops = {
    .read = qgpu_hap_unmapped_read,
    .write = qgpu_hap_unmapped_write,
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
    }
    s->hap_nruns = 0;
}

static void qgpu_hap_rebuild(QGPUState *s)
{
    uint64_t i = 0;

    memory_region_transaction_begin();
    qgpu_hap_clear_runs(s);
    while (i < s->hap_pages) {
        uint64_t start = i, vpage = s->hap_table[i];
        QGPUHapRun *run;

        if (vpage == QGPU_HAP_INVALID) {
            i++;
            continue;
        }
        i++;
        while (i < s->hap_pages && s->hap_table[i] != QGPU_HAP_INVALID &&
               s->hap_table[i] == vpage + (i - start)) {
            i++;
        }
        run = g_new0(QGPUHapRun, 1);
        memory_region_init_alias(&run->mr, OBJECT(s), "qgpu-hap-page",
                                 &s->vram_all,
                                 vpage << QGPU_PAGE_SHIFT,
                                 (i - start) << QGPU_PAGE_SHIFT);
        memory_region_add_subregion_overlap(&s->hap,
                                            start << QGPU_PAGE_SHIFT,
                                            &run->mr, 1);
        s->hap_runs[s->hap_nruns++] = run;
    }
    memory_region_transaction_commit();
}

void qgpu_hap_cmd(QGPUState *s, uint32_t cmd)
{
    uint64_t index = s->hap_index, count = s->hap_count;
    uint64_t vram_pages = s->vram_size >> QGPU_PAGE_SHIFT;
    uint64_t i;

    if (index > s->hap_pages || count > s->hap_pages - index ||
        (cmd == QGPU_HAP_CMD_MAP &&
         (s->hap_vram_page > vram_pages ||
          count > vram_pages - s->hap_vram_page))) {
        qgpu_record_fault(s, QGPU_FAULT_HAP_RANGE, QGPU_FAULT_ENGINE_MMIO,
                          QGPU_NO_CONTEXT, s->hap_vram_page, s->hap_index);
        return;
    }
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

void qgpu_hap_init(QGPUState *s)
{
    s->hap_pages = s->hap_size >> QGPU_PAGE_SHIFT;
    s->hap_table = g_new(uint64_t, MAX(s->hap_pages, 1));
    s->hap_runs = g_new0(QGPUHapRun *, MAX(s->hap_pages, 1));
    s->hap_nruns = 0;
    if (!s->hap_size) {
        return;
    }
    memory_region_init(&s->hap, OBJECT(s), "qgpu-hap", s->hap_size);
    memory_region_init_io(&s->hap_unmapped, OBJECT(s), &qgpu_hap_unmapped_ops,
                          s, "qgpu-hap-unmapped", s->hap_size);
    memory_region_add_subregion_overlap(&s->hap, 0, &s->hap_unmapped, 0);
}

void qgpu_hap_fini(QGPUState *s)
{
    if (s->hap_nruns) {
        memory_region_transaction_begin();
        qgpu_hap_clear_runs(s);
        memory_region_transaction_commit();
    }
    g_free(s->hap_table);
    s->hap_table = NULL;
    g_free(s->hap_runs);
    s->hap_runs = NULL;
    s->hap_pages = 0;
}
