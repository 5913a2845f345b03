/* SPDX-License-Identifier: MIT */
/*
 * qgpu user-space API.
 *
 * Conventions: every struct is naturally aligned with explicit padding; every
 * pad and reserved field must be zero (EINVAL otherwise); every flags field
 * rejects unknown bits with EINVAL; user pointers are __u64.
 */
#ifndef QGPU_DRM_H
#define QGPU_DRM_H

/**
 * DOC: qgpu memory rules
 *
 * Allocations (GEM objects) live in segments (&QGPU_QUERY_SEGMENTS) or in
 * system memory; the kernel moves them with paging buffers on the paging
 * engine. The rules a user-mode driver can rely on:
 *
 * - Deferred destruction: closing the last handle of an allocation never
 *   waits for the GPU. Work already queued may still use it; its segment
 *   range and pages are released once that work is done (until then the
 *   range may already be reused, behind that work).
 * - CPU access follows Lock2 ("Allocation Usage Tracking", WDK): a CPU
 *   mapping follows its allocation wherever it moves. An allocation
 *   created without %QGPU_GEM_CPU_ACCESS is never mapped onto VRAM: when
 *   one of its mappings is touched while it is in VRAM, it is first moved
 *   to the aperture segment or system memory, whichever path created the
 *   mapping. A CPU fault waits only for a move of the allocation in
 *   flight, never for rendering that uses it; synchronising CPU access
 *   with rendering is the user-mode driver's job (syncobjs). A mapping
 *   already valid never waits.
 * - Host-aperture pages are lent to CPU mappings of non-visible VRAM and
 *   taken back from the least recently used mapping when needed.
 * - Implicit synchronisation: every allocation's GPU work is in its GEM
 *   object's reservation object (its dma-buf's, once exported). A DMA
 *   buffer's fence goes in as a write for allocation-list entries with
 *   %QGPU_ALLOC_WRITE and as a read otherwise; it waits for earlier writes
 *   (and, if it writes, reads) by anyone, including fences another driver
 *   or a sync_file (DMA_BUF_IOCTL_IMPORT_SYNC_FILE) put there. Moves are
 *   kernel-usage fences. poll() and DMA_BUF_IOCTL_EXPORT_SYNC_FILE on the
 *   dma-buf see all of it. The paging engine, which every process shares,
 *   waits only for qgpu's own fences: a foreign fence holds back the DMA
 *   buffers that use the allocation, never another process's paging.
 * - PRIME: an exported allocation can be passed to another process and
 *   imported back into qgpu (the same allocation, wherever it resides),
 *   and mmapped through the dma-buf (the mapping follows moves like any
 *   other). Another device may attach to it only if its supported segment
 *   set has the aperture segment (EINVAL otherwise): it is given the
 *   allocation's system pages, and while any device is attached the
 *   allocation stays in system memory or the aperture segment (a request
 *   for VRAM fails with EBUSY). A dma-buf of another device imported into
 *   qgpu stays the exporter's memory: it is only ever mapped into the
 *   aperture segment, never copied into VRAM (its supported segment set is
 *   the aperture segment alone), and its CPU mappings are the exporter's.
 * - Submission (&DRM_IOCTL_QGPU_SUBMIT) follows "Splitting a DMA Buffer"
 *   (WDK). The kernel parses the whole DMA buffer; every split offset must
 *   be the start of a command it parsed. The walk over the patch-location
 *   list is planned completely before anything is queued: when it fails
 *   (ENOSPC: some split point's allocations cannot be resident at once;
 *   EBUSY: a locked allocation may not go where it must) nothing ran,
 *   nothing moved and no syncobj was signalled. Between split portions the
 *   device's slot table keeps only the bindings of allocations the kernel
 *   keeps in place; every other slot is unbound, and using it faults.
 */

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_QGPU_QUERY		0x00
#define DRM_QGPU_GEM_CREATE	0x01
#define DRM_QGPU_GEM_LOCK	0x02
#define DRM_QGPU_GEM_UNLOCK	0x03
#define DRM_QGPU_GEM_RESIDE	0x04
#define DRM_QGPU_GEM_INFO	0x05
#define DRM_QGPU_SUBMIT		0x06
#define DRM_QGPU_CTX_CREATE	0x07
#define DRM_QGPU_CTX_DESTROY	0x08

