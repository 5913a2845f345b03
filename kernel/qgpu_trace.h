/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qgpu tracepoints (TRACE_SYSTEM qgpu): what the video memory manager and
 * the engines do, for the guest's tracefs:
 *
 *	echo 1 > /sys/kernel/tracing/events/qgpu/enable
 *	cat /sys/kernel/tracing/trace_pipe
 *
 * Allocations are named by their object's (hashed) address and by their
 * id (&qgpu_bo.id: a per-device sequence number, never reused), segments by
 * id (QGPU_SEG_*; 0 = system memory), engines by id (0 paging, 1 render).
 * Fields are only ever appended to an event (tests and qgpu-trace read
 * them by name). qgpu-trace records the residency events into the file
 * format of docs/trace-format.md.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM qgpu

#if !defined(QGPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define QGPU_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(qgpu_bo_create,
	    TP_PROTO(const void *bo, u64 size, u32 segment_mask, u32 flags,
		     u64 id, u32 preferred),
	    TP_ARGS(bo, size, segment_mask, flags, id, preferred),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u64, size)
			     __field(u32, segment_mask)
			     __field(u32, flags)
			     __field(u64, id)
			     __field(u32, preferred)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->size = size;
			   __entry->segment_mask = segment_mask;
			   __entry->flags = flags;
			   __entry->id = id;
			   __entry->preferred = preferred;),
	    TP_printk("bo=%p size=%llu segments=%#x flags=%#x id=%llu preferred=%#x",
		      __entry->bo, __entry->size, __entry->segment_mask,
		      __entry->flags, __entry->id, __entry->preferred)
);

TRACE_EVENT(qgpu_bo_destroy,
	    TP_PROTO(const void *bo, u32 segment, bool busy, u64 id),
	    TP_ARGS(bo, segment, busy, id),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, segment)
			     __field(bool, busy)
			     __field(u64, id)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->segment = segment;
			   __entry->busy = busy;
			   __entry->id = id;),
	    TP_printk("bo=%p segment=%u deferred=%d id=%llu", __entry->bo,
		      __entry->segment, __entry->busy, __entry->id)
);

/*
 * @why: enum qgpu_move_why; @offset: where in segment @to it went (0 for
 * system memory); @fill: a zero fill of a new allocation, not a copy
 */
TRACE_EVENT(qgpu_move,
	    TP_PROTO(const void *bo, u32 from, u32 to, u64 bytes, u64 id,
		     u32 why, u64 offset, bool fill),
	    TP_ARGS(bo, from, to, bytes, id, why, offset, fill),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, from)
			     __field(u32, to)
			     __field(u64, bytes)
			     __field(u64, id)
			     __field(u32, why)
			     __field(u64, offset)
			     __field(bool, fill)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->bytes = bytes;
			   __entry->id = id;
			   __entry->why = why;
			   __entry->offset = offset;
			   __entry->fill = fill;),
	    TP_printk("bo=%p from=%u to=%u bytes=%llu id=%llu why=%u offset=%llu fill=%d",
		      __entry->bo, __entry->from, __entry->to, __entry->bytes,
		      __entry->id, __entry->why, __entry->offset,
		      __entry->fill)
);

TRACE_EVENT(qgpu_evict,
	    TP_PROTO(const void *bo, u32 from, bool to_system, u32 policy,
		     bool dead, u64 id, u32 why),
	    TP_ARGS(bo, from, to_system, policy, dead, id, why),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, from)
			     __field(bool, to_system)
			     __field(u32, policy)
			     __field(bool, dead)
			     __field(u64, id)
			     __field(u32, why)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->from = from;
			   __entry->to_system = to_system;
			   __entry->policy = policy;
			   __entry->dead = dead;
			   __entry->id = id;
			   __entry->why = why;),
	    TP_printk("bo=%p from=%u to_system=%d policy=%u destroyed=%d id=%llu why=%u",
		      __entry->bo, __entry->from, __entry->to_system,
		      __entry->policy, __entry->dead, __entry->id,
		      __entry->why)
);

