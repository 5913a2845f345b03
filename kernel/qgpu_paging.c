// SPDX-License-Identifier: GPL-2.0
/*
 * qgpu: paging buffers. The encoder for paging-engine commands
 * (TRANSFER, FILL, DISCARD, MAP/UNMAP_APERTURE, and the GPU MMU's
 * UPDATE_PAGE_TABLE, FLUSH_TLB, TRANSFER_VIRTUAL, FILL_VIRTUAL) and the paging buffer that
 * holds their page lists. The paging buffer is reserved at init in the
 * aperture segment (PagingBufferSegmentId), mapped through the GART by the
 * paging engine itself, and used as a bump allocator that restarts when
 * the paging engine is idle.
 */
#include <linux/dma-mapping.h>
#include <drm/drm_drv.h>

#include <qgpu/qgpu_mmu.h>

#include "qgpu_device.h"
#include "qgpu_hw.h"
#include "qgpu_job.h"
#include "qgpu_paging.h"
#include "qgpu_resv.h"
#include "qgpu_ring_cmd.h"
#include "qgpu_trace.h"

/*
 * One scheduler credit's share of the paging ring ((64 Ki - 1) / 16 dwords)
 * with room for the fence: sixteen full jobs in flight always fit
 * (qgpu_job_credits())
 */
#define QGPU_PAGING_MAX_DW	4080

/* A paging job of @max_dw dwords, initialised for the paging entity */
static int qgpu_paging_job(struct qgpu_device *qdev, u32 max_dw,
			   struct qgpu_job **out)
{
	struct qgpu_job *job;
	int ret;

	job = qgpu_job_alloc(&qdev->engine[QGPU_ENGINE_PAGING], max_dw);
	if (!job)
		return -ENOMEM;
	/* one credit (its size); the kernel's own work: no owner, no client */
	ret = drm_sched_job_init(&job->base, &qdev->paging_entity,
				 qgpu_job_credits(job), NULL, 0);
	if (ret) {
		qgpu_job_free(job);
		return ret;
	}
	*out = job;
	return 0;
}

/*
 * Every paging buffer is built inside drm_dev_enter(): qgpu_remove() frees
 * the paging engine's scheduler after drm_dev_unplug(), which waits for the
 * buffers being built; once unplugged, paging fails with ENODEV (the
 * MakeResident worker and deferred unmaps may still run then).
 */
int qgpu_paging_begin(struct qgpu_device *qdev, struct qgpu_paging *pb)
{
	int ret;

	pb->qdev = qdev;
	pb->ndw = 0;
	pb->max_dw = QGPU_PAGING_MAX_DW;
	pb->job = NULL;
	pb->chain = false;
	INIT_LIST_HEAD(&pb->held);
	if (!drm_dev_enter(&qdev->drm, &pb->idx))
		return -ENODEV;
	ret = qgpu_paging_job(qdev, pb->max_dw, &pb->job);
	if (ret) {
		pb->job = NULL;
		drm_dev_exit(pb->idx);
	}
	return ret;
}

void qgpu_paging_abort(struct qgpu_paging *pb)
{
	struct qgpu_job *job, *next;

	if (!pb->job)
		return;
	list_for_each_entry_safe(job, next, &pb->held, held) {
		list_del_init(&job->held);
		qgpu_job_free(job);
	}
	qgpu_job_free(pb->job);
	pb->job = NULL;
	drm_dev_exit(pb->idx);
}

/*
 * The paging job runs after all of qgpu's own work in @resv (whatever its
 * usage): a move or an unmap must not overtake any of it. Fences from
 * elsewhere are not waited for (qgpu_resv.c says why). @resv is locked.
 */
int qgpu_paging_resv_deps(struct qgpu_paging *pb, struct dma_resv *resv,
			  u64 skip)
{
	struct qgpu_job *first;

	/* the first job: the ones held before the current job run first */
	first = list_first_entry_or_null(&pb->held, struct qgpu_job, held);
	return qgpu_resv_own_deps(pb->qdev, first ? first : pb->job, resv,
				  skip);
}

static struct dma_fence *qgpu_paging_push(struct qgpu_paging *pb,
					  struct qgpu_job *job, u32 ndw)
{
	struct qgpu_device *qdev = pb->qdev;
	struct dma_fence *done;