/**
 * enum qgpu_query_type - what &struct drm_qgpu_query asks for
 * @QGPU_QUERY_DEVICE: &struct drm_qgpu_device_info.
 * @QGPU_QUERY_SEGMENTS: an array of &struct drm_qgpu_segment, one per
 *	segment, ordered by id. The two-call pattern: call first with
 *	&drm_qgpu_query.ptr zero to learn count and size, then again with a
 *	buffer of at least that size.
 * @QGPU_QUERY_STATS: &struct drm_qgpu_stats (global counters) followed by
 *	an array of &struct drm_qgpu_segment_stats, one per segment.
 * @QGPU_QUERY_FILE_STATS: &struct drm_qgpu_stats for the calling file only
 *	(no segment array): submissions, split portions, and the paging
 *	(paging buffers, bytes moved, evictions) its submits and
 *	%DRM_IOCTL_QGPU_GEM_RESIDE calls caused. Allocation counts stay 0.
 * @QGPU_QUERY_CONTEXT: &struct drm_qgpu_context_status for the context
 *	given in &drm_qgpu_query.arg.
 */
enum qgpu_query_type {
	QGPU_QUERY_DEVICE = 1,
	QGPU_QUERY_SEGMENTS = 2,
	QGPU_QUERY_STATS = 3,
	QGPU_QUERY_FILE_STATS = 4,
	QGPU_QUERY_CONTEXT = 5,
};

/**
 * struct drm_qgpu_query - read device information (two-call pattern)
 * @type: one of &enum qgpu_query_type.
 * @arg: type-specific argument (the context id for %QGPU_QUERY_CONTEXT,
 *	otherwise must be zero).
 * @count: out: number of array elements the answer holds (1 for single
 *	structs).
 * @size: in: bytes available at @ptr; out: bytes the full answer needs.
 *	When @ptr is zero nothing is copied and only @count and @size are
 *	returned. When @size is smaller than needed the call fails with
 *	ENOSPC, copies nothing and reports the needed @size.
 * @ptr: user pointer to the output buffer, or zero.
 */
struct drm_qgpu_query {
	__u32 type;
	__u32 arg;
	__u32 count;
	__u32 size;
	__u64 ptr;
};

/* Capability bits reported in &drm_qgpu_device_info.caps */
#define QGPU_INFO_CAP_FENCE		(1u << 0)
#define QGPU_INFO_CAP_GART		(1u << 1)
#define QGPU_INFO_CAP_HOST_APERTURE	(1u << 2)
#define QGPU_INFO_CAP_PAGING		(1u << 3)
#define QGPU_INFO_CAP_RENDER		(1u << 4)
/* Split portions of different contexts may interleave (slot tables saved) */
#define QGPU_INFO_CAP_CTX_SAVE		(1u << 5)

/**
 * struct drm_qgpu_device_info - identity and capabilities
 * @vendor_id: PCI vendor id.
 * @device_id: PCI device id.
 * @revision: PCI revision.
 * @version: device version register (major << 16 | minor).
 * @caps: QGPU_INFO_CAP_* bits (the device's capability register).
 * @num_engines: engines the device has (paging engine is engine 0).
 * @max_slots: MaxAllocationListSlotId: slots per context resource table.
 * @max_contexts: hardware contexts (slot tables) the device saves.
 * @vram_size: bytes of VRAM.
 * @visible_vram_size: bytes of VRAM the CPU can reach through BAR2.
 * @gart_size: bytes of the GART aperture range.
 * @host_aperture_size: bytes of the CPU host aperture (BAR4), 0 if none.
 * @paging_buffer_segment: PagingBufferSegmentId: segment holding the
 *	paging buffer.
 * @paging_buffer_size: PagingBufferSize in bytes.
 * @num_segments: number of segments (&QGPU_QUERY_SEGMENTS count).
 * @pad: zero.
 */