TRACE_EVENT(qgpu_make_resident,
	    TP_PROTO(const void *bo, u32 want, u32 segment, int ret, u64 id),
	    TP_ARGS(bo, want, segment, ret, id),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, want)
			     __field(u32, segment)
			     __field(int, ret)
			     __field(u64, id)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->want = want;
			   __entry->segment = segment;
			   __entry->ret = ret;
			   __entry->id = id;),
	    TP_printk("bo=%p want=%u segment=%u ret=%d id=%llu", __entry->bo,
		      __entry->want, __entry->segment, __entry->ret,
		      __entry->id)
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

/* @seq: the submission (qgpu_submit_begin); @uses: qgpu_portion_use events */
TRACE_EVENT(qgpu_split_portion,
	    TP_PROTO(u32 ctx, u32 index, u32 start, u32 end, u64 seq,
		     u32 uses),
	    TP_ARGS(ctx, index, start, end, seq, uses),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u32, index)
			     __field(u32, start)
			     __field(u32, end)
			     __field(u64, seq)
			     __field(u32, uses)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->index = index;
			   __entry->start = start;
			   __entry->end = end;
			   __entry->seq = seq;
			   __entry->uses = uses;),
	    TP_printk("ctx=%u portion=%u start=%u end=%u seq=%llu uses=%u",
		      __entry->ctx, __entry->index, __entry->start,
		      __entry->end, __entry->seq, __entry->uses)
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

TRACE_EVENT(qgpu_job_extend,
	    TP_PROTO(u32 engine, u32 ctx, u64 seqno, u32 extensions),
	    TP_ARGS(engine, ctx, seqno, extensions),
	    TP_STRUCT__entry(__field(u32, engine)
			     __field(u32, ctx)
			     __field(u64, seqno)
			     __field(u32, extensions)),
	    TP_fast_assign(__entry->engine = engine;
			   __entry->ctx = ctx;
			   __entry->seqno = seqno;
			   __entry->extensions = extensions;),
	    TP_printk("engine=%u ctx=%u seqno=%llu extensions=%u",
		      __entry->engine, __entry->ctx, __entry->seqno,
		      __entry->extensions)
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

/*
 * Residency recording (qgpu-trace, docs/trace-format.md). Everything below
 * is emitted under mm_lock, so the order of the events is the order in
 * which the memory manager did things.
 *
 * A request to the memory manager (enum qgpu_mm_req_kind; @arg: see there)
 */
TRACE_EVENT(qgpu_mm_req,
	    TP_PROTO(u32 kind, u64 id, u32 arg),
	    TP_ARGS(kind, id, arg),
	    TP_STRUCT__entry(__field(u32, kind)
			     __field(u64, id)
			     __field(u32, arg)),
	    TP_fast_assign(__entry->kind = kind;
			   __entry->id = id;
			   __entry->arg = arg;),
	    TP_printk("kind=%u id=%llu arg=%u", __entry->kind, __entry->id,
		      __entry->arg)
);

/* A use of an allocation: its LRU tick is now @tick */
TRACE_EVENT(qgpu_touch,
	    TP_PROTO(u64 id, u64 tick),
	    TP_ARGS(id, tick),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u64, tick)),
	    TP_fast_assign(__entry->id = id;
			   __entry->tick = tick;),
	    TP_printk("id=%llu tick=%llu", __entry->id, __entry->tick)
);

/* A CPU fault on a mapping: what qgpu_mm_cpu_prepare() answered */
TRACE_EVENT(qgpu_cpu_fault,
	    TP_PROTO(u64 id, bool write, int ret, bool moving),
	    TP_ARGS(id, write, ret, moving),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(bool, write)
			     __field(int, ret)
			     __field(bool, moving)),
	    TP_fast_assign(__entry->id = id;
			   __entry->write = write;
			   __entry->ret = ret;
			   __entry->moving = moving;),
	    TP_printk("id=%llu write=%d ret=%d moving=%d", __entry->id,
		      __entry->write, __entry->ret, __entry->moving)
);