	job->ndw = ndw;
	done = qgpu_job_push(job, &qdev->paging_entity);
	trace_qgpu_paging_submit(done->seqno, ndw);
	dma_fence_put(qdev->pbuf_last);
	qdev->pbuf_last = dma_fence_get(done);
	qgpu_stat_add(qdev, qdev->mm_requester, QGPU_STAT(paging_buffers), 1);
	return done;
}

/* Page lists that did not fit the paging buffer; freed with their job. */
struct qgpu_pbuf_extra {
	struct device *dev;
	size_t size;
	void *cpu;
	dma_addr_t dma;
	struct qgpu_pbuf_extra *next;
};

static void qgpu_pbuf_extra_free(void *data)
{
	struct qgpu_pbuf_extra *x = data, *next;

	for (; x; x = next) {
		next = x->next;
		dma_free_coherent(x->dev, x->size, x->cpu, x->dma);
		kfree(x);
	}
}

/*
 * The page lists of held jobs go with the last job: a command may read a
 * list taken while the job before it was current, and the last job is
 * freed only after every job before it has run.
 */
static void qgpu_paging_extra_to_last(struct qgpu_paging *pb)
{
	struct qgpu_pbuf_extra *x, *tail;
	struct qgpu_job *job;

	list_for_each_entry(job, &pb->held, held) {
		x = job->release_data;
		if (!x)
			continue;
		for (tail = x; tail->next; tail = tail->next)
			;
		tail->next = pb->job->release_data;
		pb->job->release = qgpu_pbuf_extra_free;
		pb->job->release_data = x;
		job->release = NULL;
		job->release_data = NULL;
	}
}

/*
 * Queue the paging buffer: its held jobs in order, then the current one.
 * Returns the last one's fence (a reference), which signals after all of
 * them, or NULL if the buffer is empty.
 */
struct dma_fence *qgpu_paging_submit(struct qgpu_paging *pb)
{
	struct qgpu_job *job, *next;
	struct dma_fence *done;

	if (!pb->ndw && list_empty(&pb->held)) {
		qgpu_paging_abort(pb);
		return NULL;
	}
	if (!pb->ndw) {
		/* a job is held only for a command that follows: not here */
		job = list_last_entry(&pb->held, struct qgpu_job, held);
		list_del_init(&job->held);
		qgpu_job_free(pb->job);
		pb->job = job;
		pb->ndw = job->ndw;
	}
	qgpu_paging_extra_to_last(pb);
	list_for_each_entry_safe(job, next, &pb->held, held) {
		list_del_init(&job->held);
		dma_fence_put(qgpu_paging_push(pb, job, job->ndw));
	}
	done = qgpu_paging_push(pb, pb->job, pb->ndw);
	pb->job = NULL;
	drm_dev_exit(pb->idx);
	return done;
}

/**
 * qgpu_paging_chain - queue a full paging buffer and go on in a new one
 * @pb: paging buffer being built (holding at least one command), with
 *	@pb->chain set
 *
 * Paging jobs run in order on one entity: the next one, and the fence the
 * caller gets from it in the end, come after this one and after its
 * dependencies, so a page-table rewrite may span several buffers. Only
 * for work that is better done in part than not at all should it fail
 * later (an unmap's invalidation: @pb->chain); a map or a move that
 * fails must leave no entry behind, so those hold their full buffers
 * until the last is built (qgpu_paging_hold()).
 * Return: 0, or the new buffer's error (what was queued stays queued).
 */
static int qgpu_paging_chain(struct qgpu_paging *pb)
{
	struct qgpu_device *qdev = pb->qdev;
	int ret;

	dma_fence_put(qgpu_paging_submit(pb));
	ret = qgpu_paging_begin(qdev, pb);
	pb->chain = true;
	return ret;
}

/*
 * The current job is full: hold it and go on in a new one. Nothing is
 * queued before qgpu_paging_submit(), so a buffer that fails part way
 * leaves nothing behind (a map's or a move's entries, which must change
 * whole or not at all).
 */
static int qgpu_paging_hold(struct qgpu_paging *pb)
{
	struct qgpu_job *job;
	int ret;

	ret = qgpu_paging_job(pb->qdev, pb->max_dw, &job);
	if (ret)
		return ret;
	pb->job->ndw = pb->ndw;
	list_add_tail(&pb->job->held, &pb->held);
	pb->job = job;
	pb->ndw = 0;
	return 0;
}