struct drm_qgpu_device_info {
	__u32 vendor_id;
	__u32 device_id;
	__u32 revision;
	__u32 version;
	__u32 caps;
	__u32 num_engines;
	__u32 max_slots;
	__u32 max_contexts;
	__u64 vram_size;
	__u64 visible_vram_size;
	__u64 gart_size;
	__u64 host_aperture_size;
	__u32 paging_buffer_segment;
	__u32 paging_buffer_size;
	__u32 num_segments;
	__u32 pad;
};

/* Segment ids: stable; absent segments are simply not reported. */
#define QGPU_SEG_SYSTEM		0	/* not a segment: not resident */
#define QGPU_SEG_VISIBLE	1	/* CPU-visible local VRAM */
#define QGPU_SEG_LOCAL		2	/* non-CPU-visible local VRAM */
#define QGPU_SEG_APERTURE	3	/* GART aperture over system pages */
#define QGPU_SEG_MAX		3
#define QGPU_SEG_MASK_ALL	((1u << QGPU_SEG_VISIBLE) | \
				 (1u << QGPU_SEG_LOCAL) | \
				 (1u << QGPU_SEG_APERTURE))

/* Segment flags, after DXGK_SEGMENTFLAGS */
#define QGPU_SEGF_APERTURE		(1u << 0)  /* aperture-space segment */
#define QGPU_SEGF_CPU_VISIBLE		(1u << 1)  /* CPU may map linearly */
#define QGPU_SEGF_CACHE_COHERENT	(1u << 2)  /* snooped by the device */
#define QGPU_SEGF_USE_BANKING		(1u << 3)  /* never set by qgpu */
#define QGPU_SEGF_CPU_HOST_APERTURE	(1u << 4)  /* reachable via host aperture */
#define QGPU_SEGF_POPULATED_FROM_SYS	(1u << 5)  /* aperture: system pages */
#define QGPU_SEGF_PAGING_BUFFER		(1u << 6)  /* holds the paging buffer */

/**
 * struct drm_qgpu_segment - a segment descriptor (DXGK_SEGMENTDESCRIPTOR)
 * @id: segment id, one of QGPU_SEG_*.
 * @flags: QGPU_SEGF_* bits.
 * @base: GPU physical base address of the segment.
 * @size: bytes in the segment.
 * @cpu_bar_offset: for CPU-visible segments, the offset of the segment's
 *	first byte in BAR2 (linear mapping); otherwise zero.
 * @reserved_size: bytes the driver reserved for itself (paging buffer).
 */
struct drm_qgpu_segment {
	__u32 id;
	__u32 flags;
	__u64 base;
	__u64 size;
	__u64 cpu_bar_offset;
	__u64 reserved_size;
};

/**
 * struct drm_qgpu_segment_stats - usage of one segment
 * @id: segment id.
 * @allocations: allocations resident in the segment.
 * @size: bytes in the segment.
 * @used: bytes in use (allocations plus driver reservations).
 */
struct drm_qgpu_segment_stats {
	__u32 id;
	__u32 allocations;
	__u64 size;
	__u64 used;
};

/**
 * struct drm_qgpu_stats - memory-manager counters (monotonic unless noted)
 * @allocations: live allocations (current value).
 * @allocated_bytes: bytes of live allocations (current value).
 * @bytes_to_vram: bytes paged into VRAM.
 * @bytes_from_vram: bytes paged out of VRAM.
 * @bytes_vram_to_vram: bytes moved within VRAM.
 * @bytes_filled: bytes written by FILL commands.
 * @evictions: allocations evicted from a segment.
 * @aperture_maps: MAP_APERTURE_SEGMENT operations.
 * @aperture_unmaps: UNMAP_APERTURE_SEGMENT operations.
 * @hap_maps: CPU host aperture map operations.
 * @hap_unmaps: CPU host aperture unmap operations.
 * @paging_buffers: paging buffers submitted to the paging engine.
 * @submissions: submit ioctls that queued work.
 * @split_portions: DMA-buffer portions executed (1 per unsplit submit).
 * @faults: device faults seen.
 * @resets: engine resets after a timeout.
 */