/*
 * A physical submission reaching the memory manager: @seq numbers it (per
 * device), then one qgpu_submit_entry per patch-location entry (@id 0: no
 * allocation; @alloc: its allocation-list index; @write: that entry has
 * QGPU_ALLOC_WRITE), the
 * portions it queued with their uses, and qgpu_submit_end.
 */
TRACE_EVENT(qgpu_submit_begin,
	    TP_PROTO(u64 seq, u32 ctx, u32 allocs, u32 patches, u32 dma_size),
	    TP_ARGS(seq, ctx, allocs, patches, dma_size),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u32, ctx)
			     __field(u32, allocs)
			     __field(u32, patches)
			     __field(u32, dma_size)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->ctx = ctx;
			   __entry->allocs = allocs;
			   __entry->patches = patches;
			   __entry->dma_size = dma_size;),
	    TP_printk("seq=%llu ctx=%u allocs=%u patches=%u dma_size=%u",
		      __entry->seq, __entry->ctx, __entry->allocs,
		      __entry->patches, __entry->dma_size)
);

TRACE_EVENT(qgpu_submit_entry,
	    TP_PROTO(u64 seq, u32 index, u64 id, u32 slot, u32 split_offset,
		     u32 patch_offset, bool write, u32 alloc),
	    TP_ARGS(seq, index, id, slot, split_offset, patch_offset, write,
		    alloc),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u32, index)
			     __field(u64, id)
			     __field(u32, slot)
			     __field(u32, split_offset)
			     __field(u32, patch_offset)
			     __field(bool, write)
			     __field(u32, alloc)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->index = index;
			   __entry->id = id;
			   __entry->slot = slot;
			   __entry->split_offset = split_offset;
			   __entry->patch_offset = patch_offset;
			   __entry->write = write;
			   __entry->alloc = alloc;),
	    TP_printk("seq=%llu index=%u id=%llu slot=%u split=%u patch=%u write=%d alloc=%u",
		      __entry->seq, __entry->index, __entry->id, __entry->slot,
		      __entry->split_offset, __entry->patch_offset,
		      __entry->write, __entry->alloc)
);

TRACE_EVENT(qgpu_submit_end,
	    TP_PROTO(u64 seq, int ret, u32 portions),
	    TP_ARGS(seq, ret, portions),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(int, ret)
			     __field(u32, portions)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->ret = ret;
			   __entry->portions = portions;),
	    TP_printk("seq=%llu ret=%d portions=%u", __entry->seq,
		      __entry->ret, __entry->portions)
);

/* An allocation a queued portion uses (pinned for it), read or written */
TRACE_EVENT(qgpu_portion_use,
	    TP_PROTO(u64 seq, u32 portion, u64 id, bool write),
	    TP_ARGS(seq, portion, id, write),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u32, portion)
			     __field(u64, id)
			     __field(bool, write)),
	    TP_fast_assign(__entry->seq = seq;
			   __entry->portion = portion;
			   __entry->id = id;
			   __entry->write = write;),
	    TP_printk("seq=%llu portion=%u id=%llu write=%d", __entry->seq,
		      __entry->portion, __entry->id, __entry->write)
);

/*
 * A page table (4 KiB of VRAM, never evicted; @pt: its id, a per-device
 * sequence number) taken (@ret 0) or given back; @vidmem: the id of the
 * video memory whose usage it counts in (0: the paging process's)
 */
TRACE_EVENT(qgpu_pt_alloc,
	    TP_PROTO(u64 pt, u32 level, u32 seg, u64 start, int ret,
		     u64 vidmem),
	    TP_ARGS(pt, level, seg, start, ret, vidmem),
	    TP_STRUCT__entry(__field(u64, pt)
			     __field(u32, level)
			     __field(u32, seg)
			     __field(u64, start)
			     __field(int, ret)
			     __field(u64, vidmem)),
	    TP_fast_assign(__entry->pt = pt;
			   __entry->level = level;
			   __entry->seg = seg;
			   __entry->start = start;
			   __entry->ret = ret;
			   __entry->vidmem = vidmem;),
	    TP_printk("pt=%llu level=%u segment=%u start=%llu ret=%d vidmem=%llu",
		      __entry->pt, __entry->level, __entry->seg,
		      __entry->start, __entry->ret, __entry->vidmem)
);

