/*
 * qgpu: virtual PCI GPU -- internal device header
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_H
#define HW_QGPU_H

#include "qemu/units.h"
#include "qemu/rcu.h"
#include "hw/pci/pci.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "qgpu_regs.h"

#define TYPE_QGPU "qgpu"
OBJECT_DECLARE_SIMPLE_TYPE(QGPUState, QGPU)

/* Limits on device properties (see docs/hw-spec.md, "Device properties") */
#define QGPU_VRAM_MIN           (1 * MiB)
#define QGPU_VRAM_MAX           QGPU_GART_BASE          /* 1 TiB */
#define QGPU_GART_MAX           QGPU_GART_BASE          /* 1 TiB */
#define QGPU_HAP_MAX            (256 * MiB)
#define QGPU_HAP_MAX_RUNS       256     /* aliases at memory speed */
#define QGPU_SLOTS_MAX          4096
#define QGPU_CONTEXTS_MAX       4096
#define QGPU_SLOT_ENTRIES_MAX   (1u << 20)              /* slots x contexts */

/*
 * Work budget of one engine in one bottom-half run. Every command costs
 * QGPU_CMD_COST budget units and every byte moved costs one unit, so one run
 * moves at most ~4 MiB or executes at most 256 commands per engine.
 */
#define QGPU_BH_BUDGET          (4 * MiB)
#define QGPU_CMD_COST           (16 * KiB)
#define QGPU_BOUNCE_SIZE        (64 * KiB)
#define QGPU_EXEC_MAX           (1 * MiB)
#define QGPU_WAIT_POLL_NS       (1000 * 1000)           /* 1 ms */

#define QGPU_NO_CONTEXT         0xffffffffu
#define QGPU_HAP_INVALID        UINT64_MAX

/* Chunked (resumable) operations executed by an engine */
typedef enum QGPUJobKind {
    QGPU_JOB_NONE = 0,
    QGPU_JOB_COPY,              /* TRANSFER, DMA COPY */
    QGPU_JOB_FILL,              /* FILL, DMA FILL */
    QGPU_JOB_GART_MAP,          /* MAP_APERTURE */
    QGPU_JOB_GART_UNMAP,        /* UNMAP_APERTURE */
    QGPU_JOB_ADD,               /* DMA ADD */
    QGPU_JOB_XOR,               /* DMA XOR */
    QGPU_JOB_CSUM,              /* DMA CHECKSUM */
} QGPUJobKind;

typedef struct QGPUJob {
    QGPUJobKind kind;
    uint32_t flags;             /* QGPU_XFER_* for COPY/FILL */
    uint64_t size;              /* bytes (GART jobs: entries) */
    uint64_t done;              /* progress, same unit as size */
    uint64_t src;               /* GPU address or page-list address */
    uint64_t src2;              /* second ALU operand */
    uint64_t dst;               /* GPU address, page-list address, GART page */
    uint32_t pattern;
    uint32_t csum;
} QGPUJob;

/* Per-context slot table entry */
typedef struct QGPUSlot {
    uint64_t addr;
    uint64_t size;              /* 0 = unbound */
} QGPUSlot;

/* DMA buffer being executed by EXEC on the render engine */
typedef struct QGPUExec {
    bool active;
    bool waiting;               /* blocked in DMA WAIT */
    uint32_t ctx;
    uint64_t buf;               /* GPU address of the DMA buffer */
    uint32_t cur;               /* byte offset of the current DMA command */
    uint32_t end;
    uint32_t cmd_bytes;         /* length of the DMA command in progress */
    uint64_t wait_addr;
    uint64_t wait_value;
} QGPUExec;

typedef struct QGPUEngine {
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    bool enabled;
    bool halted;
    uint32_t cmd_bytes;         /* length of the ring command in progress */
    QGPUJob job;
    QGPUExec exec;
    uint64_t cmds;
    uint64_t bytes;
} QGPUEngine;

/* One fault record (docs/hw-spec.md section 10) */
typedef struct QGPUFault {
    uint32_t reason;
    uint32_t engine;
    uint32_t context;
    uint32_t offset;
    uint64_t addr;
} QGPUFault;

typedef struct QGPUHapRun {
    struct rcu_head rcu;        /* must be first (call_rcu) */
    MemoryRegion mr;
} QGPUHapRun;

struct QGPUState {
    PCIDevice parent_obj;

    /* properties */
    uint64_t vram_size;
    uint64_t visible_size;
    uint64_t hap_size;
    uint64_t gart_size;
    uint32_t max_slots;
    uint32_t max_contexts;

    /* memory */
    MemoryRegion mmio;
    MemoryRegion vram_bar;      /* BAR2: first visible_size bytes of VRAM */
    MemoryRegion vram_all;      /* all of VRAM, alias target, not mapped */
    MemoryRegion hap;           /* BAR4 container */
    MemoryRegion hap_unmapped;  /* BAR4 background */
    int vram_fd;
    uint8_t *vram;

    /* host aperture */
    uint64_t hap_pages;
    uint64_t *hap_table;        /* aperture page -> VRAM page */
    uint64_t hap_mapped;
    QGPUHapRun **hap_runs;
    uint64_t hap_nruns;
    uint32_t hap_index;
    uint32_t hap_count;
    uint64_t hap_vram_page;
    uint32_t hap_fault_count;

