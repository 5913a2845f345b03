/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu: the device and the DRM file as every part of the driver sees them
 * (struct qgpu_device, struct qgpu_file), their counters, and the memory
 * manager's lock. The driver's layers: docs/driver.md.
 */
#ifndef QGPU_DEVICE_H
#define QGPU_DEVICE_H

#include <linux/dma-fence.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <drm/drm_device.h>
#include <drm/drm_print.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include <qgpu/qgpu_cmd.h>
#include <uapi/drm/qgpu_drm.h>

#include "qgpu_mfence.h"

#define QGPU_DRIVER_NAME	"qgpu"
#define QGPU_JOB_TIMEOUT_MS	2000
#define QGPU_JOB_MAX_EXTENSIONS	15	/* 32 s for a job that progresses */
#define QGPU_JOB_SECOND_LOOK_MS	100	/* before a quiet engine is a hang */
#define QGPU_SCHED_CREDITS	16	/* jobs on an engine's ring at once */

struct qgpu_device;
struct qgpu_future;
struct qgpu_plan;

/**
 * struct qgpu_engine - one device engine: its ring, fences and scheduler
 */
struct qgpu_engine {
	struct qgpu_device *qdev;
	unsigned int id;
	const char *name;

	/* ring in system memory, written only from run_job */
	void *ring;
	dma_addr_t ring_dma;
	u32 ring_size;
	u32 tail;
	struct mutex ring_lock;		/* protects ring and tail */

	/* fences: the device writes the last completed seqno to *fence_val */
	u64 fence_context;
	u64 next_seqno;			/* under ring_lock */
	u64 *fence_val;
	dma_addr_t fence_dma;
	spinlock_t fence_lock;		/* protects pending */
	struct list_head pending;

	struct drm_gpu_scheduler sched;
	bool sched_ready;
	u64 last_done_ns;		/* under fence_lock: last job's end */
	u64 progress_mark;		/* CMDS ^ BYTES at the last timeout */
};

/**
 * struct qgpu_segment - a memory segment (DXGK_SEGMENTDESCRIPTOR)
 */
struct qgpu_segment {
	u32 id;
	u32 flags;
	u64 base;		/* GPU physical address */
	u64 size;
	u64 cpu_bar_offset;
	u64 reserved;		/* bytes reserved by the driver */
	bool present;
	struct drm_mm mm;	/* offsets relative to base */
	struct list_head lru;	/* resident qgpu_bo, least recent first */
	u32 allocations;
	u64 used;
};

/**
 * struct qgpu_counters - memory-manager and submission counters
 */
struct qgpu_counters {
	atomic64_t c[sizeof(struct drm_qgpu_stats) / sizeof(__u64)];
};

#define QGPU_STAT(field) \
	(offsetof(struct drm_qgpu_stats, field) / sizeof(__u64))

/**
 * struct qgpu_mmu_stats - GPU virtual addressing counters (QGPU_QUERY_MMU)
 */
struct qgpu_mmu_stats {
	atomic64_t pte_writes;
	atomic64_t update_pt_cmds;
	atomic64_t tlb_flushes;
	atomic64_t transfer_virtual_bytes;
	atomic64_t fill_virtual_bytes;
	atomic64_t make_resident_calls;
};

struct qgpu_pp;
struct qgpu_vm;
struct qgpu_ping;

