/*
 * qgpu: virtual PCI GPU -- the device's state
 *
 * QGPUState and the types it is made of; no functions. The device is built
 * in layers, each a file named for its concept. A layer calls and includes
 * only the layers below it, and every layer includes this header:
 *
 *   qgpu.c          the PCI device: properties, BAR0 registers, reset
 *   qgpu-engine.c   engines: rings, command fetch, scheduling, ENG_* regs
 *   qgpu-render.c   render decode: EXEC, CTX_*, DMA-buffer commands
 *   qgpu-paging.c   paging decode: TRANSFER, FILL, DISCARD, (UN)MAP_APERTURE
 *   qgpu-context.c  render contexts: slot tables, faulted state
 *   qgpu-exec.c     executors: copy, fill, GART writes, ALU, fence writes
 *   qgpu-mmu.c      the GPU MMU: page-table walks, TLBs, virtual accesses
 *   qgpu-hap.c      the CPU host aperture (BAR4)
 *   qgpu-addr.c     the GPU address space: VRAM, GART, system memory
 *   qgpu-faultq.c   the fault queue
 *   qgpu-irq.c      interrupts
 *   qgpu-thread.c   the device thread the engines run on, and the BQL
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_QGPU_STATE_H
#define HW_QGPU_STATE_H

#include "qemu/units.h"
#include "qemu/rcu.h"
#include "hw/pci/pci.h"
#include "qemu/timer.h"
#include "qemu/thread.h"
#include "qom/object.h"
#include "qgpu_regs.h"

#define TYPE_QGPU "qgpu"
OBJECT_DECLARE_SIMPLE_TYPE(QGPUState, QGPU)

/* Chunked (resumable) operations run by the executors (qgpu-exec.c) */
typedef enum QGPUJobKind {
    QGPU_JOB_NONE = 0,
    QGPU_JOB_COPY,              /* TRANSFER, DMA COPY */
    QGPU_JOB_FILL,              /* FILL, DMA FILL */
    QGPU_JOB_GART_MAP,          /* MAP_APERTURE */
    QGPU_JOB_GART_UNMAP,        /* UNMAP_APERTURE */
    QGPU_JOB_ADD,               /* DMA ADD */
    QGPU_JOB_XOR,               /* DMA XOR */
    QGPU_JOB_CSUM,              /* DMA CHECKSUM */
    QGPU_JOB_UPDATE_PT,         /* UPDATE_PT */
    QGPU_JOB_TILE,              /* DMA TILE, VTILE (size, done: tiles) */
} QGPUJobKind;

/*
 * An address space an access goes through: GPU physical addresses, or GPU
 * virtual addresses translated through the page tables of a root
 * descriptor (qgpu-mmu.c). A virtual space's root may lack VALID (then
 * every access faults PAGE_NOT_PRESENT), hence the separate flag.
 */
typedef struct QGPUSpace {
    bool virt;
    uint64_t root;              /* root descriptor, when virt */
} QGPUSpace;

typedef struct QGPUJob {
    QGPUJobKind kind;
    uint32_t flags;             /* QGPU_XFER_*, QGPU_PT_*, QGPU_TILE_* */
    uint64_t size;              /* bytes (GART, UPDATE_PT jobs: entries) */
    uint64_t done;              /* progress, same unit as size */
    uint64_t src;               /* GPU address or page-list address */
    uint64_t src2;              /* second ALU operand */
    uint64_t dst;               /* GPU address, page-list address, GART page */
    QGPUSpace src_as;           /* address space of src and src2 */
    QGPUSpace dst_as;           /* address space of dst */
    uint32_t pattern;
    uint32_t csum;
    uint32_t width;             /* TILE: surface in pixels, linear pitch */
    uint32_t height;
    uint32_t pitch;
    int64_t start_ns;           /* trace qgpu_job_done: host clock at start */
    int64_t cpu_ns;             /* ... the engine thread's CPU time in it */
    uint32_t rounds;            /* engine rounds (bottom halves) it ran in */
    uint64_t pieces;            /* contiguous pieces moved (copy, fill) */
} QGPUJob;

/* One TLB entry: a valid leaf translation of one 4 KiB or 64 KiB page */
typedef struct QGPUTlbEntry {
    bool valid;
    bool system;                /* pa is guest-physical, else a VRAM offset */
    bool read_only;
    uint64_t root;              /* tag: root address | QGPU_PTE_SYSTEM */
    uint64_t va;                /* tag: VA of the page */
    uint64_t size;              /* tag: QGPU_MMU_PAGE_4K or _64K */
    uint64_t pa;                /* the page */
} QGPUTlbEntry;

/* Per-engine TLB: fully associative, FIFO replacement */
typedef struct QGPUTlb {
    QGPUTlbEntry e[QGPU_MMU_TLB_ENTRIES];
    uint32_t next;              /* the entry the next fill replaces */
} QGPUTlb;

/* Per-context slot table entry */
typedef struct QGPUSlot {
    uint64_t addr;
    uint64_t size;              /* 0 = unbound */
} QGPUSlot;