TRACE_EVENT(qgpu_pt_free,
	    TP_PROTO(u64 pt),
	    TP_ARGS(pt),
	    TP_STRUCT__entry(__field(u64, pt)),
	    TP_fast_assign(__entry->pt = pt;),
	    TP_printk("pt=%llu", __entry->pt)
);

/*
 * A snapshot of the memory manager's books (debugfs qgpu_trace_snapshot):
 * its counters and clocks, each segment, its ranges in address order, its
 * free ranges in drm_mm's hole-stack order (most recent first) and its
 * allocations in LRU order (least recent first). @features: what this
 * memory manager does that earlier ones did not (QGPU_MM_FEATURE_*), so
 * that a replay of its trace does the same.
 */
TRACE_EVENT(qgpu_snap_begin,
	    TP_PROTO(u32 tag, u64 to_vram, u64 from_vram, u64 vram_to_vram,
		     u64 filled, u64 evictions, u64 lru_tick, u32 policy,
		     u64 next_id, u32 features, u32 budget),
	    TP_ARGS(tag, to_vram, from_vram, vram_to_vram, filled, evictions,
		    lru_tick, policy, next_id, features, budget),
	    TP_STRUCT__entry(__field(u32, tag)
			     __field(u64, to_vram)
			     __field(u64, from_vram)
			     __field(u64, vram_to_vram)
			     __field(u64, filled)
			     __field(u64, evictions)
			     __field(u64, lru_tick)
			     __field(u32, policy)
			     __field(u64, next_id)
			     __field(u32, features)
			     __field(u32, budget)),
	    TP_fast_assign(__entry->tag = tag;
			   __entry->to_vram = to_vram;
			   __entry->from_vram = from_vram;
			   __entry->vram_to_vram = vram_to_vram;
			   __entry->filled = filled;
			   __entry->evictions = evictions;
			   __entry->lru_tick = lru_tick;
			   __entry->policy = policy;
			   __entry->next_id = next_id;
			   __entry->features = features;
			   __entry->budget = budget;),
	    TP_printk("tag=%u to_vram=%llu from_vram=%llu vram_to_vram=%llu filled=%llu evictions=%llu lru_tick=%llu policy=%u next_id=%llu features=%#x budget=%u",
		      __entry->tag, __entry->to_vram, __entry->from_vram,
		      __entry->vram_to_vram, __entry->filled,
		      __entry->evictions, __entry->lru_tick, __entry->policy,
		      __entry->next_id, __entry->features, __entry->budget)
);

TRACE_EVENT(qgpu_snap_seg,
	    TP_PROTO(u32 seg, u64 size, u64 reserved, u64 used,
		     u32 allocations),
	    TP_ARGS(seg, size, reserved, used, allocations),
	    TP_STRUCT__entry(__field(u32, seg)
			     __field(u64, size)
			     __field(u64, reserved)
			     __field(u64, used)
			     __field(u32, allocations)),
	    TP_fast_assign(__entry->seg = seg;
			   __entry->size = size;
			   __entry->reserved = reserved;
			   __entry->used = used;
			   __entry->allocations = allocations;),
	    TP_printk("segment=%u size=%llu reserved=%llu used=%llu allocations=%u",
		      __entry->seg, __entry->size, __entry->reserved,
		      __entry->used, __entry->allocations)
);

/* @kind: 0 an allocation (@id), 1 a page table (@id), 2 the paging buffer */
TRACE_EVENT(qgpu_snap_node,
	    TP_PROTO(u32 seg, u64 start, u64 size, u32 kind, u64 id,
		     u64 vidmem),
	    TP_ARGS(seg, start, size, kind, id, vidmem),
	    TP_STRUCT__entry(__field(u32, seg)
			     __field(u64, start)
			     __field(u64, size)
			     __field(u32, kind)
			     __field(u64, id)
			     __field(u64, vidmem)),
	    TP_fast_assign(__entry->seg = seg;
			   __entry->start = start;
			   __entry->size = size;
			   __entry->kind = kind;
			   __entry->id = id;
			   __entry->vidmem = vidmem;),
	    TP_printk("segment=%u start=%llu size=%llu kind=%u id=%llu vidmem=%llu",
		      __entry->seg, __entry->start, __entry->size,
		      __entry->kind, __entry->id, __entry->vidmem)
);