struct qgpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *mmio;
	resource_size_t vram_bar;	/* physical address of BAR2 */
	resource_size_t hap_bar;	/* physical address of BAR4 */

	/* identity, read at probe */
	u32 version;
	u32 caps;
	u32 max_slots;
	u32 max_contexts;
	u64 vram_size;
	u64 visible_size;
	u64 gart_size;
	u64 hap_size;

	struct qgpu_engine *engine;	/* QGPU_NUM_ENGINES (qgpu_engines_alloc()) */
	struct drm_sched_entity paging_entity;	/* the paging process */

	/* memory manager */
	struct mutex mm_lock;		/* residency, segments, HAP, paging buf */
	struct qgpu_segment seg[QGPU_SEG_MAX + 1];
	u64 *gart;			/* GART table, one entry per page */
	dma_addr_t gart_dma;
	void *pbuf;			/* paging buffer (page lists) */
	dma_addr_t pbuf_dma;
	u32 pbuf_size;
	u32 pbuf_head;			/* bump allocator, reset when idle */
	struct dma_fence *pbuf_last;	/* last paging job using pbuf */
	struct drm_mm_node pbuf_node;	/* its range in the aperture segment */
	struct drm_mm hap_mm;		/* host aperture pages */
	struct list_head hap_lru;	/* qgpu_bo mapped there, oldest first */
	u64 lru_tick;
	struct workqueue_struct *reap_wq;	/* deferred destruction: the
						 * module's qgpu_reap_wq
						 */
	struct qgpu_plan *plan;		/* the walk being planned or replayed */
	struct qgpu_file *mm_requester;	/* under mm_lock: see qgpu_mm_lock() */
	u32 policy;			/* victim policy, enum qgpu_policy_id */
	struct qgpu_future *future;	/* under mm_lock: the walk's known future */
	u64 future_stamp;		/* under mm_lock: eviction scans */
	u32 budget_pct;			/* under mm_lock: per-process budgets */

	/* contexts */
	struct mutex ctx_lock;
	struct xarray contexts;		/* global id -> qgpu_ctx */
	struct xarray ctx_users;	/* uid -> context ids it holds */
	u32 next_ctx;

	/* GPU MMU (qgpu_pagetable.c, qgpu_vm.c) */
	bool has_mmu;
	struct qgpu_pp *pp;		/* the paging process */
	u64 page_tables;		/* under mm_lock */
	struct qgpu_mmu_stats mmu_stats;

	/* monitored fences (qgpu_mfence.c) */
	wait_queue_head_t mfence_wq;	/* woken by every engine interrupt */
	spinlock_t mfence_lock;		/* protects the two below */
	struct list_head mfence_active;	/* monitored fences waited for */
	bool mfence_dead;		/* unplugged: nothing more is written */

	struct qgpu_ping *ping;		/* the PING doorbell (qgpu_ping.c) */
	bool lost;			/* qgpu_lost.c; set under mm_lock */

	struct qgpu_counters stats;
	atomic64_t bo_ids;		/* the last &qgpu_bo.id handed out */
	atomic64_t submit_seq;		/* the last physical submit traced */
	u64 pt_ids;			/* under mm_lock: the last page table's id */
	u32 faults_seen;
	struct dentry *debugfs;
};

/**
 * struct qgpu_file - per open file state
 */
/**
 * struct qgpu_usage - a DRM file's render-engine time (fdinfo) and its
 * queued DMA buffers, shared by the file, its contexts and those DMA
 * buffers so that work finishing after either is gone is still counted
 * @ref: the file's reference, one per context, one per DMA-buffer copy
 * @busy_ns: time the render engine spent on the file's DMA buffers
 * @dma_bytes: bytes of its DMA-buffer copies alive (queued, not yet freed),
 *	at most %QGPU_MAX_QUEUED_DMA (qgpu_dmabuf_copy())
 * @dma_wq: woken when a copy is freed
 */
struct qgpu_usage {
	struct kref ref;
	atomic64_t busy_ns;
	atomic64_t dma_bytes;
	wait_queue_head_t dma_wq;
};

void qgpu_usage_put(struct qgpu_usage *usage);

/*
 * Segment groups (QueryVideoMemoryInfo): VRAM is local, the aperture
 * segment non-local.
 */
#define QGPU_SEGMENT_GROUPS	2

/**
 * struct qgpu_vidmem - a DRM file's video memory (QueryVideoMemoryInfo),
 *	shared by the file and the allocations it created, which may outlive
 *	it
 * @ref: the file's reference and one per allocation
 * @usage: bytes of its allocations resident in each segment group, and of
 *	its address space's page tables (under mm_lock)
 * @trimmed: bytes of them evicted from each group while it was over its
 *	budget there (under mm_lock)
 * @trim_left: how much more of it one victim choice trims (under mm_lock)
 * @id: its id in the tracepoints (a sequence number, never reused)
 */