/* DMA buffer being executed by EXEC on the render engine */
typedef struct QGPUDmaBuffer {
    bool active;
    bool waiting;               /* blocked in DMA WAIT */
    uint32_t ctx;
    uint64_t buf;               /* GPU address of the DMA buffer */
    uint32_t cur;               /* byte offset of the current DMA command */
    uint32_t end;
    uint32_t cmd_bytes;         /* length of the DMA command in progress */
    uint64_t wait_addr;
    uint64_t wait_value;
    QGPUSpace as;               /* the context's address space at EXEC */
} QGPUDmaBuffer;

typedef struct QGPUEngine {
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    bool enabled;
    bool halted;
    bool stalled;               /* CTRL.STALL: executes nothing */
    uint32_t cmd_bytes;         /* length of the ring command in progress */
    QGPUJob job;
    QGPUDmaBuffer dma;
    uint64_t cmds;
    uint64_t bytes;
    QGPUTlb tlb;                /* qgpu-mmu.c */
    uint32_t fault_info;        /* FAULT_INFO/FAULT_VM of the fault being */
    uint64_t fault_vm;          /* returned (virtual accesses), else 0 */
    uint32_t gen;               /* bumped when the command is abandoned */
} QGPUEngine;

/* One fault record (docs/hw-spec.md section 10) */
typedef struct QGPUFault {
    uint32_t reason;
    uint32_t engine;
    uint32_t context;
    uint32_t offset;
    uint64_t addr;
    uint32_t info;              /* 1.2: QGPU_FAULT_INFO_*, 0 if physical */
    uint64_t vm;                /* 1.2: root descriptor, 0 if physical */
} QGPUFault;

/* One round of engine work on the device thread: true if work remains */
typedef bool QGPUThreadRound(QGPUState *s);

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
    bool io_coherent;           /* advertise CAP_IO_COHERENT (hw-spec 16) */
    uint32_t doorbell_cmds;     /* commands a doorbell runs itself (12) */

    /* memory */
    MemoryRegion mmio;
    MemoryRegion vram_bar;      /* BAR2: first visible_size bytes of VRAM */
    MemoryRegion vram_all;      /* all of VRAM, alias target, not mapped */
    MemoryRegion hap;           /* BAR4 container */
    MemoryRegion hap_unmapped;  /* BAR4 background */
    int vram_fd;
    uint8_t *vram;

    /* host aperture (qgpu-hap.c) */
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
    uint32_t int_status;        /* qgpu-irq.c */
    uint32_t int_mask;
    uint32_t irq_pending;       /* int_status & int_mask last signalled */
    uint32_t ping_ack;          /* qgpu-irq.c: last PING value answered */
    uint64_t gart_base;         /* qgpu-addr.c */
    uint32_t gart_ctrl;

    /* fault queue (qgpu-faultq.c) */
    uint32_t fault_count;       /* every fault recorded (FAULT_COUNT) */
    QGPUFault faultq[QGPU_FAULTQ_DEPTH];        /* FIFO of fault records */
    uint32_t faultq_head;       /* index of the oldest record */
    uint32_t faultq_len;        /* records queued (FAULTQ_COUNT) */
    uint32_t faultq_lost;       /* faults not queued (FAULTQ_LOST) */

    uint64_t work_cmds;         /* CYCLES = work_cmds + work_bytes / 64 */
    uint64_t work_bytes;

    /* engines (qgpu-engine.c) */
    QGPUEngine eng[QGPU_NUM_ENGINES];
    QEMUTimer *wait_timer;
    bool in_engine;             /* device DMA/MSI in progress: BAR0 refuses */
    bool gone;                  /* unplugged: no more DMA or interrupts */
    /*
     * The engine whose command runs now (a round of the thread, or a
     * doorbell) and its gen when the command's current step began: a gen
     * changed since means a reset abandoned the command inside its own
     * DMA or MSI (qgpu_cmd_abandoned()). Used with the BQL held.
     */
    QGPUEngine *cmd_eng;
    uint32_t cmd_gen;

    /* the device thread (qgpu-thread.c) */
    QemuThread thread;
    QemuMutex thread_lock;      /* kicked, quit (with BQL), in_flight */
    QemuCond thread_cond;       /* kicked or quit */
    QemuCond thread_landed;     /* in_flight cleared */
    bool thread_started;
    bool thread_kicked;
    bool thread_in_flight;      /* moving a piece without the BQL */
    bool thread_quit;           /* written with both locks held */
    uint64_t thread_unlocks;    /* times the thread dropped the BQL */
    QGPUThreadRound *thread_round;

    /* render contexts (qgpu-context.c): max_contexts x max_slots */
    uint32_t ctx_sel;           /* CTX_SEL */
    QGPUSlot *slots;
    bool *ctx_faulted;          /* per context: EXECs skipped until CLEAR */
    uint64_t *ctx_vm;           /* per context: root descriptor, 0: physical */

    /* GPU MMU (qgpu-mmu.c); TLBs are per engine */
    uint64_t mmu_paging_root;   /* MMU_PAGING_ROOT: address space 0 */
    uint64_t tlb_hits;          /* statistics, kept across reset */
    uint64_t tlb_misses;
    uint64_t tlb_flushes;
};

#endif /* HW_QGPU_STATE_H */