static int qgpu_paging_emit(struct qgpu_paging *pb, const u32 *dw, u32 n)
{
	int ret;

	if (pb->ndw + n > pb->max_dw) {
		if (pb->chain || !pb->ndw)
			return -ENOSPC;
		ret = qgpu_paging_hold(pb);
		if (ret)
			return ret;
	}
	memcpy(pb->job->cmds + pb->ndw, dw, n * sizeof(u32));
	pb->ndw += n;
	return 0;
}

/* Room for a page list outside the paging buffer, owned by the job. */
static u64 *qgpu_paging_list_extra(struct qgpu_paging *pb, u32 bytes,
				   u64 *gpu_addr)
{
	struct qgpu_device *qdev = pb->qdev;
	struct qgpu_pbuf_extra *x;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return NULL;
	x->dev = qdev->drm.dev;
	x->size = bytes;
	x->cpu = dma_alloc_coherent(x->dev, bytes, &x->dma, GFP_KERNEL);
	if (!x->cpu) {
		kfree(x);
		return NULL;
	}
	x->next = pb->job->release_data;
	pb->job->release = qgpu_pbuf_extra_free;
	pb->job->release_data = x;
	*gpu_addr = QGPU_SYS_BIT | x->dma;
	return x->cpu;
}

/*
 * Has the paging engine read every list in the paging buffer? Its last job
 * is done, and ran: a job that failed (a ring that stayed full, the device
 * lost) signals while jobs before it may still be on the ring, and the
 * engine is not reset then, so the buffer is not reused after a loss.
 */
static bool qgpu_pbuf_read(struct qgpu_device *qdev)
{
	struct dma_fence *last = qdev->pbuf_last;

	if (qgpu_device_is_lost(qdev))
		return false;
	return !last || (dma_fence_is_signaled(last) && !last->error);
}

/* Room for @bytes of command data (lists), in the paging buffer or not. */
static u64 *qgpu_paging_alloc_data(struct qgpu_paging *pb, u32 bytes,
				   u64 *gpu_addr)
{
	struct qgpu_device *qdev = pb->qdev;
	u64 *p;

	if (qdev->pbuf_head + bytes > qdev->pbuf_size && !pb->ndw &&
	    list_empty(&pb->held) && qgpu_pbuf_read(qdev))
		qdev->pbuf_head = 0;
	if (qdev->pbuf_head + bytes > qdev->pbuf_size)
		return qgpu_paging_list_extra(pb, bytes, gpu_addr);
	p = qdev->pbuf + qdev->pbuf_head;
	*gpu_addr = qdev->seg[QGPU_PBUF_SEGMENT].base + qdev->pbuf_head;
	qdev->pbuf_head += ALIGN(bytes, 64);
	return p;
}

/* Copy @n 64-bit words (page-table entries) where a command can read them */
int qgpu_paging_data(struct qgpu_paging *pb, const u64 *data, u32 n,
		     u64 *gpu_addr)
{
	u64 *p;

	if (!n || n * sizeof(u64) > QGPU_PBUF_MAX_LIST)
		return -EINVAL;
	p = qgpu_paging_alloc_data(pb, n * sizeof(u64), gpu_addr);
	if (!p)
		return -ENOMEM;
	memcpy(p, data, n * sizeof(u64));
	return 0;
}

/**
 * qgpu_paging_list - write a page list for a paging command
 * @pb: paging buffer being built
 * @pages: DMA addresses of system pages
 * @npages: number of pages, <= QGPU_PBUF_MAX_LIST / 8
 * @gpu_addrs: write GPU addresses (TRANSFER/FILL page lists) rather than
 *	guest-physical ones (MAP_APERTURE page lists)
 * @gpu_addr: returns the GPU address of the list
 *
 * Lists go to the paging buffer, a bump allocator that starts over once
 * the paging engine has run everything queued before. When it is full and
 * still busy, the list goes to memory of its own that is freed with the
 * job: nothing here waits for the GPU (callers hold mm_lock).
 */
int qgpu_paging_list(struct qgpu_paging *pb, const dma_addr_t *pages,
		     u32 npages, bool gpu_addrs, u64 *gpu_addr)
{
	u32 bytes = npages * sizeof(u64);
	u64 *list;
	u32 i;

	if (!npages || bytes > QGPU_PBUF_MAX_LIST)
		return -EINVAL;
	list = qgpu_paging_alloc_data(pb, bytes, gpu_addr);
	if (!list)
		return -ENOMEM;
	for (i = 0; i < npages; i++)
		list[i] = (gpu_addrs ? QGPU_SYS_BIT : 0) | pages[i];
	return 0;
}