struct qgpu_vidmem {
	struct kref ref;
	u64 id;
	u64 usage[QGPU_SEGMENT_GROUPS];
	u64 trimmed[QGPU_SEGMENT_GROUPS];
	u64 trim_left;
};

struct qgpu_file {
	struct qgpu_device *qdev;
	struct mutex vm_lock;		/* creates @vm */
	struct qgpu_vm *vm;		/* its GPU address space, or NULL */
	struct xarray contexts;		/* ids owned by this file */
	struct qgpu_counters stats;
	struct qgpu_usage *usage;
	struct qgpu_mfence_file mfences;
	struct qgpu_vidmem *vidmem;
	struct xarray locks;		/* its Lock2s (qgpu_cpu_map.c) */
};

static inline struct qgpu_device *to_qdev(struct drm_device *drm)
{
	return container_of(drm, struct qgpu_device, drm);
}

/*
 * An ioctl argument check that names the rule the caller broke in the DRM
 * debug log (off by default; echo 0x2 > /sys/module/drm/parameters/debug):
 *	if (QGPU_IOCTL_DBG(qdev, args->pad))
 *		return -EINVAL;
 */
#define QGPU_IOCTL_DBG(qdev, cond) ({					\
	bool __broken = !!(cond);					\
									\
	if (__broken)							\
		drm_dbg(&(qdev)->drm, "%s: %s\n", __func__, #cond);	\
	__broken;							\
})

/*
 * mm_lock is taken for a file's request (@qf: a submit, a residency
 * request) or for the kernel's own work (NULL). What the memory manager
 * does while it is held (bytes paged, evictions, paging buffers) is
 * counted for the device and for that file (QGPU_QUERY_STATS per file).
 */
static inline void qgpu_mm_lock(struct qgpu_device *qdev, struct qgpu_file *qf)
{
	mutex_lock(&qdev->mm_lock);
	qdev->mm_requester = qf;
}

static inline void qgpu_mm_unlock(struct qgpu_device *qdev)
{
	qdev->mm_requester = NULL;
	mutex_unlock(&qdev->mm_lock);
}

static inline void qgpu_stat_add(struct qgpu_device *qdev,
				 struct qgpu_file *qf, unsigned int idx, u64 v)
{
	atomic64_add(v, &qdev->stats.c[idx]);
	if (qf)
		atomic64_add(v, &qf->stats.c[idx]);
}

/* qgpu_drv.c: deferred destruction of every device, until module exit */
extern struct workqueue_struct *qgpu_reap_wq;

/* qgpu_engine.c */
int qgpu_engines_alloc(struct qgpu_device *qdev);
void qgpu_engines_free_retired(void);
int qgpu_engine_init(struct qgpu_device *qdev);
void qgpu_engine_fini(struct qgpu_device *qdev);
void qgpu_engine_stop(struct qgpu_engine *eng);
int qgpu_engine_emit(struct qgpu_engine *eng, const u32 *cmds, u32 ndw,
		     void **fence_mem, struct dma_fence **fence_out);
void qgpu_engine_reset(struct qgpu_engine *eng);
void qgpu_engine_stall(struct qgpu_engine *eng, bool stall);
bool qgpu_engine_stalled(struct qgpu_engine *eng);
u64 qgpu_engine_progress(struct qgpu_engine *eng);
irqreturn_t qgpu_irq_handler(int irq, void *arg);

/* qgpu_fence.c */
void *qgpu_fence_prealloc(void);
struct dma_fence *qgpu_fence_create(struct qgpu_engine *eng, u64 seqno,
				    void **mem);
void qgpu_fence_count_new(void);
void qgpu_fence_free(struct dma_fence *f);
void qgpu_fences_wait_all(void);
void qgpu_fence_process(struct qgpu_engine *eng, int error);

/* qgpu_lost.c */
void qgpu_device_lose(struct qgpu_device *qdev, const char *why);
bool qgpu_device_is_lost(struct qgpu_device *qdev);

/* qgpu_job.c */
int qgpu_sched_init(struct qgpu_device *qdev);
void qgpu_sched_fini(struct qgpu_device *qdev);
void qgpu_sched_free_pending(struct qgpu_device *qdev);

#endif /* QGPU_DEVICE_H */
