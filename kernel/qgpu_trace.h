/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu tracepoints (TRACE_SYSTEM qgpu): what the video memory manager and
 * the engines do, for the guest's tracefs:
 *
 *	echo 1 > /sys/kernel/tracing/events/qgpu/enable
 *	cat /sys/kernel/tracing/trace_pipe
 *
 * Allocations are named by their object's (hashed) address, segments by
 * id (QGPU_SEG_*; 0 = system memory), engines by id (0 paging, 1 render).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM qgpu

#if !defined(QGPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define QGPU_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(qgpu_bo_create,
	    TP_PROTO(const void *bo, u64 size, u32 segment_mask, u32 flags),
	    TP_ARGS(bo, size, segment_mask, flags),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u64, size)
			     __field(u32, segment_mask)
			     __field(u32, flags)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->size = size;
			   __entry->segment_mask = segment_mask;
			   __entry->flags = flags;),
	    TP_printk("bo=%p size=%llu segments=%#x flags=%#x", __entry->bo,
		      __entry->size, __entry->segment_mask, __entry->flags)
);

TRACE_EVENT(qgpu_bo_destroy,
	    TP_PROTO(const void *bo, u32 segment, bool busy),
	    TP_ARGS(bo, segment, busy),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, segment)
			     __field(bool, busy)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->segment = segment;
			   __entry->busy = busy;),
	    TP_printk("bo=%p segment=%u deferred=%d", __entry->bo,
		      __entry->segment, __entry->busy)
);

TRACE_EVENT(qgpu_move,
	    TP_PROTO(const void *bo, u32 from, u32 to, u64 bytes),
	    TP_ARGS(bo, from, to, bytes),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, from)
			     __field(u32, to)
			     __field(u64, bytes)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->bytes = bytes;),
	    TP_printk("bo=%p from=%u to=%u bytes=%llu", __entry->bo,
		      __entry->from, __entry->to, __entry->bytes)
);

TRACE_EVENT(qgpu_evict,
	    TP_PROTO(const void *bo, u32 from, bool to_system, u32 policy,
		     bool dead),
	    TP_ARGS(bo, from, to_system, policy, dead),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, from)
			     __field(bool, to_system)
			     __field(u32, policy)
			     __field(bool, dead)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->from = from;
			   __entry->to_system = to_system;
			   __entry->policy = policy;
			   __entry->dead = dead;),
	    TP_printk("bo=%p from=%u to_system=%d policy=%u destroyed=%d",
		      __entry->bo, __entry->from, __entry->to_system,
		      __entry->policy, __entry->dead)
);

TRACE_EVENT(qgpu_make_resident,
	    TP_PROTO(const void *bo, u32 want, u32 segment, int ret),
	    TP_ARGS(bo, want, segment, ret),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, want)
			     __field(u32, segment)
			     __field(int, ret)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->want = want;
			   __entry->segment = segment;
			   __entry->ret = ret;),
	    TP_printk("bo=%p want=%u segment=%u ret=%d", __entry->bo,
		      __entry->want, __entry->segment, __entry->ret)
);

TRACE_EVENT(qgpu_paging_submit,
	    TP_PROTO(u64 seqno, u32 ndw),
	    TP_ARGS(seqno, ndw),
	    TP_STRUCT__entry(__field(u64, seqno)
			     __field(u32, ndw)),
	    TP_fast_assign(__entry->seqno = seqno;
			   __entry->ndw = ndw;),
	    TP_printk("fence=%llu dwords=%u", __entry->seqno, __entry->ndw)
);