struct drm_qgpu_stats {
	__u64 allocations;
	__u64 allocated_bytes;
	__u64 bytes_to_vram;
	__u64 bytes_from_vram;
	__u64 bytes_vram_to_vram;
	__u64 bytes_filled;
	__u64 evictions;
	__u64 aperture_maps;
	__u64 aperture_unmaps;
	__u64 hap_maps;
	__u64 hap_unmaps;
	__u64 paging_buffers;
	__u64 submissions;
	__u64 split_portions;
	__u64 faults;
	__u64 resets;
};

/* &drm_qgpu_gem_create.flags */
#define QGPU_GEM_CPU_ACCESS	(1u << 0)  /* allocation will be CPU-locked */
#define QGPU_GEM_CREATE_FLAGS	QGPU_GEM_CPU_ACCESS

/**
 * struct drm_qgpu_gem_create - create an allocation
 * @size: bytes, > 0; rounded up to the page size.
 * @segment_mask: supported segment set: bit (1 << id) per QGPU_SEG_* id;
 *	must be non-empty and only name segments the device has.
 * @flags: QGPU_GEM_* flags.
 * @preferred: ordered preferred segment ids, one per byte, least
 *	significant byte first, terminated by a zero byte; each must be in
 *	@segment_mask. Zero means "in the order of @segment_mask's ids".
 * @handle: out: GEM handle.
 */
struct drm_qgpu_gem_create {
	__u64 size;
	__u32 segment_mask;
	__u32 flags;
	__u32 preferred;
	__u32 handle;
};

/**
 * struct drm_qgpu_gem_lock - Lock2: set up an allocation for CPU access
 * @handle: GEM handle.
 * @flags: must be zero (Lock2 has no flags yet).
 * @offset: out: fake offset to pass to mmap() on the DRM fd. The mapping
 *	follows the allocation wherever it moves.
 *
 * An allocation created without %QGPU_GEM_CPU_ACCESS is locked through
 * the aperture segment (it is moved there, or to system memory) or while
 * it is in system memory; when it is in VRAM and its supported set lacks
 * the aperture segment, locking fails with EBUSY (evict it to system
 * memory first). While locked it is not committed to a VRAM segment.
 * A CPU-accessible allocation carries no placement restriction.
 *
 * Errors: EINVAL (flags), ENOENT (handle), EBUSY (above), EOVERFLOW (lock
 * count).
 */
struct drm_qgpu_gem_lock {
	__u32 handle;
	__u32 flags;
	__u64 offset;
};

/**
 * struct drm_qgpu_gem_unlock - end a Lock2
 * @handle: GEM handle.
 * @flags: must be zero.
 */
struct drm_qgpu_gem_unlock {
	__u32 handle;
	__u32 flags;
};

/* &drm_qgpu_gem_reside.op */
#define QGPU_RESIDE_MAKE_RESIDENT	1  /* commit to @segment (0: preferred) */
#define QGPU_RESIDE_EVICT		2  /* evict (aperture if allowed, else system) */
#define QGPU_RESIDE_EVICT_SYSTEM	3  /* evict to system memory */

/**
 * struct drm_qgpu_gem_reside - move an allocation (test and tool interface)
 * @handle: GEM handle.
 * @op: QGPU_RESIDE_* operation.
 * @segment: in: target segment for MAKE_RESIDENT (0 = by preference);
 *	out: the segment the allocation is in afterwards (0 = system).
 * @flags: must be zero.
 */
struct drm_qgpu_gem_reside {
	__u32 handle;
	__u32 op;
	__u32 segment;
	__u32 flags;
};