    /* registers */
    uint32_t scratch;
    uint32_t int_status;
    uint32_t int_mask;
    uint32_t irq_pending;       /* int_status & int_mask last signalled */
    uint64_t gart_base;
    uint32_t gart_ctrl;

    uint32_t fault_count;       /* every fault recorded (FAULT_COUNT) */
    QGPUFault faultq[QGPU_FAULTQ_DEPTH];        /* FIFO of fault records */
    uint32_t faultq_head;       /* index of the oldest record */
    uint32_t faultq_len;        /* records queued (FAULTQ_COUNT) */
    uint32_t faultq_lost;       /* faults not queued (FAULTQ_LOST) */
    uint32_t ctx_sel;           /* CTX_SEL */

    uint64_t work_cmds;         /* CYCLES = work_cmds + work_bytes / 64 */
    uint64_t work_bytes;

    /* engines */
    QGPUEngine eng[QGPU_NUM_ENGINES];
    QEMUBH *bh;
    QEMUTimer *wait_timer;
    bool in_engine;             /* device DMA/MSI in progress: BAR0 refuses */

    /* render engine context save: max_contexts x max_slots */
    QGPUSlot *slots;
    bool *ctx_faulted;          /* per context: EXECs skipped until CLEAR */
};

/* qgpu.c */
void qgpu_raise_irq(QGPUState *s, uint32_t bits);
void qgpu_record_fault(QGPUState *s, uint32_t reason, uint32_t engine,
                       uint32_t context, uint64_t addr, uint32_t offset);

/* qgpu-gart.c: GPU address translation and the one access helper */
typedef struct QGPUSeg {
    uint8_t *host;              /* non-NULL: VRAM host pointer */
    dma_addr_t gpa;             /* otherwise: guest physical address */
    uint64_t len;               /* contiguous bytes */
} QGPUSeg;

int qgpu_check_range(QGPUState *s, uint64_t addr, uint64_t len);
bool qgpu_in_vram_or_gart(QGPUState *s, uint64_t addr, uint64_t len);
int qgpu_translate(QGPUState *s, uint64_t addr, uint64_t len, QGPUSeg *seg);
int qgpu_gpu_access(QGPUState *s, uint64_t addr, void *buf, uint64_t len,
                    bool is_write, uint64_t *fault_addr);
int qgpu_gpu_fill(QGPUState *s, uint64_t addr, uint64_t len,
                  uint32_t pattern, uint64_t phase, uint64_t *fault_addr);
void qgpu_pattern(uint8_t *p, uint64_t len, uint32_t pattern, uint64_t phase);

/* qgpu-hap.c */
void qgpu_hap_init(QGPUState *s);
void qgpu_hap_fini(QGPUState *s);
void qgpu_hap_cmd(QGPUState *s, uint32_t cmd);
void qgpu_hap_reset(QGPUState *s);

/* qgpu-engine.c */
void qgpu_engine_init(QGPUState *s);
void qgpu_engine_fini(QGPUState *s);
void qgpu_engine_reset_all(QGPUState *s);
uint32_t qgpu_engine_read(QGPUState *s, unsigned n, hwaddr reg, bool *ok);
bool qgpu_engine_write(QGPUState *s, unsigned n, hwaddr reg, uint32_t val);
int qgpu_ring_cmd(QGPUState *s, unsigned n, uint32_t op, uint32_t flags,
                  const uint32_t *dw, uint32_t len, uint64_t *fault_addr);
int qgpu_fence(QGPUState *s, unsigned n, uint64_t addr, uint64_t value,
               bool irq, uint64_t *fault_addr);
int qgpu_job_run(QGPUState *s, QGPUEngine *e, int64_t *budget,
                 uint64_t *fault_addr);
void qgpu_account(QGPUState *s, QGPUEngine *e, uint64_t bytes);

/* qgpu-paging.c */
int qgpu_paging_cmd(QGPUState *s, QGPUEngine *e, uint32_t op, uint32_t flags,
                    const uint32_t *dw, uint64_t *fault_addr);
int qgpu_copy_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                  int64_t *budget, uint64_t *fault_addr);
int qgpu_fill_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                  int64_t *budget, uint64_t *fault_addr);
int qgpu_gart_job_run(QGPUState *s, QGPUJob *job, int64_t *budget,
                      uint64_t *fault_addr);

/* qgpu-render.c */
int qgpu_render_ring_cmd(QGPUState *s, QGPUEngine *e, uint32_t op,
                         const uint32_t *dw, uint64_t *fault_addr,
                         uint32_t *fault_ctx);
int qgpu_render_step(QGPUState *s, QGPUEngine *e, int64_t *budget,
                     uint64_t *fault_addr);
void qgpu_render_ctx_fault(QGPUState *s, uint32_t ctx);
bool qgpu_render_wait_check(QGPUState *s, QGPUEngine *e, int *fault,
                            uint64_t *fault_addr);
int qgpu_alu_run(QGPUState *s, QGPUJob *job, QGPUEngine *e,
                 int64_t *budget, uint64_t *fault_addr);
void qgpu_render_reset(QGPUState *s);

#endif /* HW_QGPU_H */