int qgpu_paging_transfer(struct qgpu_paging *pb, u64 size, u64 src, u64 dst,
			 u32 flags)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	return qgpu_paging_emit(pb, dw,
				qgpu_enc_transfer(dw, size, src, dst, flags));
}

int qgpu_paging_fill(struct qgpu_paging *pb, u64 size, u64 dst, u32 pattern)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	return qgpu_paging_emit(pb, dw, qgpu_enc_fill(dw, size, dst, pattern));
}

int qgpu_paging_discard(struct qgpu_paging *pb, u64 size, u64 addr)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	return qgpu_paging_emit(pb, dw, qgpu_enc_discard(dw, size, addr));
}

/* A paging job that only orders what follows after its dependencies. */
int qgpu_paging_nop(struct qgpu_paging *pb)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	return qgpu_paging_emit(pb, dw, qgpu_enc_nop(dw));
}

int qgpu_paging_map_aperture(struct qgpu_paging *pb, u32 first, u32 count,
			     u64 list)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	atomic64_inc(&pb->qdev->stats.c[QGPU_STAT(aperture_maps)]);
	return qgpu_paging_emit(pb, dw,
				qgpu_enc_map_aperture(dw, first, count, list));
}

int qgpu_paging_unmap_aperture(struct qgpu_paging *pb, u32 first, u32 count)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];

	atomic64_inc(&pb->qdev->stats.c[QGPU_STAT(aperture_unmaps)]);
	return qgpu_paging_emit(pb, dw,
				qgpu_enc_unmap_aperture(dw, first, count));
}

/* Room for @ndw more dwords in the paging buffer being built? */
bool qgpu_paging_room(struct qgpu_paging *pb, u32 ndw)
{
	return pb->ndw + ndw <= pb->max_dw;
}

/* Most entries an UPDATE_PAGE_TABLE carries inline (else from a list) */
#define QGPU_PT_INLINE_MAX	16

/**
 * qgpu_paging_update_pt - UpdatePageTable: write page-table entries
 * @pb: paging buffer being built
 * @table: root descriptor of the address space the table belongs to (for
 *	tracing only)
 * @dst: address of the first entry: a VA of the paging process with
 *	@virt, else a GPU physical address
 * @entries: the entries
 * @n: how many, at most one table's worth (QGPU_MMU_ENTRIES)
 * @virt: @dst is a paging-process VA
 *
 * A few entries go into the command; more go into the paging buffer as a
 * list the command points at.
 */
int qgpu_paging_update_pt(struct qgpu_paging *pb, u64 table, u64 dst,
			  const u64 *entries, u32 n, bool virt)
{
	struct qgpu_device *qdev = pb->qdev;
	u32 flags = virt ? QGPU_PT_DST_VIRTUAL : 0;
	u32 dw[QGPU_CMD_UPDATE_PT_LEN + 2 * QGPU_PT_INLINE_MAX];
	u64 list = 0;
	u32 len;
	int ret;

	if (!n || n > QGPU_MMU_ENTRIES)
		return -EINVAL;
	/*
	 * A full buffer goes first (an unmap over many tables spans
	 * several), before a list is taken for the job it would be freed
	 * with.
	 */
	len = QGPU_CMD_UPDATE_PT_LEN + (n <= QGPU_PT_INLINE_MAX ? 2 * n : 0);
	if (pb->chain && !qgpu_paging_room(pb, len) && pb->ndw) {
		ret = qgpu_paging_chain(pb);
		if (ret)
			return ret;
	}
	if (n <= QGPU_PT_INLINE_MAX) {
		flags |= QGPU_PT_INLINE;
	} else {
		ret = qgpu_paging_data(pb, entries, n, &list);
		if (ret)
			return ret;
	}
	len = qgpu_enc_update_pt(dw, dst, n, list, entries, flags);
	ret = qgpu_paging_emit(pb, dw, len);
	if (ret)
		return ret;
	atomic64_add(n, &qdev->mmu_stats.pte_writes);
	atomic64_inc(&qdev->mmu_stats.update_pt_cmds);
	trace_qgpu_update_pt(table, dst, n, virt);
	return 0;
}