/**
 * struct drm_qgpu_gem_info - where an allocation is
 * @handle: GEM handle.
 * @segment: out: segment id, or 0 when only in system memory.
 * @size: out: bytes.
 * @gpu_addr: out: GPU physical address when resident, else 0.
 * @segment_mask: out: supported segment set.
 * @lock_count: out: outstanding Lock2 calls.
 * @cpu_path: out: how a CPU mapping reaches it now: 0 none (not mapped
 *	or not resident there), 1 BAR2 linear, 2 host aperture, 3 system pages.
 * @flags: out: QGPU_GEM_* creation flags.
 * @pad: zero.
 */
struct drm_qgpu_gem_info {
	__u32 handle;
	__u32 segment;
	__u64 size;
	__u64 gpu_addr;
	__u32 segment_mask;
	__u32 lock_count;
	__u32 cpu_path;
	__u32 flags;
};

/*
 * &drm_qgpu_alloc_entry.flags. QGPU_ALLOC_WRITE declares that the DMA
 * buffer writes the allocation: its fence goes into the allocation's
 * reservation object as a write (else as a read), which is what implicit
 * synchronisation with other users of the allocation follows. The memory
 * manager never relies on it for the content: it moves an allocation only
 * after all of qgpu's work on it, whatever the flags said.
 */
#define QGPU_ALLOC_WRITE	(1u << 0)

/**
 * struct drm_qgpu_alloc_entry - one allocation-list entry
 * @handle: GEM handle, or 0 for a NULL allocation (unbinds its slots).
 * @flags: QGPU_ALLOC_* flags.
 */
struct drm_qgpu_alloc_entry {
	__u32 handle;
	__u32 flags;
};

/**
 * struct drm_qgpu_patch_entry - one patch-location list entry
 * @alloc_index: index into the allocation list.
 * @slot: resource-table row (SlotId), < max_slots.
 * @alloc_offset: byte offset into the allocation added to its address.
 * @patch_offset: byte offset in the DMA buffer of the 64-bit address to
 *	patch (the address field of a BIND); 4-byte aligned.
 * @split_offset: byte offset in the DMA buffer from which the allocation
 *	is required; entries are non-decreasing in @split_offset.
 * @pad: zero.
 */
struct drm_qgpu_patch_entry {
	__u32 alloc_index;
	__u32 slot;
	__u64 alloc_offset;
	__u32 patch_offset;
	__u32 split_offset;
	__u32 pad[2];
};

/* &drm_qgpu_sync_entry.flags: none defined yet */

/**
 * struct drm_qgpu_sync_entry - a syncobj to wait on or signal
 * @handle: syncobj handle.
 * @flags: must be zero.
 * @point: timeline point, or 0 for a binary syncobj.
 */