TRACE_EVENT(qgpu_submit,
	    TP_PROTO(u32 ctx, u32 dma_size, u32 allocs, u32 patches,
		     u32 portions, int ret),
	    TP_ARGS(ctx, dma_size, allocs, patches, portions, ret),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, dma_size)
			     __field(u32, allocs)
			     __field(u32, patches)
			     __field(u32, portions)
			     __field(int, ret)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->dma_size = dma_size;
			   __entry->allocs = allocs;
			   __entry->patches = patches;
			   __entry->portions = portions;
			   __entry->ret = ret;),
	    TP_printk("ctx=%u dma_size=%u allocs=%u patches=%u portions=%u ret=%d",
		      __entry->ctx, __entry->dma_size, __entry->allocs,
		      __entry->patches, __entry->portions, __entry->ret)
);

TRACE_EVENT(qgpu_split_portion,
	    TP_PROTO(u32 ctx, u32 index, u32 start, u32 end),
	    TP_ARGS(ctx, index, start, end),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, index)
			     __field(u32, start)
			     __field(u32, end)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->index = index;
			   __entry->start = start;
			   __entry->end = end;),
	    TP_printk("ctx=%u portion=%u start=%u end=%u", __entry->ctx,
		      __entry->index, __entry->start, __entry->end)
);

DECLARE_EVENT_CLASS(qgpu_job_class,
		    TP_PROTO(u32 engine, u32 ctx, u64 seqno),
		    TP_ARGS(engine, ctx, seqno),
		    TP_STRUCT__entry(__field(u32, engine)
				     __field(u32, ctx)
				     __field(u64, seqno)),
		    TP_fast_assign(__entry->engine = engine;
				   __entry->ctx = ctx;
				   __entry->seqno = seqno;),
		    TP_printk("engine=%u ctx=%u fence=%llu", __entry->engine,
			      __entry->ctx, __entry->seqno)
);

DEFINE_EVENT(qgpu_job_class, qgpu_job_run,
	     TP_PROTO(u32 engine, u32 ctx, u64 seqno),
	     TP_ARGS(engine, ctx, seqno)
);

DEFINE_EVENT(qgpu_job_class, qgpu_job_done,
	     TP_PROTO(u32 engine, u32 ctx, u64 seqno),
	     TP_ARGS(engine, ctx, seqno)
);

DEFINE_EVENT(qgpu_job_class, qgpu_job_timeout,
	     TP_PROTO(u32 engine, u32 ctx, u64 seqno),
	     TP_ARGS(engine, ctx, seqno)
);

TRACE_EVENT(qgpu_fault,
	    TP_PROTO(u32 reason, u32 engine, u32 ctx, u64 addr, u32 offset),
	    TP_ARGS(reason, engine, ctx, addr, offset),
	    TP_STRUCT__entry(__field(u32, reason)
			     __field(u32, engine)
			     __field(u32, ctx)
			     __field(u64, addr)
			     __field(u32, offset)),
	    TP_fast_assign(__entry->reason = reason;
			   __entry->engine = engine;
			   __entry->ctx = ctx;
			   __entry->addr = addr;
			   __entry->offset = offset;),
	    TP_printk("reason=%u engine=%u ctx=%u addr=%#llx offset=%u",
		      __entry->reason, __entry->engine, __entry->ctx,
		      __entry->addr, __entry->offset)
);

TRACE_EVENT(qgpu_reset,
	    TP_PROTO(u32 engine),
	    TP_ARGS(engine),
	    TP_STRUCT__entry(__field(u32, engine)),
	    TP_fast_assign(__entry->engine = engine;),
	    TP_printk("engine=%u", __entry->engine)
);

/*
 * GPU virtual addressing ("GpuMmu Example Scenarios"): the paging
 * operations as the memory manager queues them. @table is the root
 * descriptor of the address space whose page table an UPDATE_PAGE_TABLE
 * writes (the paging process's or a process's); @vm of a FLUSH_TLB is the
 * address space flushed.
 */