/* FlushTLB(@root): the device forgets the address space's translations. */
int qgpu_paging_flush_tlb(struct qgpu_paging *pb, u64 root)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];
	int ret;

	/* after entries that filled the buffer: in the next one */
	if (pb->chain && !qgpu_paging_room(pb, QGPU_CMD_FLUSH_TLB_LEN) &&
	    pb->ndw) {
		ret = qgpu_paging_chain(pb);
		if (ret)
			return ret;
	}
	ret = qgpu_paging_emit(pb, dw, qgpu_enc_flush_tlb(dw, root));
	if (ret)
		return ret;
	atomic64_inc(&pb->qdev->mmu_stats.tlb_flushes);
	trace_qgpu_flush_tlb(root);
	return 0;
}

/* TransferVirtual between two VAs of the paging process */
int qgpu_paging_transfer_virtual(struct qgpu_paging *pb, u64 size, u64 src,
				 u64 dst)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];
	int ret;

	ret = qgpu_paging_emit(pb, dw,
			       qgpu_enc_transfer_virtual(dw, size, src, dst));
	if (ret)
		return ret;
	atomic64_add(size, &pb->qdev->mmu_stats.transfer_virtual_bytes);
	trace_qgpu_transfer_virtual(src, dst, size);
	return 0;
}

/* FillVirtual at a VA of the paging process */
int qgpu_paging_fill_virtual(struct qgpu_paging *pb, u64 size, u64 dst,
			     u32 pattern)
{
	u32 dw[QGPU_CMD_MAX_FIXED_LEN];
	int ret;

	ret = qgpu_paging_emit(pb, dw,
			       qgpu_enc_fill_virtual(dw, size, dst, pattern));
	if (ret)
		return ret;
	atomic64_add(size, &pb->qdev->mmu_stats.fill_virtual_bytes);
	trace_qgpu_fill_virtual(dst, size, pattern);
	return 0;
}

/**
 * qgpu_paging_init - set up the GART and the paging buffer
 * @qdev: device; the aperture segment must be described already
 *
 * The GART table is system memory the device walks; the paging buffer is
 * mapped at the start of the aperture segment by a MAP_APERTURE paging
 * command whose own page list is addressed physically.
 */
int qgpu_paging_init(struct qgpu_device *qdev)
{
	struct device *dev = &qdev->pdev->dev;
	u32 gart_pages = qdev->gart_size >> QGPU_PAGE_SHIFT;
	u32 npages = QGPU_PBUF_SIZE >> PAGE_SHIFT;
	struct qgpu_paging pb;
	struct dma_fence *f;
	u64 *list;
	u32 i;
	long t;
	int ret;

	qdev->gart = dmam_alloc_coherent(dev, gart_pages * sizeof(u64),
					 &qdev->gart_dma,
					 GFP_KERNEL | __GFP_ZERO);
	qdev->pbuf = dmam_alloc_coherent(dev, QGPU_PBUF_SIZE, &qdev->pbuf_dma,
					 GFP_KERNEL | __GFP_ZERO);
	if (!qdev->gart || !qdev->pbuf)
		return -ENOMEM;
	qdev->pbuf_size = QGPU_PBUF_SIZE;
	qgpu_hw_gart_enable(qdev, qdev->gart_dma);

	/* bootstrap list at the end of the paging buffer, addressed physically */
	list = qdev->pbuf + QGPU_PBUF_SIZE - npages * sizeof(u64);
	for (i = 0; i < npages; i++)
		list[i] = qdev->pbuf_dma + i * PAGE_SIZE;
	ret = qgpu_paging_begin(qdev, &pb);
	if (ret)
		return ret;
	ret = qgpu_paging_map_aperture(&pb, 0, npages, QGPU_SYS_BIT |
				       (qdev->pbuf_dma + QGPU_PBUF_SIZE -
					npages * sizeof(u64)));
	if (ret) {
		qgpu_paging_abort(&pb);
		return ret;
	}
	f = qgpu_paging_submit(&pb);
	t = dma_fence_wait_timeout(f, false, msecs_to_jiffies(10000));
	ret = t <= 0 ? -ETIMEDOUT : f->error;
	dma_fence_put(f);
	if (ret)
		drm_err(&qdev->drm, "paging engine did not map the paging buffer (%d)\n",
			ret);
	qdev->pbuf_head = 0;
	return ret;
}

void qgpu_paging_fini(struct qgpu_device *qdev)
{
	dma_fence_put(qdev->pbuf_last);
	qdev->pbuf_last = NULL;
}