struct drm_qgpu_sync_entry {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

#define QGPU_MAX_DMA_SIZE	(1u << 20)
#define QGPU_MAX_ALLOCS		4096
#define QGPU_MAX_PATCHES	16384
#define QGPU_MAX_SYNCS		64
/* Distinct split offsets in one patch-location list (E2BIG beyond) */
#define QGPU_MAX_SPLIT_POINTS	4096

/**
 * struct drm_qgpu_submit - queue a DMA buffer on a context
 * @dma: user pointer to the DMA buffer (QGPU_DMA_* commands).
 * @dma_size: bytes, multiple of 4, 4..%QGPU_MAX_DMA_SIZE.
 * @ctx: context id from &drm_qgpu_ctx_create.
 * @allocs: user pointer to &struct drm_qgpu_alloc_entry array.
 * @num_allocs: entries in @allocs, <= %QGPU_MAX_ALLOCS.
 * @num_patches: entries in @patches, <= %QGPU_MAX_PATCHES.
 * @patches: user pointer to &struct drm_qgpu_patch_entry array.
 * @in_syncs: user pointer to &struct drm_qgpu_sync_entry array to wait on.
 * @out_syncs: user pointer to &struct drm_qgpu_sync_entry array signalled
 *	when the whole buffer (its last portion) completes.
 * @num_in_syncs: entries in @in_syncs, <= %QGPU_MAX_SYNCS.
 * @num_out_syncs: entries in @out_syncs, <= %QGPU_MAX_SYNCS.
 * @flags: must be zero.
 * @portions: out: number of split portions the buffer was queued as.
 *
 * Every split offset of @patches must be the byte offset of a command the
 * kernel's parse of the buffer reached, at or before the BIND it belongs
 * to; at most %QGPU_MAX_SPLIT_POINTS distinct split offsets.
 *
 * Errors, after which nothing was queued, moved or signalled: EINVAL (a
 * field, a command, a patch entry, a split offset), ENOENT (context,
 * handle or syncobj), E2BIG (too many split points), EFAULT, ECANCELED
 * (the context is lost), ENOSPC (some split point's allocations cannot be
 * resident at once), EBUSY (a locked allocation may not be placed where
 * it must), EINTR. ENOMEM usually means the same; when the kernel runs out
 * of memory while queueing a planned buffer, the portions queued before
 * run and @portions says how many.
 */
struct drm_qgpu_submit {
	__u64 dma;
	__u32 dma_size;
	__u32 ctx;
	__u64 allocs;
	__u32 num_allocs;
	__u32 num_patches;
	__u64 patches;
	__u64 in_syncs;
	__u64 out_syncs;
	__u32 num_in_syncs;
	__u32 num_out_syncs;
	__u32 flags;
	__u32 portions;
};

/**
 * struct drm_qgpu_ctx_create - create a GPU context
 * @flags: must be zero.
 * @ctx: out: context id (>= 1).
 */
struct drm_qgpu_ctx_create {
	__u32 flags;
	__u32 ctx;
};

/**
 * struct drm_qgpu_ctx_destroy - destroy a GPU context
 * @ctx: context id.
 * @pad: zero.
 */
struct drm_qgpu_ctx_destroy {
	__u32 ctx;
	__u32 pad;
};

/* &drm_qgpu_context_status.state */
#define QGPU_CTX_OK		0
#define QGPU_CTX_LOST_HANG	1  /* a job timed out; engine was reset */
#define QGPU_CTX_LOST_FAULT	2  /* a DMA buffer faulted */

/**
 * struct drm_qgpu_context_status - a context's health (QGPU_QUERY_CONTEXT)
 * @state: QGPU_CTX_* state; a lost context's submits fail with ECANCELED.
 * @fault_reason: device fault reason (QGPU_FAULT_* of hw-spec) if faulted.
 * @fault_offset: DMA-buffer byte offset of the faulting command.
 * @submissions: submits on this context.
 * @portions: split portions queued on this context.
 * @pad: zero.
 * @fault_addr: faulting GPU address.
 */
struct drm_qgpu_context_status {
	__u32 state;
	__u32 fault_reason;
	__u32 fault_offset;
	__u32 pad;
	__u64 submissions;
	__u64 portions;
	__u64 fault_addr;
};

#define DRM_IOCTL_QGPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_QUERY, struct drm_qgpu_query)
#define DRM_IOCTL_QGPU_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_CREATE, struct drm_qgpu_gem_create)
#define DRM_IOCTL_QGPU_GEM_LOCK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_LOCK, struct drm_qgpu_gem_lock)
#define DRM_IOCTL_QGPU_GEM_UNLOCK \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_GEM_UNLOCK, struct drm_qgpu_gem_unlock)
#define DRM_IOCTL_QGPU_GEM_RESIDE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_RESIDE, struct drm_qgpu_gem_reside)
#define DRM_IOCTL_QGPU_GEM_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_GEM_INFO, struct drm_qgpu_gem_info)
#define DRM_IOCTL_QGPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_SUBMIT, struct drm_qgpu_submit)
#define DRM_IOCTL_QGPU_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_QGPU_CTX_CREATE, struct drm_qgpu_ctx_create)
#define DRM_IOCTL_QGPU_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_QGPU_CTX_DESTROY, struct drm_qgpu_ctx_destroy)

#if defined(__cplusplus)
}
#endif

#endif /* QGPU_DRM_H */