TRACE_EVENT(qgpu_update_pt,
	    TP_PROTO(u64 table, u64 dst, u32 count, bool virt),
	    TP_ARGS(table, dst, count, virt),
	    TP_STRUCT__entry(__field(u64, table)
			     __field(u64, dst)
			     __field(u32, count)
			     __field(bool, virt)),
	    TP_fast_assign(__entry->table = table;
			   __entry->dst = dst;
			   __entry->count = count;
			   __entry->virt = virt;),
	    TP_printk("root=%#llx dst=%#llx count=%u virtual=%d",
		      __entry->table, __entry->dst, __entry->count,
		      __entry->virt)
);

/* A submission will write @value to the monitored fence at @addr. */
TRACE_EVENT(qgpu_mfence_queued,
	    TP_PROTO(u64 addr, u64 value),
	    TP_ARGS(addr, value),
	    TP_STRUCT__entry(__field(u64, addr)
			     __field(u64, value)),
	    TP_fast_assign(__entry->addr = addr;
			   __entry->value = value;),
	    TP_printk("addr=%#llx value=%llu", __entry->addr, __entry->value)
);

TRACE_EVENT(qgpu_flush_tlb,
	    TP_PROTO(u64 vm),
	    TP_ARGS(vm),
	    TP_STRUCT__entry(__field(u64, vm)),
	    TP_fast_assign(__entry->vm = vm;),
	    TP_printk("root=%#llx", __entry->vm)
);

TRACE_EVENT(qgpu_transfer_virtual,
	    TP_PROTO(u64 src, u64 dst, u64 size),
	    TP_ARGS(src, dst, size),
	    TP_STRUCT__entry(__field(u64, src)
			     __field(u64, dst)
			     __field(u64, size)),
	    TP_fast_assign(__entry->src = src;
			   __entry->dst = dst;
			   __entry->size = size;),
	    TP_printk("src=%#llx dst=%#llx size=%llu", __entry->src,
		      __entry->dst, __entry->size)
);

TRACE_EVENT(qgpu_fill_virtual,
	    TP_PROTO(u64 dst, u64 size, u32 pattern),
	    TP_ARGS(dst, size, pattern),
	    TP_STRUCT__entry(__field(u64, dst)
			     __field(u64, size)
			     __field(u32, pattern)),
	    TP_fast_assign(__entry->dst = dst;
			   __entry->size = size;
			   __entry->pattern = pattern;),
	    TP_printk("dst=%#llx size=%llu pattern=%#x", __entry->dst,
		      __entry->size, __entry->pattern)
);

/* A process's paging fence: handed out (@signalled 0) and signalled (1) */
TRACE_EVENT(qgpu_paging_signal,
	    TP_PROTO(u64 root, u64 fence, bool signalled, int error),
	    TP_ARGS(root, fence, signalled, error),
	    TP_STRUCT__entry(__field(u64, root)
			     __field(u64, fence)
			     __field(bool, signalled)
			     __field(int, error)),
	    TP_fast_assign(__entry->root = root;
			   __entry->fence = fence;
			   __entry->signalled = signalled;
			   __entry->error = error;),
	    TP_printk("root=%#llx fence=%llu signalled=%d error=%d",
		      __entry->root, __entry->fence, __entry->signalled,
		      __entry->error)
);

/*
 * InvalidateCache: every accepted call, with what it wrote back and
 * invalidated (0: nothing to do, see &struct drm_qgpu_invalidate_cache)
 */
TRACE_EVENT(qgpu_invalidate_cache,
	    TP_PROTO(const void *bo, u32 segment, u64 offset, u64 size,
		     u64 flushed),
	    TP_ARGS(bo, segment, offset, size, flushed),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, segment)
			     __field(u64, offset)
			     __field(u64, size)
			     __field(u64, flushed)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->segment = segment;
			   __entry->offset = offset;
			   __entry->size = size;
			   __entry->flushed = flushed;),
	    TP_printk("bo=%p segment=%u offset=%llu size=%llu flushed=%llu",
		      __entry->bo, __entry->segment, __entry->offset,
		      __entry->size, __entry->flushed)
);

#endif /* QGPU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE qgpu_trace
#include <trace/define_trace.h>