TRACE_EVENT(qgpu_snap_hole,
	    TP_PROTO(u32 seg, u64 start, u64 size),
	    TP_ARGS(seg, start, size),
	    TP_STRUCT__entry(__field(u32, seg)
			     __field(u64, start)
			     __field(u64, size)),
	    TP_fast_assign(__entry->seg = seg;
			   __entry->start = start;
			   __entry->size = size;),
	    TP_printk("segment=%u start=%llu size=%llu", __entry->seg,
		      __entry->start, __entry->size)
);

/*
 * @state: bit 0 pristine, bit 1 destroyed (dead), bit 2 imported;
 * @priority: its allocation priority
 */
TRACE_EVENT(qgpu_snap_bo,
	    TP_PROTO(u64 id, u64 size, u32 mask, u32 flags, u32 preferred,
		     u32 seg, u64 start, u64 tick, u32 state, u32 locks,
		     u32 attachments, u32 priority),
	    TP_ARGS(id, size, mask, flags, preferred, seg, start, tick, state,
		    locks, attachments, priority),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u64, size)
			     __field(u32, mask)
			     __field(u32, flags)
			     __field(u32, preferred)
			     __field(u32, seg)
			     __field(u64, start)
			     __field(u64, tick)
			     __field(u32, state)
			     __field(u32, locks)
			     __field(u32, attachments)
			     __field(u32, priority)),
	    TP_fast_assign(__entry->id = id;
			   __entry->size = size;
			   __entry->mask = mask;
			   __entry->flags = flags;
			   __entry->preferred = preferred;
			   __entry->seg = seg;
			   __entry->start = start;
			   __entry->tick = tick;
			   __entry->state = state;
			   __entry->locks = locks;
			   __entry->attachments = attachments;
			   __entry->priority = priority;),
	    TP_printk("id=%llu size=%llu segments=%#x flags=%#x preferred=%#x segment=%u start=%llu tick=%llu state=%#x locks=%u attachments=%u priority=%#x",
		      __entry->id, __entry->size, __entry->mask,
		      __entry->flags, __entry->preferred, __entry->seg,
		      __entry->start, __entry->tick, __entry->state,
		      __entry->locks, __entry->attachments, __entry->priority)
);

/*
 * More of an allocation of the snapshot: @offer, its offer priority while
 * offered (0: not offered); @mappings, its mappings in GPU address spaces;
 * @evicted, an eviction for room put it where it is (it may migrate back);
 * @owner, the video memory its residency counts in (&qgpu_vidmem.id; 0:
 * none)
 */
TRACE_EVENT(qgpu_snap_bo_state,
	    TP_PROTO(u64 id, u32 offer, u32 mappings, bool evicted, u64 owner),
	    TP_ARGS(id, offer, mappings, evicted, owner),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u32, offer)
			     __field(u32, mappings)
			     __field(bool, evicted)
			     __field(u64, owner)),
	    TP_fast_assign(__entry->id = id;
			   __entry->offer = offer;
			   __entry->mappings = mappings;
			   __entry->evicted = evicted;
			   __entry->owner = owner;),
	    TP_printk("id=%llu offer=%u mappings=%u evicted=%d owner=%llu",
		      __entry->id, __entry->offer, __entry->mappings,
		      __entry->evicted, __entry->owner)
);

TRACE_EVENT(qgpu_snap_end,
	    TP_PROTO(u32 tag),
	    TP_ARGS(tag),
	    TP_STRUCT__entry(__field(u32, tag)),
	    TP_fast_assign(__entry->tag = tag;),
	    TP_printk("tag=%u", __entry->tag)
);

#endif /* QGPU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE qgpu_trace
#include <trace/define_trace.h>
